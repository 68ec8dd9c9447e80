#include "solver/train/checkpoint.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <fstream>
#include <sstream>

#include "solver/output/output.hpp"

namespace rbfpde {
namespace {

// "RBFCKPT" and the format's digit: 1 (RBF only, no model field), 2 (no restart count), 3 (no
// batch coefficients), 4 (no damping history), 5 (no monitor state), 6.
constexpr char kMagic[7] = {'R', 'B', 'F', 'C', 'K', 'P', 'T'};
constexpr char kFormat = '6';

// What must match between the run that wrote a checkpoint and the run resuming it: everything
// but the stopping rules (the MLP's L-BFGS iterations and varpro's restarts among them),
// reporting, backend and where the files go.
std::string resume_identity(const Config& config) {
  Config c = config;
  c.file.clear();
  c.training.max_cycles = 1;
  c.training.tolerance = 0;
  c.training.time_limit = 0;
  c.training.lbfgs_iterations = 0;
  c.training.restarts = 0;
  c.output.report_every = 1;
  c.output.snapshot_every = 0;
  c.output.pictures = true;
  c.output.directory = "-";
  c.compute.backend = "auto";
  return dump_config(c);
}

class Writer {
 public:
  template <class V>
  void put(const V& v) {
    const char* p = reinterpret_cast<const char*>(&v);
    bytes_.append(p, sizeof v);
  }
  void put_string(const std::string& s) {
    put<std::uint64_t>(s.size());
    bytes_.append(s);
  }
  template <class V>
  void put_vector(const std::vector<V>& v) {
    put<std::uint64_t>(v.size());
    if (!v.empty()) bytes_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(V));
  }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

class Reader {
 public:
  Reader(std::string bytes, std::string file) : bytes_(std::move(bytes)), file_(std::move(file)) {}
  template <class V>
  V get() {
    V v;
    need(sizeof v);
    std::memcpy(&v, bytes_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  std::string get_string() {
    const auto n = get<std::uint64_t>();
    need(n);
    std::string s = bytes_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  template <class V>
  std::vector<V> get_vector() {
    const auto n = get<std::uint64_t>();
    if (n > bytes_.size()) torn();
    need(n * sizeof(V));
    std::vector<V> v(n);
    if (n > 0) std::memcpy(v.data(), bytes_.data() + pos_, n * sizeof(V));  // data() may be null
    pos_ += n * sizeof(V);
    return v;
  }
  bool done() const { return pos_ == bytes_.size(); }
  [[noreturn]] void torn() const {
    throw InputError(file_ + ": checkpoint is truncated or corrupt; start again without --resume");
  }

 private:
  void need(std::size_t n) const {
    if (pos_ + n > bytes_.size()) torn();
  }
  std::string bytes_;
  std::string file_;
  std::size_t pos_ = 0;
};

// Which model and scalar a state belongs to.
template <class State>
struct StateTraits;
template <class T>
struct StateTraits<TrainerState<T>> {
  using Scalar = T;
  static constexpr const char* model = "rbf";
};
template <class T>
struct StateTraits<MlpTrainerState<T>> {
  using Scalar = T;
  static constexpr const char* model = "mlp";
};

void put_rng(Writer& w, const Rng& rng) {
  std::ostringstream text;
  text << rng;
  w.put_string(text.str());
}

void get_rng(Reader& r, Rng& rng) {
  std::istringstream text(r.get_string());
  text >> rng;
  if (!text) r.torn();
}

void put_batch(Writer& w, const CollocationBatch& b);
void get_batch(Reader& r, CollocationBatch& b, char format);

// The part of a state that differs between ranks: the random engine and the batch.
template <class State>
std::string rank_part(const State& s) {
  Writer w;
  put_rng(w, s.rng);
  put_batch(w, s.batch);
  return w.bytes();
}

template <class State>
void set_rank_part(State& s, const std::string& part, const std::string& file, char format) {
  Reader r(part, file);
  get_rng(r, s.rng);
  get_batch(r, s.batch, format);
  if (!r.done()) r.torn();
}

// The batch with its rows' coefficients as trained on (a batch drawn on the device has the
// coefficients the device computed, which may differ from the host's in the last bit).
void put_batch(Writer& w, const CollocationBatch& b) {
  w.put<std::int32_t>(b.dim);
  w.put_vector(b.interior);
  w.put_vector(b.f);
  w.put_vector(b.boundary);
  w.put_vector(b.normals);
  w.put_vector(b.p);
  w.put<std::int32_t>(b.space_dim);
  w.put_vector(b.a);
  w.put_vector(b.b);
  w.put_vector(b.c);
  w.put_vector(b.alpha);
  w.put_vector(b.beta);
}

// Formats before 4 have no coefficients: the trainers refill them from the problem on resume.
void get_batch(Reader& r, CollocationBatch& b, char format) {
  b.dim = r.get<std::int32_t>();
  b.interior = r.get_vector<double>();
  b.f = r.get_vector<double>();
  b.boundary = r.get_vector<double>();
  b.normals = r.get_vector<double>();
  b.p = r.get_vector<double>();
  if (format < '4') return;
  b.space_dim = r.get<std::int32_t>();
  b.a = r.get_vector<double>();
  b.b = r.get_vector<double>();
  b.c = r.get_vector<double>();
  b.alpha = r.get_vector<double>();
  b.beta = r.get_vector<double>();
}

// A model's parameters (a trainer's and the monitor's best): an MLP's flat vector, an RBF
// network's fields.
template <class T>
void put_params(Writer& w, const std::vector<T>& p) {
  w.put_vector(p);
}

template <class T>
void put_params(Writer& w, const RbfParameters<T>& p) {
  w.put<std::int32_t>(p.dim);
  w.put_vector(p.weights);
  w.put_vector(p.centres);
  w.put_vector(p.widths);
}

template <class T>
void get_params(Reader& r, std::vector<T>& p) {
  p = r.get_vector<T>();
}

template <class T>
void get_params(Reader& r, RbfParameters<T>& p) {
  p.dim = r.get<std::int32_t>();
  p.weights = r.get_vector<T>();
  p.centres = r.get_vector<T>();
  p.widths = r.get_vector<T>();
}

template <class T>
void put_state(Writer& w, const TrainerState<T>& s) {
  w.put<std::int64_t>(s.cycle);
  w.put<double>(s.mu);
  w.put<double>(s.reference_loss);
  w.put<std::int32_t>(s.exploded_cycles);
  w.put<double>(s.seconds);
  w.put<std::uint64_t>(s.batches);
  put_rng(w, s.rng);
  put_batch(w, s.batch);
  put_params(w, s.params);
  w.put<std::int32_t>(s.restarts);
  w.put<std::int32_t>(s.damping.alternations);
  w.put<std::int64_t>(s.damping.nielsen_since);
}

template <class T>
void get_state(Reader& r, TrainerState<T>& s, char format) {
  s.cycle = r.get<std::int64_t>();
  s.mu = r.get<double>();
  s.reference_loss = r.get<double>();
  s.exploded_cycles = r.get<std::int32_t>();
  s.seconds = r.get<double>();
  s.batches = r.get<std::uint64_t>();
  get_rng(r, s.rng);
  get_batch(r, s.batch, format);
  get_params(r, s.params);
  s.restarts = format >= '3' ? r.get<std::int32_t>() : 0;
  if (format >= '5') {
    s.damping.alternations = r.get<std::int32_t>();
    s.damping.nielsen_since = r.get<std::int64_t>();
  }
}

void put_vectors(Writer& w, const std::deque<std::vector<double>>& vs) {
  w.put<std::uint64_t>(vs.size());
  for (const auto& v : vs) w.put_vector(v);
}

std::deque<std::vector<double>> get_vectors(Reader& r) {
  const auto n = r.get<std::uint64_t>();
  std::deque<std::vector<double>> vs;
  for (std::uint64_t i = 0; i < n; ++i) vs.push_back(r.get_vector<double>());
  return vs;
}

template <class T>
void put_state(Writer& w, const MlpTrainerState<T>& s) {
  w.put<std::int64_t>(s.cycle);
  w.put<std::int64_t>(s.adam_steps);
  w.put<double>(s.reference_loss);
  w.put<std::int32_t>(s.exploded_cycles);
  w.put<double>(s.seconds);
  put_rng(w, s.rng);
  put_batch(w, s.batch);
  put_params(w, s.params);
  w.put_vector(s.adam_m);
  w.put_vector(s.adam_v);
  w.put_vector(s.last_good);
  w.put<std::uint8_t>(s.in_lbfgs ? 1 : 0);
  const LbfgsState& l = s.lbfgs;
  w.put_vector(l.x);
  w.put_vector(l.g);
  w.put<double>(l.f);
  put_vectors(w, l.s);
  put_vectors(w, l.y);
  w.put_vector(std::vector<double>(l.rho.begin(), l.rho.end()));
  w.put<std::int64_t>(l.evaluations);
  w.put<std::int64_t>(l.resets);
}

template <class T>
void get_state(Reader& r, MlpTrainerState<T>& s, char format) {
  s.cycle = r.get<std::int64_t>();
  s.adam_steps = r.get<std::int64_t>();
  s.reference_loss = r.get<double>();
  s.exploded_cycles = r.get<std::int32_t>();
  s.seconds = r.get<double>();
  get_rng(r, s.rng);
  get_batch(r, s.batch, format);
  get_params(r, s.params);
  s.adam_m = r.get_vector<T>();
  s.adam_v = r.get_vector<T>();
  s.last_good = r.get_vector<T>();
  s.in_lbfgs = r.get<std::uint8_t>() != 0;
  LbfgsState& l = s.lbfgs;
  l.x = r.get_vector<double>();
  l.g = r.get_vector<double>();
  l.f = r.get<double>();
  l.s = get_vectors(r);
  l.y = get_vectors(r);
  const std::vector<double> rho = r.get_vector<double>();
  l.rho.assign(rho.begin(), rho.end());
  l.evaluations = r.get<std::int64_t>();
  l.resets = r.get<std::int64_t>();
  // A file that passed the framing but holds mismatched sizes is as unusable as a torn one.
  const std::size_t n = s.params.size();
  if (s.adam_m.size() != n || s.adam_v.size() != n || s.last_good.size() != n ||
      l.s.size() != l.y.size() || l.s.size() != l.rho.size())
    r.torn();
}

void put_figures(Writer& w, const ValidationFigures& v) {
  w.put<double>(v.rms_interior);
  w.put<double>(v.rms_boundary);
  w.put<double>(v.loss);
  w.put<double>(v.max_abs_u);
  w.put<std::uint8_t>(v.finite ? 1 : 0);
}

void get_figures(Reader& r, ValidationFigures& v) {
  v.rms_interior = r.get<double>();
  v.rms_boundary = r.get<double>();
  v.loss = r.get<double>();
  v.max_abs_u = r.get<double>();
  v.finite = r.get<std::uint8_t>() != 0;
}

template <class Params>
void put_monitor(Writer& w, const MonitorState<Params>& m) {
  w.put<std::int64_t>(m.best_cycle);
  if (m.best_cycle >= 0) {
    put_params(w, m.best);
    put_figures(w, m.best_figures);
  }
  w.put<double>(m.plateau_loss);
  w.put<std::int64_t>(m.improved_cycle);
  w.put<double>(m.slow_loss);
  w.put<std::int64_t>(m.slow_cycle);
  w.put<std::uint8_t>(m.slow ? 1 : 0);
}

template <class Params>
void get_monitor(Reader& r, MonitorState<Params>& m) {
  m.best_cycle = r.get<std::int64_t>();
  if (m.best_cycle < -1) r.torn();
  if (m.best_cycle >= 0) {
    get_params(r, m.best);
    get_figures(r, m.best_figures);
  }
  m.plateau_loss = r.get<double>();
  m.improved_cycle = r.get<std::int64_t>();
  m.slow_loss = r.get<double>();
  m.slow_cycle = r.get<std::int64_t>();
  m.slow = r.get<std::uint8_t>() != 0;
}

// Refusals that depend on where the run stopped: none for the RBF network.
template <class T>
void check_resumable(const TrainerState<T>&, const Config&) {}

// The L-BFGS stage ends at the Adam steps it followed plus lbfgs.iterations: once it has begun, a
// changed max_cycles could only be ignored.
template <class T>
void check_resumable(const MlpTrainerState<T>& s, const Config& config) {
  if (s.in_lbfgs && s.adam_steps != config.training.max_cycles)
    throw InputError(SourceLoc{config.file, 0, 0}, "training.max_cycles",
                     "the checkpoint is in the L-BFGS stage, after " +
                         std::to_string(s.adam_steps) + " Adam steps: keep max_cycles at " +
                         std::to_string(s.adam_steps) + " (training.lbfgs.iterations may change)");
}

std::string model_name(const std::string& model) {
  return model == "mlp" ? "an MLP (model.type mlp)" : "an RBF network (model.type rbf)";
}

}  // namespace

std::filesystem::path checkpoint_path(const Config& config) {
  return std::filesystem::path(config.output.directory) / "checkpoint" / "state.bin";
}

template <class State>
void write_checkpoint(const std::filesystem::path& path, const Checkpoint<State>& ck) {
  using Traits = StateTraits<State>;
  Writer w;
  for (char c : kMagic) w.put(c);
  w.put(kFormat);
  w.put_string(Traits::model);
  w.put<std::uint32_t>(sizeof(typename Traits::Scalar));
  w.put_string(ck.config_dump);
  put_state(w, ck.state);
  w.put_vector(ck.history);
  w.put<std::uint64_t>(ck.snapshots.size());
  for (const auto& [t, name] : ck.snapshots) {
    w.put<double>(t);
    w.put_string(name);
  }
  put_monitor(w, ck.monitor);
  if (ck.ranks > 1) {
    w.put<std::uint32_t>(std::uint32_t(ck.ranks));
    for (const std::string& part : ck.rank_parts) w.put_string(part);
  }
  std::filesystem::create_directories(path.parent_path());
  write_file_atomic(path, w.bytes());
}

template <class State>
Checkpoint<State> read_checkpoint(const std::filesystem::path& path, const Config& config) {
  using Traits = StateTraits<State>;
  const std::string file = path.string();
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError(file + ": no checkpoint to resume from (run without --resume first)");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Reader r(std::move(bytes), file);
  for (char c : kMagic)
    if (r.get<char>() != c) throw InputError(file + ": not an rbfpde checkpoint");
  const char format = r.get<char>();
  if (format < '1' || format > kFormat)
    throw InputError(file + ": checkpoint format " + std::string(1, format) +
                     " is not one this rbfpde reads; start again without --resume");
  const std::string model = format == '1' ? "rbf" : r.get_string();
  if (model != "rbf" && model != "mlp") r.torn();
  if (model != Traits::model)
    throw InputError(file + ": the checkpoint is of " + model_name(model) +
                     ", the config's model is " + model_name(Traits::model) +
                     "; resume with the config that wrote it");
  const auto scalar = r.get<std::uint32_t>();
  if (scalar != sizeof(typename Traits::Scalar))
    throw InputError(SourceLoc{config.file, 0, 0}, "compute.precision",
                     std::string("the checkpoint was written in ") +
                         (scalar == 4 ? "float" : "double") + " precision; resume with the same");
  Checkpoint<State> ck;
  ck.format = format;
  ck.config_dump = r.get_string();
  if (ck.config_dump != resume_identity(config))
    throw InputError(SourceLoc{config.file, 0, 0}, "",
                     "the config differs from the run that wrote " + file +
                         " (only training.max_cycles, tolerance, time_limit, lbfgs.iterations, "
                         "restarts, output reporting and compute.backend may change on --resume)");
  get_state(r, ck.state, format);
  ck.history = r.get_vector<HistoryCsv::Row>();
  const auto n_snap = r.get<std::uint64_t>();
  for (std::uint64_t i = 0; i < n_snap; ++i) {
    const double t = r.get<double>();
    ck.snapshots.emplace_back(t, r.get_string());
  }
  if (format >= '6') get_monitor(r, ck.monitor);
  if (!r.done()) {
    ck.ranks = int(r.get<std::uint32_t>());
    if (ck.ranks < 2) r.torn();
    for (int k = 1; k < ck.ranks; ++k) ck.rank_parts.push_back(r.get_string());
    if (!r.done()) r.torn();
  }
  check_resumable(ck.state, config);
  return ck;
}

template <class State>
Checkpoint<State> new_checkpoint(const Config& config) {
  Checkpoint<State> ck;
  ck.config_dump = resume_identity(config);
  return ck;
}

template <class State>
Checkpoint<State> resume_run(const Config& config, RunOutput& output) {
  Checkpoint<State> ck = read_checkpoint<State>(checkpoint_path(config), config);
  Communicator& comm = output.comm();
  if (ck.ranks != comm.size())
    throw InputError(checkpoint_path(config).string() + ": the checkpoint was written by a run of " +
                     std::to_string(ck.ranks) + (ck.ranks == 1 ? " process" : " ranks") +
                     ", this one has " + std::to_string(comm.size()) +
                     "; resume with the same count (mpirun -np " + std::to_string(ck.ranks) + ")");
  if (comm.rank() > 0)
    set_rank_part(ck.state, ck.rank_parts[std::size_t(comm.rank() - 1)],
                  checkpoint_path(config).string(), ck.format);
  output.restore(ck.history, ck.snapshots);
  output.note("resuming " + config.name + " at cycle " + std::to_string(ck.state.cycle));
  return ck;
}

template <class State>
void save_run(const Config& config, const RunOutput& output, State state,
              MonitorState<decltype(State::params)> monitor) {
  Checkpoint<State> ck = new_checkpoint<State>(config);
  ck.state = std::move(state);
  ck.monitor = std::move(monitor);
  // The final row of a stopped run is not a regular report: a resumed run must not keep it.
  ck.history = output.history_rows();
  if (!ck.history.empty() && ck.history.back().cycle % std::max(1, config.output.report_every) != 0)
    ck.history.pop_back();
  ck.snapshots = output.snapshots();
  Communicator& comm = output.comm();
  if (comm.size() > 1) {
    const std::vector<std::string> parts = allgather_strings(comm, rank_part(ck.state));
    ck.ranks = comm.size();
    ck.rank_parts.assign(parts.begin() + 1, parts.end());
  }
  if (output.writes()) write_checkpoint(checkpoint_path(config), ck);
}

#define RBFPDE_CHECKPOINT_STATE(State)                                                            \
  template void write_checkpoint<State>(const std::filesystem::path&, const Checkpoint<State>&);  \
  template Checkpoint<State> read_checkpoint<State>(const std::filesystem::path&, const Config&); \
  template Checkpoint<State> new_checkpoint<State>(const Config&);                                \
  template Checkpoint<State> resume_run<State>(const Config&, RunOutput&);                        \
  template void save_run<State>(const Config&, const RunOutput&, State,                           \
                                MonitorState<decltype(State::params)>);
RBFPDE_CHECKPOINT_STATE(TrainerState<double>)
RBFPDE_CHECKPOINT_STATE(TrainerState<float>)
RBFPDE_CHECKPOINT_STATE(MlpTrainerState<double>)
RBFPDE_CHECKPOINT_STATE(MlpTrainerState<float>)
#undef RBFPDE_CHECKPOINT_STATE

}  // namespace rbfpde
