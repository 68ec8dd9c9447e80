// WHAT is solved: a Poisson problem Δu = f on a domain with Dirichlet conditions, built from its
// specification (the typed `problem:` part of the config), and the collocation batches drawn from it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "problems/domain.hpp"
#include "problems/errors.hpp"
#include "problems/expression.hpp"
#include "problems/random.hpp"

namespace rbfpde {

// An expression as written in the config, with where it was written (for error messages).
struct ExprSpec {
  std::string text;
  std::string key;  // full key path, e.g. "problem.equation.f"
  SourceLoc loc;
};

struct DomainSpec {
  std::string type;  // rectangle | box | disk | ball | polygon | union | difference |
                     // intersection | points
  std::vector<double> min, max;              // rectangle, box
  std::vector<double> centre;                // disk, ball
  double radius = 0;                         // disk, ball
  std::vector<std::array<double, 2>> vertices;  // polygon
  std::vector<DomainSpec> domains;           // union | difference | intersection: the operands
  std::string file;                          // points: the cloud's path (resolved by the config
                                             // loader against the config file's directory)
  std::shared_ptr<const PointCloudData> cloud;  // points: the file's contents when already read
  std::string key = "problem.domain";
  SourceLoc loc;
};

struct BoundarySpec {
  std::string type = "dirichlet";
  ExprSpec value;
  ExprSpec where;  // text "1" when not given
};

struct ProblemSpec {
  int dim = 2;
  DomainSpec domain;
  std::string equation = "poisson";
  ExprSpec f;
  std::vector<BoundarySpec> boundary;
  std::optional<ExprSpec> exact;
};

struct BoundaryCondition {
  std::string type;  // dirichlet
  Expression value;
  Expression where;
  bool everywhere = true;  // where is the constant 1: skip evaluating it
};

// One batch of collocation points with their targets. Row-major point storage.
//
// Rows (docs/mathematics.md, "Operators and conditions"):
//   interior point x:  a(x)·Δₛu + b(x)·∇u + c(x)·u = f(x)
//   boundary point x:  α(x)·u + β(x)·∂u/∂n = p(x),  n the outward unit normal
// Δₛ is the Laplacian over the first laplacian_dims() coordinates (all of them, or all but the
// last when the problem has time: t is then the last coordinate); ∇ is over all `dim` coordinates.
// An empty coefficient vector means its Poisson/Dirichlet default at every point: a = 1, b = 0,
// c = 0, α = 1, β = 0. Backends keep their Poisson fast paths when poisson_dirichlet() holds.
struct CollocationBatch {
  int dim = 2;
  int space_dim = 0;  // 0: the same as dim (no time coordinate)
  std::vector<double> interior;  // n_interior × dim
  std::vector<double> f;         // n_interior
  std::vector<double> boundary;  // n_boundary × dim
  std::vector<double> normals;   // n_boundary × dim
  std::vector<double> p;         // n_boundary (boundary values)
  std::vector<double> a;         // n_interior, or empty (1)
  std::vector<double> b;         // n_interior × dim, or empty (0)
  std::vector<double> c;         // n_interior, or empty (0)
  std::vector<double> alpha;     // n_boundary, or empty (1)
  std::vector<double> beta;      // n_boundary, or empty (0)
  std::size_t n_interior() const { return f.size(); }
  std::size_t n_boundary() const { return p.size(); }
  int laplacian_dims() const { return space_dim > 0 ? space_dim : dim; }
  bool poisson_dirichlet() const {
    return laplacian_dims() == dim && a.empty() && b.empty() && c.empty() && alpha.empty() && beta.empty();
  }
};

class Problem {
 public:
  // Compiles every expression and builds the domain. Throws InputError naming the key and the
  // config location of whatever is wrong (bad expression, bad domain, a `where` that holds at no
  // boundary point, boundary points that no entry covers).
  static Problem build(const ProblemSpec& spec);

  int dim() const { return dim_; }
  const Domain& domain() const { return *domain_; }
  const Expression& f() const { return f_; }
  const std::vector<BoundaryCondition>& boundary() const { return boundary_; }
  bool has_exact() const { return exact_.has_value(); }
  const Expression& exact() const { return *exact_; }

  // Index of the first boundary entry whose `where` holds at x (where ≠ 0), -1 when none.
  int boundary_entry(const double* x) const;

  // Draws n_interior + n_boundary fresh points and evaluates f and the boundary values.
  void sample(Rng& rng, std::size_t n_interior, std::size_t n_boundary, CollocationBatch& batch) const;

 private:
  int dim_ = 2;
  std::shared_ptr<const Domain> domain_;
  Expression f_;
  std::vector<BoundaryCondition> boundary_;
  std::optional<Expression> exact_;
};

}  // namespace rbfpde
