#include "solver/train/lbfgs.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace rbfpde {
namespace {

// Eight partial sums in a fixed order (the same bits on every run): independent chains the
// compiler vectorises, where one running sum is a chain of n dependent additions (the two-loop
// recursion takes 2m + 5 of these per iteration).
double dot(const std::vector<double>& a, const std::vector<double>& b) {
  const std::size_t n = a.size();
  double p[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) p[k] += a[i + k] * b[i + k];
  for (; i < n; ++i) p[i % 8] += a[i] * b[i];
  return ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]));
}

// d += a·x, then z·d (the updated d) when z is given, in one sweep over the vectors (blocks of
// 512: the axpy, then the block's dot products while it is in L1): the two-loop recursion
// alternates these. The dot product's partial sums are dot's, in the same order.
double axpy_dot(double a, const std::vector<double>& x, std::vector<double>& d,
                const std::vector<double>* z) {
  const std::size_t n = d.size();
  double* __restrict__ dd = d.data();  // distinct vectors: lets the loops vectorise
  const double* __restrict__ xx = x.data();
  const double* __restrict__ zz = z ? z->data() : nullptr;
  double p[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (std::size_t b = 0; b < n; b += 512) {
    const std::size_t e = std::min(n, b + 512);
    for (std::size_t i = b; i < e; ++i) dd[i] += a * xx[i];
    if (!zz) continue;
    std::size_t i = b;
    for (; i + 8 <= e; i += 8)
      for (int k = 0; k < 8; ++k) p[k] += zz[i + k] * dd[i + k];
    for (; i < e; ++i) p[i % 8] += zz[i] * dd[i];
  }
  return ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]));
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
  // Each pass updates d and forms the next loop step's dot product with the updated d.
  double sd = dot(st_.s[m - 1], d);
  for (std::size_t k = m; k-- > 0;) {
    alpha[k] = st_.rho[k] * sd;
    sd = axpy_dot(-alpha[k], st_.y[k], d, k > 0 ? &st_.s[k - 1] : nullptr);
  }
  // H0 = γI with γ = sᵀy / yᵀy of the newest pair: the step's scale from the latest curvature,
  // which is what lets the first trial step α = 1 be accepted most of the time.
  const double gamma = 1.0 / (st_.rho[m - 1] * dot(st_.y[m - 1], st_.y[m - 1]));
  for (double& v : d) v *= gamma;
  double yd = dot(st_.y[0], d);
  for (std::size_t k = 0; k < m; ++k) {
    const double beta = st_.rho[k] * yd;
    yd = axpy_dot(alpha[k] - beta, st_.s[k], d, k + 1 < m ? &st_.y[k + 1] : nullptr);
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

    // The new pair is formed in pair_s_/pair_y_, which then take the storage of the pair it
    // replaces once the history is full (no allocation per iteration).
    pair_s_.resize(n);
    pair_y_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      pair_s_[i] = trial_x_[i] - st_.x[i];
      pair_y_[i] = trial_g_[i] - st_.g[i];
    }
    const double sy = dot(pair_s_, pair_y_);
    if (sy > options_.curvature_skip * std::sqrt(dot(pair_s_, pair_s_) * dot(pair_y_, pair_y_))) {
      std::vector<double> s = std::move(pair_s_), y = std::move(pair_y_);
      if (static_cast<int>(st_.s.size()) == options_.history) {
        pair_s_ = std::move(st_.s.front());
        pair_y_ = std::move(st_.y.front());
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
