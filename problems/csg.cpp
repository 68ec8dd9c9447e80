// Constructive solid geometry: union, difference (the first part minus the others) and
// intersection of domains, nested freely. The composite keeps its parts as Domains and flattens
// the primitives at its leaves into one list, so that a point's membership can be decided per
// primitive and then combined by the tree.
//
// Boundary sampling (uniform by length or area over exactly the parts of the primitives'
// boundaries that bound the result): propose a primitive with probability proportional to its
// whole boundary measure and a uniform point x on it with the primitive's outward normal n; probe
// the result at x − h·n and x + h·n (h = 10⁻⁹ of the bounding-box diagonal), with the proposing
// primitive taken as inside at the first and outside at the second. The point bounds the result
// when exactly one probe is inside and x itself is in the closed result (every primitive asked at
// x, the proposing one counted as on the result's side); the result's outward normal is n when
// x − h·n is the inside one, −n otherwise (a subtracted part's normal points into the hole). A
// piece of boundary that two primitives share (coincident faces) belongs to the first of them in
// leaf order: a proposal is dropped when an earlier primitive's boundary also passes through x, so
// the piece is not drawn twice as often. The accepted points are uniform over the accepted set
// because the proposals are uniform over the disjoint union of the primitives' boundaries.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>

#include "problems/domain.hpp"
#include "problems/domain_shapes.hpp"
#include "problems/sample_util.hpp"

namespace rbfpde {

namespace {

// Monte-Carlo estimates of composite measures: fixed seeds, so a config is judged the same way
// every time.
constexpr std::size_t kMeasureSamples = std::size_t(1) << 20;
constexpr std::uint64_t kMeasureSeed = 0xc5'9e0a'5eedULL;
constexpr std::size_t kBoundaryProbeSamples = std::size_t(1) << 16;
constexpr std::uint64_t kBoundarySeed = 0xb0'0da4'5eedULL;
// Rejection sampling must accept at least this fraction of proposals.
constexpr double kMinAcceptance = 1e-3;
// A proposal loop that fails this often for one point means a broken domain, not bad luck: with
// an acceptance of at least 10⁻³ the chance is below e^(−1000).
constexpr long kMaxTries = 1'000'000;
// Primitives in one composite (the boundary sampler keeps flags per primitive on the stack).
constexpr std::size_t kMaxLeaves = kMaxCsgLeaves;

enum class Op { Union, Difference, Intersection };

const char* op_name(Op op) {
  return op == Op::Union ? "union" : op == Op::Difference ? "difference" : "intersection";
}

double box_volume(const double* lo, const double* hi, int dim) {
  double v = 1;
  for (int k = 0; k < dim; ++k) v *= hi[k] - lo[k];
  return v;
}

class Csg final : public Domain {
 public:
  Csg(Op op, std::vector<std::unique_ptr<Domain>> parts) : op_(op), parts_(std::move(parts)) {
    dim_ = parts_.front()->dim();
    for (const auto& part : parts_) {
      const Csg* nested = dynamic_cast<const Csg*>(part.get());
      if (nested) {
        leaves_.insert(leaves_.end(), nested->leaves_.begin(), nested->leaves_.end());
      } else {
        Leaf leaf;
        leaf.domain = part.get();
        leaf.boundary_measure = primitive_boundary_measure(part->geometry());
        leaves_.push_back(leaf);
      }
    }
    const DomainGeometry tree = geometry();
    std::vector<const DomainGeometry*> leaf_geometry;
    program_ = csg_program(tree, leaf_geometry);
    // Bounding box: of all parts (union), their overlap (intersection), the first (difference).
    double lo[3], hi[3];
    parts_[0]->bounding_box(lo_, hi_);
    for (std::size_t i = 1; i < parts_.size() && op_ != Op::Difference; ++i) {
      parts_[i]->bounding_box(lo, hi);
      for (int k = 0; k < dim_; ++k) {
        if (op_ == Op::Union) {
          lo_[k] = std::min(lo_[k], lo[k]), hi_[k] = std::max(hi_[k], hi[k]);
        } else {
          lo_[k] = std::max(lo_[k], lo[k]), hi_[k] = std::min(hi_[k], hi[k]);
        }
      }
    }
    for (int k = 0; k < dim_; ++k) {
      if (!(lo_[k] < hi_[k])) {
        throw std::invalid_argument(
            "the intersection is empty: the bounding boxes of its domains do not overlap");
      }
    }
    double diag2 = 0;
    for (int k = 0; k < dim_; ++k) diag2 += (hi_[k] - lo_[k]) * (hi_[k] - lo_[k]);
    tol_ = 1e-12 * std::sqrt(diag2);
    probe_ = 1e-9 * std::sqrt(diag2);
    cumulative_.push_back(0);
    for (const Leaf& leaf : leaves_)
      cumulative_.push_back(cumulative_.back() + leaf.boundary_measure);

    if (const std::optional<double> exact = exact_measure()) {
      measure_ = *exact;
    } else {
      Rng rng(kMeasureSeed);
      const std::size_t inside = count_inside(rng, kMeasureSamples, lo_, hi_, dim_,
                                              [this](const double* x) { return contains(x); });
      measure_ = box_volume(lo_, hi_, dim_) * double(inside) / double(kMeasureSamples);
    }
    const double fill = measure_ / box_volume(lo_, hi_, dim_);
    if (!(measure_ > 0)) {
      throw std::invalid_argument(std::string("the ") + op_name(op_) +
                                  " is empty (no point of its bounding box lies inside it)");
    }
    if (fill < kMinAcceptance) {
      char buf[160];
      std::snprintf(buf, sizeof buf,
                    "the %s fills only %.2g %% of its bounding box; sampling it by rejection "
                    "would be too slow",
                    op_name(op_), 100 * fill);
      throw std::invalid_argument(buf);
    }
    // The fraction of the primitives' boundaries that bounds the result.
    Rng rng(kBoundarySeed);
    std::size_t accepted = 0;
    double x[3], n[3];
    for (std::size_t i = 0; i < kBoundaryProbeSamples; ++i) accepted += propose_boundary(rng, x, n);
    boundary_fraction_ = double(accepted) / double(kBoundaryProbeSamples);
    if (boundary_fraction_ < kMinAcceptance) {
      throw std::invalid_argument(std::string("the ") + op_name(op_) +
                                  " has (almost) no boundary: the boundaries of its domains do not "
                                  "bound it");
    }
  }

