// Problem::build turns the typed spec into compiled expressions and a domain, and checks up front
// what would otherwise surface as a silent NaN target or an untrained boundary mid-training.
#include "problems/problem.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace rbfpde {

namespace {

// Boundary points drawn to check that the `where` entries cover the boundary. Fixed seed: the
// same config is accepted or rejected every time.
constexpr std::size_t kCoverageSamples = 4096;
constexpr std::uint64_t kCoverageSeed = 0x5eed'c0de;

Expression compile(const ExprSpec& spec, int dim) {
  try {
    return Expression(spec.text, dim);
  } catch (const ExpressionError& e) {
    throw InputError(spec.loc, spec.key, "invalid expression \"" + spec.text + "\": " + e.what());
  }
}

// A `where` holds where it is non-zero; NaN (e.g. from 0/0) does not count as holding.
bool holds(double v) { return v != 0 && !std::isnan(v); }

std::string point_str(const double* x, int dim) {
  std::string s = "(";
  char buf[32];
  for (int k = 0; k < dim; ++k) {
    std::snprintf(buf, sizeof buf, "%.6g", x[k]);
    s += (k ? ", " : "") + std::string(buf);
  }
  return s + ")";
}

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
  problem.dim_ = spec.dim;
  problem.domain_ = build_domain(spec.domain, spec.dim);
  const int dim = spec.dim;

  if (spec.equation != "poisson") {
    throw InputError(spec.f.loc, "problem.equation.type",
                     "unsupported equation '" + spec.equation + "'; expected poisson");
  }
  problem.f_ = compile(spec.f, dim);
  if (spec.exact) problem.exact_ = compile(*spec.exact, dim);

  if (spec.boundary.empty()) {
    throw InputError(SourceLoc{spec.domain.loc.file, 0, 0}, "problem.boundary",
                     "expected at least one boundary condition");
  }
  for (std::size_t i = 0; i < spec.boundary.size(); ++i) {
    const BoundarySpec& b = spec.boundary[i];
    if (b.type != "dirichlet") {
      throw InputError(b.value.loc, sibling_key(b.value.key, "type", i),
                       "unsupported boundary type '" + b.type + "'; expected dirichlet");
    }
    BoundaryCondition bc;
    bc.type = b.type;
    bc.value = compile(b.value, dim);
    if (!b.where.text.empty()) {
      bc.where = compile(b.where, dim);
      // A constant non-zero `where` (e.g. the default "1") needs no evaluation per point.
      const double zero[3] = {0, 0, 0};
      bc.everywhere = bc.where.is_constant() && holds(bc.where(zero));
    }
    problem.boundary_.push_back(std::move(bc));
  }

  // Coverage: every `where` must select something, and together they must cover the boundary.
  Rng rng(kCoverageSeed);
  std::vector<double> points(kCoverageSamples * dim), normals(kCoverageSamples * dim);
  problem.domain_->sample_boundary(rng, kCoverageSamples, points.data(), normals.data());
  std::vector<double> values(kCoverageSamples);
  for (std::size_t i = 0; i < problem.boundary_.size(); ++i) {
    const BoundaryCondition& bc = problem.boundary_[i];
    if (bc.everywhere) continue;
    bc.where.evaluate(points.data(), kCoverageSamples, values.data());
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
  for (std::size_t j = 0; j < kCoverageSamples; ++j) {
    const double* x = points.data() + j * dim;
    if (problem.boundary_entry(x) < 0) {
      const BoundarySpec& last = spec.boundary.back();
      const bool has_key = !last.where.key.empty();
      throw InputError(has_key ? last.where.loc : SourceLoc{spec.domain.loc.file, 0, 0},
                       has_key ? last.where.key : "problem.boundary",
                       "no boundary entry applies at " + point_str(x, dim) +
                           "; add an entry without 'where' to cover the rest");
    }
  }
  return problem;
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
    const int e = boundary_entry(x);
    batch.p[j] = e < 0 ? std::nan("") : boundary_[e].value(x);
  }
}

}  // namespace rbfpde
