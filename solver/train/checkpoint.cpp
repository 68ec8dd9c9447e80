#include "solver/train/checkpoint.hpp"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

#include "solver/output/output.hpp"

namespace rbfpde {
namespace {

constexpr char kMagic[8] = {'R', 'B', 'F', 'C', 'K', 'P', 'T', '1'};

// What must match between the run that wrote a checkpoint and the run resuming it: everything
// but the stopping rules, reporting, backend and where the files go.
std::string resume_identity(const Config& config) {
  Config c = config;
  c.file.clear();
  c.training.max_cycles = 1;
  c.training.tolerance = 0;
  c.training.time_limit = 0;
  c.output.report_every = 1;
  c.output.snapshot_every = 0;
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
    bytes_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(V));
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
    std::memcpy(v.data(), bytes_.data() + pos_, n * sizeof(V));
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

}  // namespace

std::filesystem::path checkpoint_path(const Config& config) {
  return std::filesystem::path(config.output.directory) / "checkpoint" / "state.bin";
}

template <class T>
void write_checkpoint(const std::filesystem::path& path, const Checkpoint<T>& ck) {
  Writer w;
  for (char c : kMagic) w.put(c);
  w.put<std::uint32_t>(sizeof(T));
  w.put_string(ck.config_dump);
  const TrainerState<T>& s = ck.state;
  w.put<std::int64_t>(s.cycle);
  w.put<double>(s.mu);
  w.put<double>(s.reference_loss);
  w.put<std::int32_t>(s.exploded_cycles);
  w.put<double>(s.seconds);
  w.put<std::uint64_t>(s.batches);
  std::ostringstream rng;
  rng << s.rng;
  w.put_string(rng.str());
  w.put<std::int32_t>(s.batch.dim);
  w.put_vector(s.batch.interior);
  w.put_vector(s.batch.f);
  w.put_vector(s.batch.boundary);
  w.put_vector(s.batch.normals);
  w.put_vector(s.batch.p);
  w.put<std::int32_t>(s.params.dim);
  w.put_vector(s.params.weights);
  w.put_vector(s.params.centres);
  w.put_vector(s.params.widths);
  w.put_vector(ck.history);
  w.put<std::uint64_t>(ck.snapshots.size());
  for (const auto& [t, name] : ck.snapshots) {
    w.put<double>(t);
    w.put_string(name);
  }
  std::filesystem::create_directories(path.parent_path());
  write_file_atomic(path, w.bytes());
}

template <class T>
Checkpoint<T> read_checkpoint(const std::filesystem::path& path, const Config& config) {
  const std::string file = path.string();
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError(file + ": no checkpoint to resume from (run without --resume first)");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Reader r(std::move(bytes), file);
  for (char c : kMagic)
    if (r.get<char>() != c) throw InputError(file + ": not an rbfpde checkpoint");
  const auto scalar = r.get<std::uint32_t>();
  if (scalar != sizeof(T))
    throw InputError(SourceLoc{config.file, 0, 0}, "compute.precision",
                     std::string("the checkpoint was written in ") +
                         (scalar == 4 ? "float" : "double") + " precision; resume with the same");
  Checkpoint<T> ck;
  ck.config_dump = r.get_string();
  if (ck.config_dump != resume_identity(config))
    throw InputError(SourceLoc{config.file, 0, 0}, "",
                     "the config differs from the run that wrote " + file +
                         " (only training.max_cycles, tolerance, time_limit, output reporting and "
                         "compute.backend may change on --resume)");
  TrainerState<T>& s = ck.state;
  s.cycle = r.get<std::int64_t>();
  s.mu = r.get<double>();
  s.reference_loss = r.get<double>();
  s.exploded_cycles = r.get<std::int32_t>();
  s.seconds = r.get<double>();
  s.batches = r.get<std::uint64_t>();
  std::istringstream rng(r.get_string());
  rng >> s.rng;
  if (!rng) r.torn();
  s.batch.dim = r.get<std::int32_t>();
  s.batch.interior = r.get_vector<double>();
  s.batch.f = r.get_vector<double>();
  s.batch.boundary = r.get_vector<double>();
  s.batch.normals = r.get_vector<double>();
  s.batch.p = r.get_vector<double>();
  s.params.dim = r.get<std::int32_t>();
  s.params.weights = r.get_vector<T>();
  s.params.centres = r.get_vector<T>();
  s.params.widths = r.get_vector<T>();
  ck.history = r.get_vector<HistoryCsv::Row>();
  const auto n_snap = r.get<std::uint64_t>();
  for (std::uint64_t i = 0; i < n_snap; ++i) {
    const double t = r.get<double>();
    ck.snapshots.emplace_back(t, r.get_string());
  }
  if (!r.done()) r.torn();
  return ck;
}

template <class T>
Checkpoint<T> new_checkpoint(const Config& config) {
  Checkpoint<T> ck;
  ck.config_dump = resume_identity(config);
  return ck;
}

template void write_checkpoint<double>(const std::filesystem::path&, const Checkpoint<double>&);
template void write_checkpoint<float>(const std::filesystem::path&, const Checkpoint<float>&);
template Checkpoint<double> read_checkpoint<double>(const std::filesystem::path&, const Config&);
template Checkpoint<float> read_checkpoint<float>(const std::filesystem::path&, const Config&);
template Checkpoint<double> new_checkpoint<double>(const Config&);
template Checkpoint<float> new_checkpoint<float>(const Config&);

}  // namespace rbfpde
