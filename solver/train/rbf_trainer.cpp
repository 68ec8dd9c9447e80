#include "solver/train/rbf_trainer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <utility>

#include "solver/train/neuron_relocation.hpp"
#include "solver/train/rbf_model.hpp"
#include "solver/train/training_rules.hpp"

namespace rbfpde {
namespace {

using namespace training_rules;

// A centre this many bounding-box diagonals outside the box contributes exp(−10⁴) at most:
// only an exploded step puts it there.
constexpr double kCentreEscape = 100;

// A stall or a plateau restarts only while the loss is above this share of the data's own loss
// ½(mean f² + λ·mean p²), the loss of the zero network (a relative residual of 10⁻⁷ in double,
// 10⁻³ in float): below it the run is at or near its rounding floor, not in a poor local minimum.
template <class T>
constexpr double restart_loss_floor() {
  return sizeof(T) == sizeof(double) ? 1e-14 : 1e-6;
}

// Slow progress restarts only while the loss is above this multiple of restart_loss_floor (a
// relative residual of 10⁻⁶ in double): nearer the floor, slow progress is the approach to it.
constexpr double kSlowRestartFactor = 100;

// gdcg's learning rate is far too large when, at the end of training, some neuron's plain
// gradient step is over this many times the step limit (kernels/rbf_math.hpp): the limit, not the
// gradient, then moves that neuron (measured on the seed problem, seeds 1–10, 300 cycles: at most
// 0.19 at the rate of configs/poisson2d_seed.yaml, 30; 2e3 to 3e4 at 1e4; 3e7 to 4e8 at 1e8).
constexpr double kAbsurdStepRatio = 1e3;

// Candidate target points drawn per relocated neuron (so that the separation rule still finds
// enough where the largest residuals cluster).
constexpr int kCandidatesPerTarget = 20;

std::string format_e(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2e", v);
  return buf;
}

}  // namespace

template <class T>
RbfTrainer<T>::RbfTrainer(const Config& config, const Problem& problem, RbfBackend<T>& backend,
                          std::shared_ptr<Communicator> comm)
    : config_(config),
      problem_(problem),
      backend_(backend),
      comm_(comm ? std::move(comm) : serial_communicator()) {
  if (comm_->size() > 1 && backend_.draws_batches())
    throw std::invalid_argument("a backend that draws its own batches cannot run over ranks");
}

template <class T>
bool RbfTrainer<T>::any_rank(bool mine) const {
  return rbfpde::any_rank(*comm_, mine);
}

template <class T>
void RbfTrainer<T>::draw_batch(PhaseTimes& times, bool fused) {
  // This rank's share of the batch; with one rank, the whole of it.
  const int rank = comm_->rank(), ranks = comm_->size();
  const std::size_t n_int = share_of(std::size_t(config_.training.points_interior), rank, ranks).count;
  const std::size_t n_bnd = share_of(std::size_t(config_.training.points_boundary), rank, ranks).count;
  ++state_.batches;
  if (backend_.draws_batches()) {
    if (fused) return;
    auto t0 = Clock::now();
    backend_.draw_batch(config_.training.seed, state_.batches - 1, n_int, n_bnd);
    times.sampling += since(t0);
    if (batch_check_) batch_check_(backend_.batch());
    return;
  }
  auto t0 = Clock::now();
  problem_.sample(state_.rng, n_int, n_bnd, state_.batch);
  times.sampling += since(t0);
  t0 = Clock::now();
  backend_.set_batch(state_.batch);
  times.upload += since(t0);
}

template <class T>
TrainerState<T> RbfTrainer<T>::state() const {
  TrainerState<T> s = state_;
  if (backend_.draws_batches()) s.batch = backend_.batch();
  return s;
}

template <class T>
CollocationBatch RbfTrainer<T>::batch() const {
  return backend_.draws_batches() ? backend_.batch() : state_.batch;
}

template <class T>
std::string RbfTrainer<T>::unsound(const RbfParameters<T>& p) const {
  for (const auto* v : {&p.weights, &p.centres, &p.widths})
    for (T x : *v)
      if (!std::isfinite(double(x))) return "a parameter became NaN or infinite";
  double lo[4], hi[4], diag2 = 0;  // up to 3D space and time
  problem_.domain().bounding_box(lo, hi);
  const int d = problem_.dim();
  for (int j = 0; j < d; ++j) diag2 += (hi[j] - lo[j]) * (hi[j] - lo[j]);
  const double reach = kCentreEscape * std::sqrt(diag2);
  // Plain gradient steps fling the odd narrow neuron away (3 of 64 on the seed problem at
  // learning rate 5) and training goes on without it; most of the network gone is divergence.
  int escaped = 0;
  for (int k = 0; k < p.neurons(); ++k) {
    for (int j = 0; j < d; ++j) {
      const double c = double(p.centres[std::size_t(k) * d + j]);
      if (c < lo[j] - reach || c > hi[j] + reach) {
        ++escaped;
        break;
      }
    }
  }
  if (2 * escaped > p.neurons())
    return std::to_string(escaped) + " of " + std::to_string(p.neurons()) +
           " centres moved over " + std::to_string(int(kCentreEscape)) +
           " domain diagonals away (the step size is too large)";
  return "";
}

template <class T>
std::string RbfTrainer<T>::steps_set_by_limit(const RbfParameters<T>& p) {
  RbfParameters<T> grad;
  backend_.gradient(grad);
  const int d = p.dim;
  const double rate = config_.training.gd_learning_rate;
  int over = 0;
  double largest = 0;
  for (int k = 0; k < p.neurons(); ++k) {
    double gc[4];
    for (int j = 0; j < d; ++j) gc[j] = double(grad.centres[std::size_t(k) * d + j]);
    const double ratio =
        gd_step_over_limit(gc, d, double(grad.widths[k]), double(p.widths[k]), rate);
    if (ratio > kAbsurdStepRatio) ++over;
    if (ratio > largest) largest = ratio;
  }
  if (over == 0) return "";
  return "training.gd.learning_rate " + format_e(rate) +
         " is far too large for this problem: at the end, the gradient step of " +
         std::to_string(over) + " of " + std::to_string(p.neurons()) + " neurons is up to " +
         format_e(largest) + " times the step limit (a quarter of the neuron's width), so the " +
         "limit and not the gradient moves them";
}

template <class T>
CollocationBatch RbfTrainer<T>::host_batch() const {
  if (!backend_.draws_batches()) return state_.batch;
  CollocationBatch b = backend_.batch();  // the device's coefficients, when it drew general rows
  problem_.fill_missing_coefficients(b);
  return b;
}

template <class T>
double RbfTrainer<T>::data_loss(const CollocationBatch& batch) const {
  double sums[2] = {0, 0};
  for (double f : batch.f) sums[0] += f * f;
  for (double p : batch.p) sums[1] += p * p;
  if (comm_->size() > 1) comm_->allreduce_sum(sums, 2);
  const TrainingConfig& tc = config_.training;
  return 0.5 * sums[0] / std::max(1.0, double(tc.points_interior)) +
         0.5 * tc.penalty * sums[1] / std::max(1.0, double(tc.points_boundary));
}

template <class T>
bool RbfTrainer<T>::restart_left() const {
  const TrainingConfig& tc = config_.training;
  return tc.method == "varpro" && state_.restarts < tc.restarts && state_.cycle < tc.max_cycles;
}

template <class T>
bool RbfTrainer<T>::stall_restart_due(const LossParts& loss) const {
  return restart_left() && loss.loss > restart_loss_floor<T>() * data_loss(host_batch());
}

template <class T>
bool RbfTrainer<T>::plateau_restart_due() const {
  if (!restart_left() || !hooks_.plateau_loss_ratio) return false;
  // Every rank restarts or none: the relocation sums over the ranks.
  return !any_rank(!(hooks_.plateau_loss_ratio() > restart_loss_floor<T>()));
}

template <class T>
bool RbfTrainer<T>::slow_restart_due() const {
  if (!restart_left() || !hooks_.slow_loss_ratio) return false;
  return !any_rank(!(hooks_.slow_loss_ratio() > kSlowRestartFactor * restart_loss_floor<T>()));
}

template <class T>
std::string RbfTrainer<T>::relocate_neurons(PhaseTimes& times) {
  const auto t0 = Clock::now();
  const TrainingConfig& tc = config_.training;
  const CollocationBatch batch = host_batch();
  const RbfParameters<T> current = backend_.parameters();
  RbfParameters<double> p;
  p.dim = current.dim;
  p.weights.assign(current.weights.begin(), current.weights.end());
  p.centres.assign(current.centres.begin(), current.centres.end());
  p.widths.assign(current.widths.begin(), current.widths.end());
  const int d = p.dim, m = p.neurons();
  const double n_total = double(tc.points_interior), k_total = double(tc.points_boundary);
  const LossParts before = backend_.residuals();
  std::vector<T> et, bt;
  backend_.residual_vectors(et, bt);
  const std::vector<double> e(et.begin(), et.end()), b(bt.begin(), bt.end());

  // Usefulness over the union batch: each rank's share of |F_k|² summed.
  std::vector<double> squares = feature_column_squares(p, batch, tc.penalty, n_total, k_total);
  if (comm_->size() > 1) comm_->allreduce_sum(squares.data(), squares.size());
  const int count = relocated_count(m, state_.restarts);
  const std::vector<int> moved = least_useful_neurons(p.weights, squares, count);

  // Targets: every rank's largest residuals, gathered, so that all ranks choose the same ones.
  const int per_rank = count * kCandidatesPerTarget;
  std::vector<double> mine = residual_peaks(batch, e, b, tc.penalty, n_total, k_total, per_rank);
  std::vector<double> all(mine.size() * std::size_t(comm_->size()));
  if (comm_->size() > 1)
    comm_->allgather(mine.data(), mine.size(), all.data());
  else
    all = mine;
  // A relocated neuron is as wide as the centre spacing of the network spread evenly over the
  // domain (the initial network's scale), and no narrower than training allows.
  const double spacing = std::pow(problem_.domain().measure() / double(m), 1.0 / d);
  const double width = std::max(spacing, minimum_width(problem_.domain(), tc));
  const std::vector<double> targets = choose_targets(all, d, count, width);
  const int placed = int(targets.size()) / d;
  for (int t = 0; t < placed; ++t) {
    const std::size_t k = std::size_t(moved[std::size_t(t)]);
    std::copy(&targets[std::size_t(t) * d], &targets[std::size_t(t) * d] + d,
              &p.centres[k * std::size_t(d)]);
    p.widths[k] = width;
    p.weights[k] = 0;
  }
  backend_.set_parameters(convert_parameters<T>(p));
  backend_.solve_weights_qr();
  const LossParts after = backend_.residuals();
  state_.params = backend_.parameters();
  state_.mu = tc.lm_damping;
  state_.damping = DampingHistory{};
  ++state_.restarts;
  times.weights += since(t0);
  return "restart " + std::to_string(state_.restarts) + " of " + std::to_string(tc.restarts) +
         " at cycle " + std::to_string(state_.cycle) + ": training loss " +
         format_e(before.loss) + " (" + format_e(before.loss / data_loss(batch)) +
         " of the data's); " + std::to_string(placed) + " of " + std::to_string(m) +
         " neurons moved to the largest residuals, loss " + format_e(after.loss);
}

template <class T>
TrainOutcome RbfTrainer<T>::train(const RbfParameters<double>& initial, const ReportFn<T>& report,
                                  const StopFn& should_stop, bool solve_initial_weights) {
  TrainOutcome out;
  const auto start = Clock::now();
  state_ = TrainerState<T>{};
  state_.rng.seed(rank_seed(config_.training.seed, comm_->rank()));
  state_.mu = config_.training.lm_damping;
  backend_.set_parameters(convert_parameters<T>(initial));
  draw_batch(out.times);
  // Least-squares weights for fresh centres: both methods start from the best weights the
  // initial network can have, as the reference LM run did. A trained model keeps its own.
  auto t0 = Clock::now();
  const bool vp = config_.training.method == "varpro";
  if (vp && solve_initial_weights && config_.model.init_width_auto) {
    const WidthFit fit = fit_widths();
    out.times.weights += since(t0);
    out.initial_width = fit.scale * config_.model.init_width;
    if (hooks_.widths_chosen)
      hooks_.widths_chosen("width search: the lattice fits best with widths " +
                           format_e(out.initial_width) + " × the centre spacing (loss " +
                           format_e(fit.loss.loss) +
                           "); reported as cycle 0, training starts from " +
                           format_e(config_.model.init_width) + " × the spacing");
    // The best fit is a model of its own: reported as cycle 0 and written if training never
    // beats it. Training starts from the initial widths, which it can move: the best fit's
    // Gaussians are so wide that their weights cancel to the loss's rounding floor.
    backend_.set_parameters(fit.best);
    state_.seconds = since(start);
    t0 = Clock::now();
    const bool go_on = !any_rank(!report(0, state_.seconds, fit.loss, backend_, false));
    out.times.report += since(t0);
    if (go_on)
      backend_.set_parameters(fit.start);
    else
      out.stop_reason = "monitor";
  } else {
    if (vp)
      backend_.solve_weights_qr();
    else if (solve_initial_weights)
      backend_.solve_weights_direct(T(0));
    out.times.weights += since(t0);
  }
  state_.reference_loss = backend_.residuals().loss;
  state_.params = backend_.parameters();
  state_.seconds = since(start);
  return run(out, report, should_stop);
}

template <class T>
typename RbfTrainer<T>::WidthFit RbfTrainer<T>::fit_widths() {
  const RbfParameters<T> initial = backend_.parameters();
  WidthFit fit;
  // The least-squares weights with every width scaled by `scale`, and their loss; a loss that is
  // not finite ranks last.
  auto consider = [&](double scale) {
    RbfParameters<T> p = initial;
    for (T& a : p.widths) a = T(double(a) * scale);
    backend_.set_parameters(p);
    backend_.solve_weights_qr();
    const LossParts loss = backend_.residuals();
    if (scale == 1.0) fit.start = backend_.parameters();
    const bool better =
        std::isfinite(loss.loss) && (!std::isfinite(fit.loss.loss) || loss.loss < fit.loss.loss);
    if (fit.best.neurons() == 0 || better) {
      fit.loss = loss;
      fit.scale = scale;
      fit.best = backend_.parameters();
    }
  };
  for (double scale : kWidthScales) consider(scale);
  const double coarse = fit.scale, quarter_octave = std::pow(2.0, 0.25);
  consider(coarse / quarter_octave);
  consider(coarse * quarter_octave);
  return fit;
}

template <class T>
TrainOutcome RbfTrainer<T>::resume(const TrainerState<T>& state, const ReportFn<T>& report,
                                   const StopFn& should_stop) {
  state_ = state;
  // A checkpoint keeps the batch with its coefficients (older formats: points and targets only).
  problem_.fill_missing_coefficients(state_.batch);
  backend_.set_parameters(state_.params);
  backend_.set_batch(state_.batch);
  return run(TrainOutcome{}, report, should_stop);
}

template <class T>
TrainOutcome RbfTrainer<T>::run(TrainOutcome out, const ReportFn<T>& report,
                                const StopFn& should_stop) {
  const TrainingConfig& tc = config_.training;
  const bool vp = tc.method == "varpro";
  const bool lm = tc.method == "lm" || vp;
  const double kMinDamping = min_damping<T>();
  const auto start = Clock::now();
  const double seconds_before = state_.seconds;
  RbfParameters<T> last_good = state_.params;
  LossParts loss = backend_.residuals();

  auto diverge = [&](const std::string& why) {
    // A batch the backend drew inside a cycle is seen here first.
    if (backend_.draws_batches() && batch_check_) batch_check_(backend_.batch());
    out.diverged = true;
    out.stop_reason = "diverged";
    out.divergence = why;
    backend_.set_parameters(last_good);
    state_.params = last_good;
  };
  if (!finite(loss)) diverge("the loss of the initial network is not finite");
  while (out.stop_reason.empty() && !out.diverged && state_.cycle < tc.max_cycles) {
    const bool fresh = state_.cycle > 0 && tc.resample_every > 0 &&
                       state_.cycle % tc.resample_every == 0;
    const bool fused_draw = fresh && !lm && backend_.draws_batches();
    if (fresh) {
      draw_batch(out.times, fused_draw);
      // Variable projection steps from least-squares weights on the batch they are taken on.
      if (vp) {
        auto t0 = Clock::now();
        backend_.solve_weights_qr();
        out.times.weights += since(t0);
      }
    }
    ++state_.cycle;
    if (lm) {
      auto t0 = Clock::now();
      const LossParts before = vp ? backend_.vp_prepare() : backend_.lm_prepare();
      LossParts after = before;
      bool accepted = false;
      // Shrink μ after a success, grow it until the step helps (training.lm.update).
      DampingRule damping(damping_kind(tc.lm_update), kMinDamping, &state_.damping, state_.cycle);
      for (int attempt = 0; attempt < 12; ++attempt) {
        if (vp) backend_.vp_expect_accepted_trials(damping.likely_accepted());
        after = vp ? backend_.vp_try(T(state_.mu)) : backend_.lm_try(T(state_.mu));
        if (finite(after) && after.loss < before.loss) {
          accepted = true;
          state_.mu = damping.accepted(state_.mu, before.loss - after.loss,
                                       backend_.lm_predicted_decrease());
          break;
        }
        backend_.lm_reject();
        state_.mu = damping.rejected(state_.mu);
      }
      loss = accepted ? after : before;
      out.times.lm += since(t0);
    } else {
      auto t0 = Clock::now();
      // The cycle reports the loss before its GD step: the loss of the parameters of the last
      // cycle on this cycle's batch, which drives stopping.
      typename RbfBackend<T>::GdcgCycle c;
      c.draw = fused_draw;
      c.seed = tc.seed;
      c.batch_index = state_.batches - 1;
      c.n_interior = std::size_t(tc.points_interior);
      c.n_boundary = std::size_t(tc.points_boundary);
      c.gd_steps = tc.gd_steps;
      c.learning_rate = T(tc.gd_learning_rate);
      c.cg_iterations = tc.cg_iterations;
      c.cg_tolerance = T(tc.cg_tolerance);
      loss = backend_.gdcg_cycle(c);
      out.times.gdcg += since(t0);
    }
    state_.seconds = seconds_before + since(start);

    if (!finite(loss)) {
      diverge("the loss became NaN or infinite at cycle " + std::to_string(state_.cycle));
      break;
    }
    if (exploded(loss.loss, state_.reference_loss, state_.exploded_cycles)) {
      diverge("the loss stayed above 1e10 times its initial value for " +
              std::to_string(kExplosionCycles) + " cycles");
      break;
    }

    const bool report_due = regular_report(config_.output, state_.cycle);
    if (report_due) {
      // Reports are where the host sees the parameters: check them and keep them as the last
      // sound state.
      RbfParameters<T> params = backend_.parameters();
      const std::string why = unsound(params);
      if (!why.empty()) {
        diverge(why + " (cycle " + std::to_string(state_.cycle) + ")");
        break;
      }
      last_good = params;
    }

    // On one fixed batch, a step that no damping up to kMaxDamping makes smaller means converged,
    // unless the loss is far above its rounding floor and a restart is left.
    bool restart = false;
    if (vp && tc.resample_every == 0 && state_.mu >= kMaxDamping) {
      restart = stall_restart_due(loss);
      if (!restart) out.stop_reason = "converged";
    }
    // Clocks and signals differ between ranks: every rank stops at the cycle where any would. A
    // stall's restart comes first (they are seen a cycle later): a run stopped at its stall
    // would restart a cycle late on resume.
    if (out.stop_reason.empty() && !restart &&
        any_rank(tc.time_limit > 0 && state_.seconds >= tc.time_limit))
      out.stop_reason = "time_limit";
    if (out.stop_reason.empty() && !restart && any_rank(should_stop && should_stop()))
      out.stop_reason = "interrupted";
    if (!out.stop_reason.empty()) break;

    // A restart reports the stalled state first: the monitor keeps it if it is the best, so a
    // restart cannot make the written model worse.
    if ((report_due || restart) && state_.cycle < tc.max_cycles) {
      auto t0 = Clock::now();
      // The report shows the parameters' loss on the current batch after the whole cycle.
      const LossParts now = lm ? loss : backend_.residuals();
      const bool go_on = !any_rank(!report(state_.cycle, state_.seconds, now, backend_, false));
      out.times.report += since(t0);
      // While a restart is left, the monitor's plateau far above the loss floor is answered by
      // a restart instead of a stop, and slow progress further above it by a restart too.
      if (!go_on)
        restart = plateau_restart_due();
      else if (!restart)
        restart = slow_restart_due();
      if (!go_on && !restart) {
        out.stop_reason = "monitor";
        break;
      }
    }
    if (restart) {
      const std::string note = relocate_neurons(out.times);
      if (hooks_.restarted) hooks_.restarted(state_.cycle, note);
    }
  }
  if (out.stop_reason.empty()) out.stop_reason = "max_cycles";
  if (!out.diverged) state_.params = backend_.parameters();
  out.cycles = state_.cycle;
  auto t0 = Clock::now();
  if (!lm && !out.diverged) out.unsound = steps_set_by_limit(state_.params);
  out.loss = backend_.residuals();
  out.seconds = state_.seconds;
  report(state_.cycle, out.seconds, out.loss, backend_, true);
  out.times.report += since(t0);
  return out;
}

template class RbfTrainer<double>;
template class RbfTrainer<float>;

}  // namespace rbfpde
