#include "solver/train/validation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "problems/random.hpp"
#include "solver/train/rbf_model.hpp"

namespace rbfpde {
namespace {

// The validation set's stream: the seed xor a constant no training draw uses.
constexpr std::uint64_t kValidationStream = 0x5bd1e9955bd1e995ULL;
// The least penalty on the error equation's boundary rows.
constexpr double kEstimatePenalty = 1e6;
// The auxiliary Gaussians' width in lattice spacings. The network's error is smooth on the
// lattice's scale, and wide Gaussians represent it closely: with 4 spacings the estimate came
// within 0.65-1.4 of the true error on every shipped config measured, against 0.18-4.0 with 1.5
// (docs/mathematics.md, "The error estimate").
constexpr double kEstimateWidthPerSpacing = 4.0;

double rms(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return v.empty() ? 0.0 : std::sqrt(s / double(v.size()));
}

std::string format_e(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2e", v);
  return buf;
}

}  // namespace

std::size_t validation_size(std::size_t batch_points) {
  return std::max(batch_points + 1, std::min(2 * batch_points, kValidationCap));
}

ValidationSet::ValidationSet(const Config& config, const Problem& problem)
    : penalty_(config.training.penalty), uses_gradient_(problem.uses_gradient()) {
  Rng rng(config.training.seed ^ kValidationStream);
  problem.sample(rng, validation_size(std::size_t(config.training.points_interior)),
                 validation_size(std::size_t(config.training.points_boundary)), set_);
}

ValidationFigures ValidationSet::assess(const EvaluateFn& evaluate, const GradientFn& gradient) {
  ValidationFigures v;
  evaluate(set_.interior, u_int_, lap_int_);
  evaluate(set_.boundary, u_bnd_, scratch_);
  if (uses_gradient_) {
    if (!gradient) throw std::logic_error("validation: the problem's rows need the gradient");
    if (!set_.b.empty()) gradient(set_.interior, grad_int_);
    if (!set_.beta.empty()) gradient(set_.boundary, grad_bnd_);
  }
  batch_residuals(set_, u_int_, grad_int_, lap_int_, u_bnd_, grad_bnd_, res_int_, res_bnd_);
  double se = 0, sb = 0;
  for (std::size_t i = 0; i < lap_int_.size(); ++i) {
    const double e = res_int_[i];
    se += e * e;
    v.finite = v.finite && std::isfinite(e) && std::isfinite(u_int_[i]);
    v.max_abs_u = std::max(v.max_abs_u, std::abs(u_int_[i]));
  }
  for (std::size_t j = 0; j < u_bnd_.size(); ++j) {
    const double b = res_bnd_[j];
    sb += b * b;
    v.finite = v.finite && std::isfinite(b);
    v.max_abs_u = std::max(v.max_abs_u, std::abs(u_bnd_[j]));
  }
  v.rms_interior = std::sqrt(se / double(std::max<std::size_t>(lap_int_.size(), 1)));
  v.rms_boundary = std::sqrt(sb / double(std::max<std::size_t>(u_bnd_.size(), 1)));
  v.loss = 0.5 * v.rms_interior * v.rms_interior + 0.5 * penalty_ * v.rms_boundary * v.rms_boundary;
  if (!v.finite) v.loss = std::numeric_limits<double>::infinity();
  return v;
}

template <class Params>
RunMonitor<Params>::RunMonitor(const Config& config, const Problem& problem,
                               const ValidationSet& validation)
    : config_(config) {
  (void)problem;
  f_rms_ = rms(validation.points().f);
  p_rms_ = rms(validation.points().p);
}

template <class Params>
double RunMonitor<Params>::data_loss() const {
  return 0.5 * f_rms_ * f_rms_ + 0.5 * config_.training.penalty * p_rms_ * p_rms_;
}

template <class Params>
MonitorState<Params> RunMonitor<Params>::state() const {
  MonitorState<Params> s;
  s.best = best_;
  s.best_cycle = verdict_.best_cycle;
  s.best_figures = verdict_.best;
  s.plateau_loss = plateau_loss_;
  s.improved_cycle = improved_cycle_;
  s.slow_loss = slow_loss_;
  s.slow_cycle = slow_cycle_;
  s.slow = slow_;
  return s;
}

template <class Params>
void RunMonitor<Params>::restore(const MonitorState<Params>& s) {
  best_ = s.best;
  verdict_ = MonitorVerdict{};
  verdict_.best_cycle = s.best_cycle;
  verdict_.best = s.best_figures;
  plateau_loss_ = s.plateau_loss;
  improved_cycle_ = s.improved_cycle;
  slow_loss_ = s.slow_loss;
  slow_cycle_ = s.slow_cycle;
  slow_ = s.slow;
}

template <class Params>
std::string RunMonitor<Params>::observe(long cycle, const LossParts& train,
                                        const ValidationFigures& v,
                                        const std::vector<double>& grid_u,
                                        const std::string& model_unsound,
                                        const Params& params) {
  std::string why;
  double grid_max = 0;
  bool grid_finite = true;
  for (double u : grid_u) {
    grid_finite = grid_finite && std::isfinite(u);
    grid_max = std::max(grid_max, std::abs(u));
  }
  const double scale = std::max({v.max_abs_u, f_rms_, p_rms_}) * 1e-12;
  if (!grid_finite || !v.finite) {
    why = "the solution is NaN or infinite on the evaluation grid or the validation points";
  } else if (grid_max > kAbsurdFactor * v.max_abs_u + scale) {
    why = "max |u| on the evaluation grid is " + format_e(grid_max) + ", over " +
          format_e(kAbsurdFactor) + " times its " + format_e(v.max_abs_u) +
          " on the validation points (spikes between the collocation points)";
  } else if (data_loss() > 0 && !(std::abs(v.loss - data_loss()) > kZeroShare * data_loss())) {
    why = "the validation loss " + format_e(v.loss) + " is that of the zero function (" +
          format_e(data_loss()) + "): the network is zero to rounding";
  } else if (v.rms_interior > kOverfitFactor * train.rms_interior + kOverfitFloor * f_rms_ ||
             v.rms_boundary > kOverfitFactor * train.rms_boundary + kOverfitFloor * (p_rms_ + f_rms_)) {
    why = "the validation residual (interior " + format_e(v.rms_interior) + ", boundary " +
          format_e(v.rms_boundary) + ") is over " + format_e(kOverfitFactor) +
          " times the training one (" + format_e(train.rms_interior) + ", " +
          format_e(train.rms_boundary) + "): the network fits the collocation points only";
  } else if (!model_unsound.empty()) {
    why = model_unsound;
  }
  if (!why.empty()) why += " (cycle " + std::to_string(cycle) + ")";

  if (why.empty() && v.loss < (has_best() ? verdict_.best.loss : std::numeric_limits<double>::infinity())) {
    verdict_.best_cycle = cycle;
    verdict_.best = v;
    best_ = params;
  }
  // Stopping: the validation loss at the tolerance, or no 1 % improvement for `patience` cycles
  // (counted in cycles, so that the rule does not depend on how often reports come).
  if (why.empty() && v.loss < config_.training.tolerance) verdict_.stop_reason = "tolerance";
  // Cycle 0 (variable projection's width search) is a candidate, not a step of training: the
  // plateau and slow rules start at the first cycle.
  if (cycle == 0) return why;
  if (improved_cycle_ < 0) improved_cycle_ = cycle;
  if (v.loss < 0.99 * plateau_loss_) {
    plateau_loss_ = v.loss;
    improved_cycle_ = cycle;
  } else if (config_.training.patience > 0 && cycle - improved_cycle_ >= config_.training.patience &&
             verdict_.stop_reason.empty()) {
    verdict_.stop_reason = "plateau";
  }
  if (slow_cycle_ < 0) slow_cycle_ = cycle;
  if (v.loss < (1 - kSlowShare) * slow_loss_) {
    slow_loss_ = v.loss;
    slow_cycle_ = cycle;
  }
  slow_ = config_.training.patience > 0 && cycle - slow_cycle_ >= config_.training.patience;
  return why;
}

double estimate_relative_error(const std::string& backend, const Config& config,
                               const Problem& problem, const ValidationSet& validation,
                               const std::vector<double>& grid_points,
                               const std::vector<double>& grid_u) {
  const int d = problem.dim();
  const double u_rms = rms(grid_u);
  if (!(u_rms > 0) || grid_u.empty()) return std::numeric_limits<double>::quiet_NaN();
  // The auxiliary basis: a lattice over the bounding box, 1.6 times the network's centre density
  // per axis (within [12, 32] per axis in 2D, [8, 12] in 3D, [5, 6] with 4 coordinates: at most
  // 1024, 1728 and 1296 functions; 4D stays below the 1.6 ratio, as a 7⁴ or 8⁴ basis would cost
  // the QR 3 to 10 times more than the 3D one), widths kEstimateWidthPerSpacing spacings.
  if (d < 2 || d > 4) throw std::invalid_argument("error estimate: 2 to 4 coordinates expected");
  const double per_axis_network = std::pow(double(std::max(1, config.model.neurons)), 1.0 / d);
  const int lo_n = d == 2 ? 12 : d == 3 ? 8 : 5, hi_n = d == 2 ? 32 : d == 3 ? 12 : 6;
  const int per_axis = std::clamp(int(std::lround(1.6 * per_axis_network)), lo_n, hi_n);
  double lo[4], hi[4];
  problem.domain().bounding_box(lo, hi);
  RbfParameters<double> aux;
  aux.dim = d;
  double spacing = 0;
  for (int j = 0; j < d; ++j) spacing = std::max(spacing, (hi[j] - lo[j]) / per_axis);
  int total = 1;
  for (int j = 0; j < d; ++j) total *= per_axis;
  for (int k = 0; k < total; ++k) {
    int rest = k;
    for (int j = 0; j < d; ++j, rest /= per_axis)
      aux.centres.push_back(lo[j] + (rest % per_axis + 0.5) * (hi[j] - lo[j]) / per_axis);
    aux.widths.push_back(kEstimateWidthPerSpacing * spacing);
    aux.weights.push_back(0.0);
  }
  // The error equation's data: the residuals at the validation points; its rows are the
  // problem's own (the set's coefficients).
  CollocationBatch data = validation.points();
  data.f = validation.last_interior_residuals();
  data.p = validation.last_boundary_residuals();

  BackendOptions opt;
  opt.dim = d;
  opt.laplacian_dims = problem.space_dim();
  // The boundary condition nearly exact: a residual the basis cannot resolve (the network's
  // misfit between its collocation points) must not be traded for the boundary values, which
  // carry most of the error into the interior.
  opt.penalty = std::max(kEstimatePenalty, 1e4 * config.training.penalty);
  opt.min_width = 0;
  std::unique_ptr<RbfBackend<double>> be =
      backend == "cuda" ? make_cuda_backend<double>(opt) : make_cpu_backend<double>(opt);
  be->set_parameters(aux);
  be->set_batch(data);
  be->solve_weights_qr();
  std::vector<double> e, lap_e;
  be->evaluate(grid_points, e, lap_e);
  return rms(e) / u_rms;
}

template class RunMonitor<RbfParameters<double>>;
template class RunMonitor<RbfParameters<float>>;
template class RunMonitor<std::vector<double>>;
template class RunMonitor<std::vector<float>>;

}  // namespace rbfpde