  int dim() const override { return dim_; }
  std::string type() const override { return op_name(op_); }

  bool contains(const double* x) const override { return signed_distance(x) <= tol_; }

  double distance_to_boundary(const double* x) const override {
    return std::abs(signed_distance(x));
  }

  void sample_interior(Rng& rng, std::size_t n, double* points) const override {
    for (std::size_t i = 0; i < n; ++i) {
      double* x = points + i * dim_;
      long tries = 0;
      do {
        if (++tries > kMaxTries) fail_rejection("interior");
        for (int k = 0; k < dim_; ++k) x[k] = uniform(rng, lo_[k], hi_[k]);
      } while (!contains(x));
    }
  }

  void sample_boundary(Rng& rng, std::size_t n, double* points, double* normals) const override {
    for (std::size_t i = 0; i < n; ++i) {
      long tries = 0;
      while (!propose_boundary(rng, points + i * dim_, normals + i * dim_)) {
        if (++tries > kMaxTries) fail_rejection("boundary");
      }
    }
  }

  void bounding_box(double* lo, double* hi) const override {
    for (int k = 0; k < dim_; ++k) lo[k] = lo_[k], hi[k] = hi_[k];
  }

  double measure() const override { return measure_; }

  DomainGeometry geometry() const override {
    DomainGeometry g;
    g.type = type();
    g.dim = dim_;
    g.lo.assign(lo_, lo_ + dim_);
    g.hi.assign(hi_, hi_ + dim_);
    for (const auto& part : parts_) g.parts.push_back(part->geometry());
    return g;
  }

  // Negative inside, positive outside, zero on the boundary (see domain.hpp for its accuracy).
  double signed_distance(const double* x) const {
    return csg_evaluate<double>(program_.data(), int(program_.size()), [&](int j) {
      const Domain& leaf = *leaves_[j].domain;
      const double d = leaf.distance_to_boundary(x);
      return leaf.contains(x) ? -d : d;
    });
  }

 private:
  struct Leaf {
    const Domain* domain = nullptr;
    double boundary_measure = 0;
  };

