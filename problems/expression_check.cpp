#include "problems/expression_check.hpp"

#include <cmath>
#include <cstdio>
#include <string>

#include "problems/sample_util.hpp"

namespace rbfpde {
namespace {

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

// The config entry an interior coefficient of `problem` comes from: a and c are `k` (helmholtz)
// or `diffusivity` (heat) when the equation is a shorthand.
const ExprSpec* coefficient_spec(const ProblemSpec& spec, char which) {
  if (spec.equation == "helmholtz" && which == 'c' && spec.k) return &*spec.k;
  if (spec.equation == "heat" && which == 'a' && spec.diffusivity) return &*spec.diffusivity;
  if (which == 'a' && spec.a) return &*spec.a;
  if (which == 'c' && spec.c) return &*spec.c;
  return nullptr;
}

// Index of the first non-finite value of `values` (values.size() when all are finite).
std::size_t first_not_finite(const std::vector<double>& values) {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i])) return i;
  return values.size();
}

}  // namespace

void check_batch_finite(const ProblemSpec& spec, const Problem& problem,
                        const CollocationBatch& batch) {
  const int dim = batch.dim;
  const std::size_t d = static_cast<std::size_t>(dim);
  // Interior rows: a coefficient that is a shorthand's constant cannot be the culprit, so the
  // key of a value without an expression of its own is the equation's.
  auto interior = [&](const std::vector<double>& values, const ExprSpec* from, std::size_t stride,
                      const char* what) {
    const std::size_t i = first_not_finite(values);
    if (i == values.size()) return;
    const double* x = batch.interior.data() + (i / stride) * d;
    if (from) not_finite(*from, values[i], x, dim);
    throw InputError(spec.equation_loc, "problem.equation",
                     std::string("expected a finite ") + what + " everywhere in the domain, found " +
                         (std::isnan(values[i]) ? "nan" : "inf") + " at " + point_text(x, dim));
  };
  interior(batch.f, &spec.f, 1, "f");
  interior(batch.a, coefficient_spec(spec, 'a'), 1, "coefficient a");
  interior(batch.c, coefficient_spec(spec, 'c'), 1, "coefficient c");
  // b is n × dim: its first bad value's column names the component.
  const std::size_t ib = first_not_finite(batch.b);
  if (ib < batch.b.size())
    interior(batch.b, ib % d < spec.b.size() ? &spec.b[ib % d] : nullptr, d, "coefficient b");

  // Boundary rows: the entry that applies at the point, as the host chooses it.
  auto boundary = [&](const std::vector<double>& values, char which) {
    const std::size_t j = first_not_finite(values);
    if (j == values.size()) return;
    const double* x = batch.boundary.data() + j * d;
    if (problem.has_time() && spec.initial && !batch.normals.empty() &&
        problem.on_initial_face(batch.normals.data() + j * d))
      not_finite(*spec.initial, values[j], x, dim);
    const int e = problem.boundary_entry(x);
    if (e < 0 || std::size_t(e) >= spec.boundary.size())
      throw InputError(spec.boundary_loc, "problem.boundary",
                       "expected an entry whose `where` holds at every boundary point, found none "
                       "at " + point_text(x, dim));
    const BoundarySpec& entry = spec.boundary[std::size_t(e)];
    const ExprSpec& from = which == 'p' ? entry.value : which == 'a' ? entry.alpha : entry.beta;
    // α and β of a Dirichlet or Neumann entry are constants: their values come with the value.
    not_finite(from.text.empty() ? entry.value : from, values[j], x, dim);
  };
  boundary(batch.p, 'p');
  boundary(batch.alpha, 'a');
  boundary(batch.beta, 'b');
}

void check_expressions_finite(const ProblemSpec& spec, const Problem& problem,
                              const CollocationBatch& points,
                              const std::vector<double>& grid_points) {
  const int dim = problem.dim();
  check_at(spec.f, problem.f(), points.interior, dim);
  // The interior row's coefficients (constants of the shorthands are finite by construction).
  if (const ExprSpec* a = coefficient_spec(spec, 'a')) check_at(*a, problem.a(), points.interior, dim);
  if (const ExprSpec* c = coefficient_spec(spec, 'c')) check_at(*c, problem.c(), points.interior, dim);
  if (spec.equation == "linear")
    for (std::size_t j = 0; j < problem.b().size() && j < spec.b.size(); ++j)
      check_at(spec.b[j], problem.b()[j], points.interior, dim);

  const std::vector<BoundaryCondition>& bcs = problem.boundary();
  const std::size_t nb = points.boundary.size() / static_cast<std::size_t>(dim);
  for (std::size_t j = 0; j < nb; ++j) {
    const double* x = points.boundary.data() + j * dim;
    // The initial face (with time) takes u = initial, not the boundary entries.
    if (problem.has_time() && !points.normals.empty() &&
        problem.on_initial_face(points.normals.data() + j * dim)) {
      if (problem.has_initial() && spec.initial) {
        const double v = problem.initial()(x);
        if (!std::isfinite(v)) not_finite(*spec.initial, v, x, dim);
      }
      continue;
    }
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
      if (bc.type == "robin") {
        const double al = bc.alpha(x), be = bc.beta(x);
        if (!std::isfinite(al)) not_finite(spec.boundary[i].alpha, al, x, dim);
        if (!std::isfinite(be) && !spec.boundary[i].beta.text.empty())
          not_finite(spec.boundary[i].beta, be, x, dim);
      }
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
