#include "solver/train/lbfgs.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace rbfpde {
namespace {

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

bool all_finite(const std::vector<double>& v) {
  for (double x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

}  // namespace

Lbfgs::Lbfgs(LbfgsObjective f, std::vector<double> x0, const LbfgsOptions& options)
    : objective_(std::move(f)), options_(options) {
  options_.history = std::max(1, options_.history);
  st_.x = std::move(x0);
  st_.g.assign(st_.x.size(), 0.0);
  st_.f = evaluate(st_.x, st_.g);
}

Lbfgs::Lbfgs(LbfgsObjective f, LbfgsState state, const LbfgsOptions& options)
    : objective_(std::move(f)), options_(options), st_(std::move(state)) {
  options_.history = std::max(1, options_.history);
}

double Lbfgs::evaluate(const std::vector<double>& x, std::vector<double>& g) {
  ++st_.evaluations;
  g.resize(x.size());
  const double f = objective_(x, g);
  // A non-finite gradient is as unusable as a non-finite value: report it the same way.
  return std::isfinite(f) && all_finite(g) ? f : std::nan("");
}

double Lbfgs::gradient_norm() const { return std::sqrt(dot(st_.g, st_.g)); }

void Lbfgs::direction(std::vector<double>& d) const {
  const std::size_t m = st_.s.size();
  d.resize(st_.g.size());
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = -st_.g[i];
  std::vector<double> alpha(m);
  for (std::size_t k = m; k-- > 0;) {
    alpha[k] = st_.rho[k] * dot(st_.s[k], d);
    for (std::size_t i = 0; i < d.size(); ++i) d[i] -= alpha[k] * st_.y[k][i];
  }
  // H0 = γI with γ = sᵀy / yᵀy of the newest pair: the step's scale from the latest curvature,
  // which is what lets the first trial step α = 1 be accepted most of the time.
  const double gamma = 1.0 / (st_.rho[m - 1] * dot(st_.y[m - 1], st_.y[m - 1]));
  for (double& v : d) v *= gamma;
  for (std::size_t k = 0; k < m; ++k) {
    const double beta = st_.rho[k] * dot(st_.y[k], d);
    for (std::size_t i = 0; i < d.size(); ++i) d[i] += (alpha[k] - beta) * st_.s[k][i];
  }
}

bool Lbfgs::search(const std::vector<double>& d, double alpha) {
  const double slope = dot(st_.g, d);
  if (!(slope < 0)) return false;  // not a descent direction
  const std::size_t n = st_.x.size();
  trial_x_.resize(n);
  for (int h = 0; h <= options_.max_halvings; ++h, alpha *= 0.5) {
    for (std::size_t i = 0; i < n; ++i) trial_x_[i] = st_.x[i] + alpha * d[i];
    const double f = evaluate(trial_x_, trial_g_);
    // A non-finite trial is a step too long, like one that fails Armijo: halve it.
    if (!(std::isfinite(f) && f <= st_.f + options_.c1 * alpha * slope)) continue;

    std::vector<double> s(n), y(n);
    for (std::size_t i = 0; i < n; ++i) {
      s[i] = trial_x_[i] - st_.x[i];
      y[i] = trial_g_[i] - st_.g[i];
    }
    const double sy = dot(s, y);
    if (sy > options_.curvature_skip * std::sqrt(dot(s, s) * dot(y, y))) {
      if (static_cast<int>(st_.s.size()) == options_.history) {
        st_.s.pop_front();
        st_.y.pop_front();
        st_.rho.pop_front();
      }
      st_.s.push_back(std::move(s));
      st_.y.push_back(std::move(y));
      st_.rho.push_back(1.0 / sy);
    }
    std::swap(st_.x, trial_x_);
    std::swap(st_.g, trial_g_);
    st_.f = f;
    return true;
  }
  return false;
}

Lbfgs::Status Lbfgs::iterate() {
  if (!std::isfinite(st_.f)) return Status::non_finite;
  const double gnorm = gradient_norm();
  if (gnorm == 0) return Status::stalled;  // a stationary point: no direction to go
  std::vector<double> d;
  if (!st_.s.empty()) {
    direction(d);
    if (search(d, 1.0)) return Status::ok;
    // Stale curvature pairs can point the search uphill or nowhere: start afresh from −g.
    st_.s.clear();
    st_.y.clear();
    st_.rho.clear();
    ++st_.resets;
  }
  // Without curvature information −g has no natural scale: a first step of unit length (or the
  // full gradient when it is shorter) keeps it from flinging x far away.
  d.resize(st_.g.size());
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = -st_.g[i];
  return search(d, std::min(1.0, 1.0 / gnorm)) ? Status::ok : Status::stalled;
}

LbfgsResult lbfgs_minimize(const LbfgsObjective& f, std::vector<double> x0, long max_iterations,
                           double gradient_tolerance, const LbfgsOptions& options) {
  Lbfgs solver(f, std::move(x0), options);
  LbfgsResult r;
  r.stop = "max_iterations";
  if (!std::isfinite(solver.loss())) {
    r.stop = "non_finite";
  } else {
    while (r.iterations < max_iterations) {
      if (solver.gradient_norm() <= gradient_tolerance) {
        r.stop = "gradient";
        break;
      }
      const Lbfgs::Status status = solver.iterate();
      if (status != Lbfgs::Status::ok) {
        r.stop = status == Lbfgs::Status::stalled ? "stalled" : "non_finite";
        break;
      }
      ++r.iterations;
    }
    if (r.stop == "max_iterations" && solver.gradient_norm() <= gradient_tolerance)
      r.stop = "gradient";
  }
  r.x = solver.x();
  r.loss = solver.loss();
  r.gradient_norm = solver.gradient_norm();
  r.evaluations = solver.evaluations();
  return r;
}

}  // namespace rbfpde
