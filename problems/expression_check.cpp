#include "problems/expression_check.hpp"

#include <cmath>
#include <cstdio>
#include <string>

namespace rbfpde {
namespace {

std::string point_text(const double* x, int dim) {
  std::string s = "(";
  char buf[32];
  for (int k = 0; k < dim; ++k) {
    std::snprintf(buf, sizeof buf, "%.6g", x[k]);
    s += (k ? ", " : "") + std::string(buf);
  }
  return s + ")";
}

[[noreturn]] void not_finite(const ExprSpec& spec, double value, const double* x, int dim) {
  throw InputError(spec.loc, spec.key,
                   "expected an expression finite everywhere in the domain, found \"" + spec.text +
                       "\" = " +
                       (std::isnan(value) ? "nan"
                        : value > 0       ? "inf"
                                          : "-inf") +
                       " at " + point_text(x, dim));
}

// The expression at n points; throws at the first non-finite value.
void check_at(const ExprSpec& spec, const Expression& e, const std::vector<double>& points,
              int dim) {
  const std::size_t n = points.size() / static_cast<std::size_t>(dim);
  std::vector<double> values(n);
  e.evaluate(points.data(), n, values.data());
  for (std::size_t i = 0; i < n; ++i)
    if (!std::isfinite(values[i])) not_finite(spec, values[i], points.data() + i * dim, dim);
}

}  // namespace

void check_expressions_finite(const ProblemSpec& spec, const Problem& problem,
                              const CollocationBatch& points,
                              const std::vector<double>& grid_points) {
  const int dim = problem.dim();
  check_at(spec.f, problem.f(), points.interior, dim);

  const std::vector<BoundaryCondition>& bcs = problem.boundary();
  const std::size_t nb = points.boundary.size() / static_cast<std::size_t>(dim);
  for (std::size_t j = 0; j < nb; ++j) {
    const double* x = points.boundary.data() + j * dim;
    for (std::size_t i = 0; i < bcs.size() && i < spec.boundary.size(); ++i) {
      const BoundaryCondition& bc = bcs[i];
      // A `where` selects where it is non-zero and not NaN (Problem::boundary_entry), so a NaN
      // there is a choice, not an error.
      if (!bc.everywhere) {
        const double w = bc.where(x);
        if (w == 0 || std::isnan(w)) continue;
      }
      const double v = bc.value(x);
      if (!std::isfinite(v)) not_finite(spec.boundary[i].value, v, x, dim);
      break;
    }
  }

  if (problem.has_exact() && spec.exact) {
    check_at(*spec.exact, problem.exact(), points.interior, dim);
    check_at(*spec.exact, problem.exact(), points.boundary, dim);
    check_at(*spec.exact, problem.exact(), grid_points, dim);
  }
}

}  // namespace rbfpde