  // One proposal of the boundary sampler (see the top of the file); true when kept.
  bool propose_boundary(Rng& rng, double* x, double* normal) const {
    const int leaves = int(leaves_.size()), length = int(program_.size());
    const CsgShape shape{program_.data(), length, leaves, cumulative_.data(), dim_, probe_};
    return csg_propose_boundary(
        shape, uniform01(rng),
        [&](int leaf, double* p, double* m) {
          leaves_[leaf].domain->sample_boundary(rng, 1, p, m);
        },
        [&](int j, const double* p) { return leaves_[j].domain->contains(p); }, x, normal);
  }

  [[noreturn]] void fail_rejection(const char* what) const {
    throw std::runtime_error(std::string("sampling the ") + what + " of the " + op_name(op_) +
                             " by rejection accepted nothing in " + std::to_string(kMaxTries) +
                             " tries");
  }

  // Exact measure when the parts' relations can be proven cheaply, else nothing.
  std::optional<double> exact_measure() const;

  Op op_;
  std::vector<std::unique_ptr<Domain>> parts_;
  std::vector<Leaf> leaves_;
  std::vector<int> program_;  // membership and signed distance over leaves_ (domain_shapes.hpp)
  std::vector<double> cumulative_;  // leaves' boundary measure up to leaf i
  int dim_ = 2;
  double lo_[3] = {0, 0, 0}, hi_[3] = {0, 0, 0};
  double tol_ = 0, probe_ = 0;
  double measure_ = 0;
  double boundary_fraction_ = 0;
};

bool is_composite(const DomainGeometry& g) {
  return g.type == "union" || g.type == "difference" || g.type == "intersection";
}

void append_program(const DomainGeometry& g, std::vector<int>& program,
                    std::vector<const DomainGeometry*>& leaves) {
  if (!is_composite(g)) {
    program.push_back(int(leaves.size()));
    leaves.push_back(&g);
    return;
  }
  const int op = g.type == "union"          ? kCsgUnion
                 : g.type == "intersection" ? kCsgIntersection
                                            : kCsgDifference;
  for (std::size_t i = 0; i < g.parts.size(); ++i) {
    append_program(g.parts[i], program, leaves);
    if (i > 0) program.push_back(op);
  }
}

bool is_box(const DomainGeometry& g) { return g.type == "rectangle" || g.type == "box"; }
bool is_ball(const DomainGeometry& g) { return g.type == "disk" || g.type == "ball"; }

double distance(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t k = 0; k < a.size(); ++k) s += (a[k] - b[k]) * (a[k] - b[k]);
  return std::sqrt(s);
}

// Distance from p to the box [lo, hi] (0 inside).
double distance_to_box(const std::vector<double>& p, const std::vector<double>& lo,
                       const std::vector<double>& hi) {
  double s = 0;
  for (std::size_t k = 0; k < p.size(); ++k) {
    const double out = std::max({lo[k] - p[k], p[k] - hi[k], 0.0});
    s += out * out;
  }
  return std::sqrt(s);
}

// The two domains share no interior point (touching is fine: it has no measure).
bool provably_disjoint(const DomainGeometry& a, const DomainGeometry& b) {
  for (std::size_t k = 0; k < a.lo.size(); ++k)
    if (a.hi[k] <= b.lo[k] || b.hi[k] <= a.lo[k]) return true;
  if (is_ball(a) && is_ball(b)) return distance(a.centre, b.centre) >= a.radius + b.radius;
  if (is_ball(a) && is_box(b)) return distance_to_box(a.centre, b.lo, b.hi) >= a.radius;
  if (is_box(a) && is_ball(b)) return distance_to_box(b.centre, a.lo, a.hi) >= b.radius;
  return false;
}

// b lies within a. Only for a box or ball a: both are convex, so b's bounding box inside a is
// enough.
bool provably_inside(const DomainGeometry& b, const DomainGeometry& a) {
  if (is_ball(a) && is_ball(b)) return distance(a.centre, b.centre) + b.radius <= a.radius;
  if (!is_box(a) && !is_ball(a)) return false;
  const std::size_t d = b.lo.size();
  for (std::size_t corner = 0; corner < (std::size_t(1) << d); ++corner) {
    std::vector<double> p(d);
    for (std::size_t k = 0; k < d; ++k) p[k] = (corner >> k) & 1 ? b.hi[k] : b.lo[k];
    if (is_box(a)) {
      for (std::size_t k = 0; k < d; ++k)
        if (p[k] < a.lo[k] || p[k] > a.hi[k]) return false;
    } else if (distance(p, a.centre) > a.radius) {
      return false;
    }
  }
  return true;
}

std::optional<double> Csg::exact_measure() const {
  std::vector<DomainGeometry> g;
  for (const auto& part : parts_) g.push_back(part->geometry());
  auto exact_of = [&](std::size_t i) -> std::optional<double> {
    if (const Csg* nested = dynamic_cast<const Csg*>(parts_[i].get())) {
      return nested->exact_measure();
    }
    return parts_[i]->measure();
  };
  if (op_ == Op::Union) {
    double total = 0;
    for (std::size_t i = 0; i < parts_.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j)
        if (!provably_disjoint(g[i], g[j])) return std::nullopt;
      const std::optional<double> m = exact_of(i);
      if (!m) return std::nullopt;
      total += *m;
    }
    return total;
  }
  if (op_ == Op::Difference) {
    std::optional<double> total = exact_of(0);
    if (!total) return std::nullopt;
    std::vector<std::size_t> holes;
    for (std::size_t i = 1; i < parts_.size(); ++i) {
      if (provably_disjoint(g[i], g[0])) continue;
      if (!provably_inside(g[i], g[0])) return std::nullopt;
      for (std::size_t j : holes)
        if (!provably_disjoint(g[i], g[j])) return std::nullopt;
      const std::optional<double> m = exact_of(i);
      if (!m) return std::nullopt;
      *total -= *m;
      holes.push_back(i);
    }
    return total;
  }
  // Intersection: exact when one part lies within all the others.
  for (std::size_t i = 0; i < parts_.size(); ++i) {
    bool within_all = true;
    for (std::size_t j = 0; j < parts_.size() && within_all; ++j)
      within_all = j == i || provably_inside(g[i], g[j]);
    if (within_all) return exact_of(i);
  }
  return std::nullopt;
}

}  // namespace

