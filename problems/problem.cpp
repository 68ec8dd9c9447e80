// Problem::build turns the typed spec into compiled expressions and a domain, and checks up front
// what would otherwise surface as a silent NaN target or an untrained boundary mid-training.
#include "problems/problem.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "problems/sample_util.hpp"
#include "problems/space_time.hpp"

namespace rbfpde {

namespace {

// Boundary points drawn to check that the `where` entries cover the boundary. Fixed seed: the
// same config is accepted or rejected every time.
constexpr std::size_t kCoverageSamples = 4096;
constexpr std::uint64_t kCoverageSeed = 0x5eed'c0de;

Expression compile(const ExprSpec& spec, int dim, bool time) {
  try {
    return Expression(spec.text, dim, time);
  } catch (const ExpressionError& e) {
    throw InputError(spec.loc, spec.key, "invalid expression \"" + spec.text + "\": " + e.what());
  }
}

// An expression made from a checked one (e.g. k² from k): compiled after `spec` itself, so that
// an error names the text the user wrote.
Expression compile_derived(const ExprSpec& spec, const std::string& text, int dim, bool time) {
  compile(spec, dim, time);
  return compile(ExprSpec{text, spec.key, spec.loc}, dim, time);
}

// True when e is a constant equal to v.
bool constant_equal(const Expression& e, double v) {
  const double zero[4] = {0, 0, 0, 0};
  return e.is_constant() && e(zero) == v;
}

// A `where` holds where it is non-zero; NaN (e.g. from 0/0) does not count as holding.
bool holds(double v) { return v != 0 && !std::isnan(v); }

// "problem.boundary[1].value" → "problem.boundary[1].type": the entry's own keys are siblings.
std::string sibling_key(const std::string& key, const std::string& name, std::size_t index) {
  const auto dot = key.rfind('.');
  if (key.empty() || dot == std::string::npos)
    return "problem.boundary[" + std::to_string(index) + "]." + name;
  return key.substr(0, dot + 1) + name;
}

bool is_csg(const std::string& t) {
  return t == "union" || t == "difference" || t == "intersection";
}

// The dimension a domain spec lives in: fixed by its type, by its first operand (composites) or
// by its file (points). 0 when it cannot be told.
int spec_dim(const DomainSpec& spec) {
  const std::string& t = spec.type;
  if (t == "rectangle" || t == "disk" || t == "polygon") return 2;
  if (t == "box" || t == "ball") return 3;
  if (is_csg(t)) return spec.domains.empty() ? 0 : spec_dim(spec.domains.front());
  if (t == "points") return spec.cloud ? spec.cloud->dim : 0;
  return 0;
}

std::unique_ptr<Domain> build_domain(const DomainSpec& spec, int dim, bool nested = false) {
  const std::string& t = spec.type;
  const bool is2d = t == "rectangle" || t == "disk" || t == "polygon";
  const bool is3d = t == "box" || t == "ball";
  if (!is2d && !is3d && !is_csg(t) && t != "points") {
    throw InputError(spec.loc, spec.key + ".type",
                     "unknown domain type '" + t +
                         "'; expected rectangle, disk, polygon (2D), box, ball (3D), union, "
                         "difference, intersection or points");
  }
  if (dim != 2 && dim != 3) {
    throw InputError(spec.loc, spec.key, "dimension must be 2 or 3, found " + std::to_string(dim));
  }
  if ((is2d && dim != 2) || (is3d && dim != 3)) {
    throw InputError(spec.loc, spec.key + ".type",
                     "'" + t + "' is a " + (is2d ? "2D" : "3D") + " domain but the problem is " +
                         std::to_string(dim) + "D");
  }
  const std::size_t d = static_cast<std::size_t>(dim);
  try {
    if (t == "points") {
      if (nested) throw std::invalid_argument("a point cloud cannot be part of a composite");
      PointCloudData data = spec.cloud ? *spec.cloud : read_point_cloud(spec.file);
      if (data.dim != dim) {
        throw std::invalid_argument(spec.file + " holds " + std::to_string(data.dim) +
                                    "D points but the problem is " + std::to_string(dim) + "D");
      }
      return make_point_cloud(std::move(data));
    }
    if (is_csg(t)) {
      std::vector<std::unique_ptr<Domain>> parts;
      for (const DomainSpec& part : spec.domains) {
        const int part_dim = spec_dim(part);
        if (part_dim != 0 && part_dim != dim) {
          throw InputError(part.loc, part.key + ".type",
                           "expected a " + std::to_string(dim) + "D domain (as " + spec.key +
                               ".domains[0]), found a " + std::to_string(part_dim) + "D " +
                               part.type);
        }
        parts.push_back(build_domain(part, dim, true));
      }
      return make_csg(t, std::move(parts));
    }
    if (t == "rectangle" || t == "box") {
      if (spec.min.size() != d || spec.max.size() != d) {
        throw std::invalid_argument(
            "a " + t + " needs " + std::to_string(d) + " entries in min and max, found " +
            std::to_string(spec.min.size()) + " and " + std::to_string(spec.max.size()));
      }
      return make_box(spec.min, spec.max);
    }
    if (t == "disk" || t == "ball") {
      if (spec.centre.size() != d) {
        throw std::invalid_argument("a " + t + " needs " + std::to_string(d) +
                                    " entries in centre, found " +
                                    std::to_string(spec.centre.size()));
      }
      return make_ball(spec.centre, spec.radius);
    }
    return make_polygon(spec.vertices);
  } catch (const std::invalid_argument& e) {
    throw InputError(spec.loc, t == "points" ? spec.key + ".file" : spec.key, e.what());
  }
}

}  // namespace

Problem Problem::build(const ProblemSpec& spec) {
  Problem problem;
  const bool time = spec.time.has_value();
  const int dim = spec.dim;
  const int space_dim = spec.space_dim();
  problem.dim_ = dim;
  problem.space_dim_ = space_dim;
  problem.has_time_ = time;
  std::shared_ptr<const Domain> space = build_domain(spec.domain, space_dim);
  if (time) {
    if (!(spec.time->start < spec.time->end)) {
      throw InputError(spec.time->loc, "problem.time",
                       "expected start < end, found start " + std::to_string(spec.time->start) +
                           " and end " + std::to_string(spec.time->end));
    }
    problem.domain_ = std::make_shared<SpaceTimeDomain>(space, spec.time->start, spec.time->end);
  } else {
    problem.domain_ = space;
  }

  // The equation as the linear row a·Δₛu + b·∇u + c·u = f.
  const std::string& eq = spec.equation;
  const std::string zero_text = "0";
  if (eq == "poisson") {
    problem.f_ = compile(spec.f, dim, time);
  } else if (eq == "helmholtz") {
    if (!spec.k) throw InputError(spec.equation_loc, "problem.equation.k", "expected k for helmholtz");
    problem.f_ = compile(spec.f, dim, time);
    problem.c_ = compile_derived(*spec.k, "(" + spec.k->text + ")^2", dim, time);
  } else if (eq == "heat") {
    if (!time) {
      throw InputError(spec.equation_loc, "problem.equation.type",
                       "expected problem.time for the heat equation (time: {start, end})");
    }
    if (!spec.diffusivity) {
      throw InputError(spec.equation_loc, "problem.equation.diffusivity",
                       "expected the diffusivity for heat");
    }
    // ∂u/∂t = κΔₛu + f  ⇔  κ·Δₛu − ∂u/∂t = −f.
    problem.f_ = compile_derived(spec.f, "-(" + spec.f.text + ")", dim, time);
    problem.a_ = compile(*spec.diffusivity, dim, time);
    problem.b_.assign(std::size_t(dim), Expression(zero_text, dim, time));
    problem.b_.back() = Expression("-1", dim, time);
  } else if (eq == "linear") {
    problem.f_ = compile(spec.f, dim, time);
    if (spec.a) problem.a_ = compile(*spec.a, dim, time);
    if (spec.c) problem.c_ = compile(*spec.c, dim, time);
    if (!spec.b.empty()) {
      if (int(spec.b.size()) != dim) {
        throw InputError(spec.b_loc, "problem.equation.b",
                         "expected " + std::to_string(dim) + " expressions (one per coordinate" +
                             std::string(time ? ", t included" : "") + "), found " +
                             std::to_string(spec.b.size()));
      }
      for (const ExprSpec& b : spec.b) problem.b_.push_back(compile(b, dim, time));
    }
  } else {
    throw InputError(spec.equation_loc, "problem.equation.type",
                     "unsupported equation '" + eq + "'; expected poisson, helmholtz, heat or linear");
  }
  if (problem.a_.empty()) problem.a_ = Expression("1", dim, time);
  if (problem.c_.empty()) problem.c_ = Expression(zero_text, dim, time);
  problem.default_a_ = constant_equal(problem.a_, 1.0);
  problem.default_c_ = constant_equal(problem.c_, 0.0);
  problem.default_b_ = true;
  for (const Expression& b : problem.b_) problem.default_b_ = problem.default_b_ && constant_equal(b, 0.0);
  if (problem.default_b_) problem.b_.clear();

  if (spec.exact) problem.exact_ = compile(*spec.exact, dim, time);
  if (time) {
    if (!spec.initial) {
      throw InputError(spec.time->loc, "problem.initial",
                       "expected an initial condition (u at t = start) with time");
    }
    problem.initial_ = compile(*spec.initial, dim, time);
  } else if (spec.initial) {
    throw InputError(spec.initial->loc, spec.initial->key,
                     "expected no initial condition without problem.time");
  }

  if (spec.boundary.empty()) {
    throw InputError(SourceLoc{spec.domain.loc.file, 0, 0}, "problem.boundary",
                     "expected at least one boundary condition");
  }
  bool pins_constant = time || !problem.default_c_;
  problem.default_alpha_ = problem.default_beta_ = true;
  for (std::size_t i = 0; i < spec.boundary.size(); ++i) {
    const BoundarySpec& b = spec.boundary[i];
    BoundaryCondition bc;
    bc.type = b.type;
    bc.value = compile(b.value, dim, time);
    if (b.type == "dirichlet") {
      bc.alpha = Expression("1", dim, time);
      bc.beta = Expression(zero_text, dim, time);
    } else if (b.type == "neumann") {
      bc.alpha = Expression(zero_text, dim, time);
      bc.beta = Expression("1", dim, time);
    } else if (b.type == "robin") {
      if (b.alpha.text.empty()) {
        throw InputError(b.loc, sibling_key(b.value.key, "alpha", i),
                         "expected alpha for a robin condition (alpha·u + beta·∂u/∂n = value)");
      }
      bc.alpha = compile(b.alpha, dim, time);
      bc.beta = b.beta.text.empty() ? Expression("1", dim, time) : compile(b.beta, dim, time);
    } else {
      throw InputError(b.value.loc, sibling_key(b.value.key, "type", i),
                       "unsupported boundary type '" + b.type +
                           "'; expected dirichlet, neumann or robin");
    }
    pins_constant = pins_constant || !constant_equal(bc.alpha, 0.0);
    problem.default_alpha_ = problem.default_alpha_ && constant_equal(bc.alpha, 1.0);
    problem.default_beta_ = problem.default_beta_ && constant_equal(bc.beta, 0.0);
    if (!b.where.text.empty()) {
      bc.where = compile(b.where, dim, time);
      // A constant non-zero `where` (e.g. the default "1") needs no evaluation per point.
      const double zero[4] = {0, 0, 0, 0};
      bc.everywhere = bc.where.is_constant() && holds(bc.where(zero));
    }
    problem.boundary_.push_back(std::move(bc));
  }
  // With only ∂u/∂n on the boundary and no reaction term, u + constant solves the problem as
  // well as u: refused rather than fixed by an arbitrary choice of the constant.
  if (!pins_constant) {
    throw InputError(spec.boundary_loc.file.empty() ? SourceLoc{spec.domain.loc.file, 0, 0}
                                                    : spec.boundary_loc,
                     "problem.boundary",
                     "expected a dirichlet entry, a robin entry with alpha ≠ 0, or a reaction term "
                     "c ≠ 0: with only Neumann conditions the solution is fixed only up to an "
                     "added constant");
  }
  problem.poisson_dirichlet_ = !time && problem.default_a_ && problem.default_b_ &&
                               problem.default_c_ && problem.default_alpha_ &&
                               problem.default_beta_;

  // Coverage: every `where` must select something, and together they must cover the boundary
  // (with time, its lateral part: the initial face takes the initial condition).
  Rng rng(kCoverageSeed);
  std::vector<double> all_points(kCoverageSamples * dim), all_normals(kCoverageSamples * dim);
  problem.domain_->sample_boundary(rng, kCoverageSamples, all_points.data(), all_normals.data());
  std::vector<double> points;
  for (std::size_t j = 0; j < kCoverageSamples; ++j) {
    if (problem.on_initial_face(&all_normals[j * dim])) continue;
    points.insert(points.end(), all_points.begin() + j * dim, all_points.begin() + (j + 1) * dim);
  }
  const std::size_t n_cover = points.size() / std::size_t(dim);
  std::vector<double> values(n_cover);
  for (std::size_t i = 0; i < problem.boundary_.size(); ++i) {
    const BoundaryCondition& bc = problem.boundary_[i];
    if (bc.everywhere) continue;
    bc.where.evaluate(points.data(), n_cover, values.data());
    bool any = false;
    for (double v : values) any = any || holds(v);
    if (!any) {
      const ExprSpec& where = spec.boundary[i].where;
      std::string message = "holds at no boundary point";
      if (where.text.find("==") != std::string::npos) {
        message +=
            "; sampled points rarely equal a value exactly, compare with a tolerance, e.g. "
            "abs(x - 1) < 1e-9";
      }
      throw InputError(where.loc, where.key, message);
    }
  }
  for (std::size_t j = 0; j < n_cover; ++j) {
    const double* x = points.data() + j * dim;
    if (problem.boundary_entry(x) < 0) {
      const BoundarySpec& last = spec.boundary.back();
      const bool has_key = !last.where.key.empty();
      throw InputError(has_key ? last.where.loc : SourceLoc{spec.domain.loc.file, 0, 0},
                       has_key ? last.where.key : "problem.boundary",
                       "no boundary entry applies at " + point_text(x, dim) +
                           "; add an entry without 'where' to cover the rest");
    }
  }
  return problem;
}

bool Problem::on_initial_face(const double* normal) const {
  return has_time_ && normal[dim_ - 1] == -1.0;
}

int Problem::boundary_entry(const double* x) const {
  for (std::size_t i = 0; i < boundary_.size(); ++i) {
    const BoundaryCondition& bc = boundary_[i];
    if (bc.everywhere || holds(bc.where(x))) return static_cast<int>(i);
  }
  return -1;
}

void Problem::sample(Rng& rng, std::size_t n_interior, std::size_t n_boundary,
                     CollocationBatch& batch) const {
  const std::size_t d = static_cast<std::size_t>(dim_);
  batch.dim = dim_;
  batch.space_dim = has_time_ ? space_dim_ : 0;
  batch.interior.resize(n_interior * d);
  batch.f.resize(n_interior);
  batch.boundary.resize(n_boundary * d);
  batch.normals.resize(n_boundary * d);
  batch.p.resize(n_boundary);
  // Interior first, then boundary: the order of draws is part of "same seed, same batch".
  domain_->sample_interior(rng, n_interior, batch.interior.data());
  f_.evaluate(batch.interior.data(), n_interior, batch.f.data());
  domain_->sample_boundary(rng, n_boundary, batch.boundary.data(), batch.normals.data());

  for (std::size_t j = 0; j < n_boundary; ++j) {
    const double* x = batch.boundary.data() + j * d;
    if (on_initial_face(batch.normals.data() + j * d)) {
      batch.p[j] = (*initial_)(x);  // a Dirichlet row: α = 1, β = 0
      continue;
    }
    const int e = boundary_entry(x);
    batch.p[j] = e < 0 ? std::nan("") : boundary_[e].value(x);
  }
  fill_coefficients(batch);
}

void Problem::fill_missing_coefficients(CollocationBatch& batch) const {
  if (batch.a.empty() && batch.b.empty() && batch.c.empty() && batch.alpha.empty() &&
      batch.beta.empty())
    fill_coefficients(batch);
}

void Problem::fill_coefficients(CollocationBatch& batch) const {
  const std::size_t d = static_cast<std::size_t>(dim_);
  const std::size_t n_interior = batch.n_interior(), n_boundary = batch.n_boundary();
  batch.space_dim = has_time_ ? space_dim_ : 0;
  const auto fill = [&](const Expression& e, bool default_value, std::vector<double>& out) {
    if (default_value) {
      out.clear();
      return;
    }
    out.resize(n_interior);
    e.evaluate(batch.interior.data(), n_interior, out.data());
  };
  fill(a_, default_a_, batch.a);
  fill(c_, default_c_, batch.c);
  if (default_b_) {
    batch.b.clear();
  } else {
    batch.b.resize(n_interior * d);
    std::vector<double> column(n_interior);
    for (std::size_t k = 0; k < d; ++k) {
      b_[k].evaluate(batch.interior.data(), n_interior, column.data());
      for (std::size_t i = 0; i < n_interior; ++i) batch.b[i * d + k] = column[i];
    }
  }
  // The initial face's rows and points no entry covers keep α = 1, β = 0.
  batch.alpha.assign(default_alpha_ ? 0 : n_boundary, 1.0);
  batch.beta.assign(default_beta_ ? 0 : n_boundary, 0.0);
  if (default_alpha_ && default_beta_) return;
  for (std::size_t j = 0; j < n_boundary; ++j) {
    const double* x = batch.boundary.data() + j * d;
    if (on_initial_face(batch.normals.data() + j * d)) continue;
    const int e = boundary_entry(x);
    if (e < 0) continue;
    if (!default_alpha_) batch.alpha[j] = boundary_[e].alpha(x);
    if (!default_beta_) batch.beta[j] = boundary_[e].beta(x);
  }
}

void Problem::interior_residuals(const double* points, std::size_t n, const double* u,
                                 const double* gradient, const double* laplacian,
                                 double* out) const {
  const std::size_t d = std::size_t(dim_);
  f_.evaluate(points, n, out);
  if (poisson_dirichlet_) {
    for (std::size_t i = 0; i < n; ++i) out[i] = laplacian[i] - out[i];
    return;
  }
  for (std::size_t i = 0; i < n; ++i) {
    const double* x = points + i * d;
    double row = (default_a_ ? 1.0 : a_(x)) * laplacian[i];
    if (!default_c_) row += c_(x) * u[i];
    if (!default_b_)
      for (std::size_t k = 0; k < d; ++k) row += b_[k](x) * gradient[i * d + k];
    out[i] = row - out[i];
  }
}

void Problem::boundary_residuals(const double* points, const double* normals, std::size_t n,
                                 const double* u, const double* gradient, double* out) const {
  const std::size_t d = std::size_t(dim_);
  for (std::size_t j = 0; j < n; ++j) {
    const double* x = points + j * d;
    const double* nrm = normals + j * d;
    if (on_initial_face(nrm)) {
      out[j] = u[j] - (*initial_)(x);
      continue;
    }
    const int e = boundary_entry(x);
    if (e < 0) {
      out[j] = std::nan("");
      continue;
    }
    const BoundaryCondition& bc = boundary_[e];
    double row = (default_alpha_ ? 1.0 : bc.alpha(x)) * u[j];
    if (!default_beta_) {
      double dn = 0;
      for (std::size_t k = 0; k < d; ++k) dn += gradient[j * d + k] * nrm[k];
      row += bc.beta(x) * dn;
    }
    out[j] = row - bc.value(x);
  }
}

void batch_residuals(const CollocationBatch& batch, const std::vector<double>& u_interior,
                     const std::vector<double>& grad_interior,
                     const std::vector<double>& laplacian, const std::vector<double>& u_boundary,
                     const std::vector<double>& grad_boundary, std::vector<double>& e,
                     std::vector<double>& r) {
  const std::size_t d = std::size_t(batch.dim);
  const std::size_t n = batch.n_interior(), k = batch.n_boundary();
  e.resize(n);
  r.resize(k);
  for (std::size_t i = 0; i < n; ++i) {
    double row = batch.a.empty() ? laplacian[i] : batch.a[i] * laplacian[i];
    if (!batch.c.empty()) row += batch.c[i] * u_interior[i];
    if (!batch.b.empty())
      for (std::size_t j = 0; j < d; ++j) row += batch.b[i * d + j] * grad_interior[i * d + j];
    e[i] = row - batch.f[i];
  }
  for (std::size_t i = 0; i < k; ++i) {
    double row = batch.alpha.empty() ? u_boundary[i] : batch.alpha[i] * u_boundary[i];
    if (!batch.beta.empty()) {
      double dn = 0;
      for (std::size_t j = 0; j < d; ++j) dn += grad_boundary[i * d + j] * batch.normals[i * d + j];
      row += batch.beta[i] * dn;
    }
    r[i] = row - batch.p[i];
  }
}

void check_batch_sizes(const CollocationBatch& batch, int dim) {
  const std::size_t n = batch.n_interior(), k = batch.n_boundary(), d = std::size_t(dim);
  auto check = [](const char* what, std::size_t got, std::size_t want, bool may_be_empty) {
    if (got == want || (may_be_empty && got == 0)) return;
    throw std::invalid_argument(std::string("batch with ") + std::to_string(got) + " " + what +
                                ", expected " + std::to_string(want) +
                                (may_be_empty ? " or none" : ""));
  };
  check("interior coordinates", batch.interior.size(), n * d, false);
  check("boundary coordinates", batch.boundary.size(), k * d, false);
  check("values of a", batch.a.size(), n, true);
  check("values of b", batch.b.size(), n * d, true);
  check("values of c", batch.c.size(), n, true);
  check("values of alpha", batch.alpha.size(), k, true);
  check("values of beta", batch.beta.size(), k, true);
  bool flux = false;
  for (double v : batch.beta) flux = flux || v != 0;
  if (flux) check("normal components", batch.normals.size(), k * d, false);
  if (batch.space_dim < 0 || batch.space_dim > batch.dim)
    throw std::invalid_argument("batch with space_dim " + std::to_string(batch.space_dim) +
                                " outside 0 … " + std::to_string(batch.dim));
}

}  // namespace rbfpde