std::vector<int> csg_program(const DomainGeometry& g, std::vector<const DomainGeometry*>& leaves) {
  std::vector<int> program;
  append_program(g, program, leaves);
  return program;
}

double primitive_boundary_measure(const DomainGeometry& g) {
  if (g.type == "rectangle" || g.type == "box")
    return boundary_measure(make_box_shape(g.dim, g.lo.data(), g.hi.data()));
  if (g.type == "disk" || g.type == "ball")
    return boundary_measure(make_ball_shape(g.dim, g.centre.data(), g.radius));
  if (g.type == "polygon") return boundary_measure(PolygonArrays(g.vertices, g.triangles).shape());
  throw std::invalid_argument("a " + g.type + " cannot be a part of a composite domain");
}

std::unique_ptr<Domain> make_csg(const std::string& op,
                                 std::vector<std::unique_ptr<Domain>> parts) {
  Op o;
  if (op == "union") {
    o = Op::Union;
  } else if (op == "difference") {
    o = Op::Difference;
  } else if (op == "intersection") {
    o = Op::Intersection;
  } else {
    throw std::invalid_argument("unknown composite '" + op +
                                "'; expected union, difference or intersection");
  }
  if (parts.size() < 2) {
    throw std::invalid_argument("a " + op + " needs at least 2 domains, found " +
                                std::to_string(parts.size()));
  }
  std::size_t leaves = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (!parts[i]) throw std::invalid_argument("domain " + std::to_string(i) + " is missing");
    if (parts[i]->type() == "points") {
      throw std::invalid_argument("domain " + std::to_string(i) +
                                  " is a point cloud, which cannot be combined");
    }
    if (parts[i]->dim() != parts[0]->dim()) {
      throw std::invalid_argument("domain " + std::to_string(i) + " is " +
                                  std::to_string(parts[i]->dim()) + "D but domain 0 is " +
                                  std::to_string(parts[0]->dim()) + "D");
    }
    const DomainGeometry g = parts[i]->geometry();
    std::vector<const DomainGeometry*> stack{&g};
    while (!stack.empty()) {
      const DomainGeometry* top = stack.back();
      stack.pop_back();
      if (top->parts.empty()) ++leaves;
      for (const DomainGeometry& p : top->parts) stack.push_back(&p);
    }
  }
  if (leaves > kMaxLeaves) {
    throw std::invalid_argument("a composite may hold at most " + std::to_string(kMaxLeaves) +
                                " primitive domains, found " + std::to_string(leaves));
  }
  return std::make_unique<Csg>(o, std::move(parts));
}

}  // namespace rbfpde
