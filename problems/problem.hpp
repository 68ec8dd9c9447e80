// WHAT is solved: a linear operator a·Δₛu + b·∇u + c·u = f on a domain (or on a space-time
// domain Ω × [start, end]) with Dirichlet, Neumann and Robin conditions, built from its
// specification (the typed `problem:` part of the config), and the collocation batches drawn from
// it (docs/mathematics.md, "Operators and conditions").
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
  std::string type = "dirichlet";  // dirichlet | neumann | robin
  ExprSpec value;
  ExprSpec where;  // text "1" when not given
  ExprSpec alpha;  // robin: α (required); empty text otherwise
  ExprSpec beta;   // robin: β (text "1" when not given); empty text otherwise
  SourceLoc loc;   // the entry itself
};

// problem.time: t becomes the last coordinate, on [start, end].
struct TimeSpec {
  double start = 0, end = 1;
  SourceLoc loc;  // of `time`
};

// problem.equation as written. Every type becomes the linear row a·Δₛu + b·∇u + c·u = f:
//   poisson   Δu = f                           (a = 1)
//   helmholtz Δu + k²u = f                     (a = 1, c = k²)
//   heat      ∂u/∂t = κΔₛu + f, with time      (a = κ, b = (0, …, 0, −1), right side −f)
//   linear    a·Δₛu + b·∇u + c·u = f           (defaults a = 1, b = 0, c = 0)
struct ProblemSpec {
  int dim = 2;  // coordinates of a point: the domain's, plus one for t with time
  DomainSpec domain;
  std::string equation = "poisson";  // poisson | helmholtz | heat | linear
  SourceLoc equation_loc;            // of equation.type (of `equation` when not given)
  ExprSpec f;
  std::optional<ExprSpec> a, c, k, diffusivity;
  std::vector<ExprSpec> b;  // linear: one per coordinate (t included with time), or none
  SourceLoc b_loc;          // of equation.b
  std::vector<BoundarySpec> boundary;
  SourceLoc boundary_loc;  // of `boundary`
  std::optional<TimeSpec> time;
  std::optional<ExprSpec> initial;  // u at t = start (with time)
  std::optional<ExprSpec> exact;
  int space_dim() const { return time ? dim - 1 : dim; }
};

struct BoundaryCondition {
  std::string type;  // dirichlet | neumann | robin
  Expression value;
  Expression where;
  Expression alpha, beta;  // α·u + β·∂u/∂n = value; dirichlet α = 1, β = 0; neumann α = 0, β = 1
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

// Throws std::invalid_argument unless every vector of `batch` has the size its point counts and
// `dim` give it (a coefficient vector may also be empty: its default), normals included where a
// boundary row has β ≠ 0, and 0 ≤ space_dim ≤ dim.
void check_batch_sizes(const CollocationBatch& batch, int dim);

// Row residuals at a batch's own points, from its coefficients (CollocationBatch) and the model's
// values there: e = a·Δₛu + b·∇u + c·u − f at the interior points, r = α·u + β·∂u/∂n − p at the
// boundary points. The gradients (n × dim) are read only where b, respectively β, is non-empty.
void batch_residuals(const CollocationBatch& batch, const std::vector<double>& u_interior,
                     const std::vector<double>& grad_interior,
                     const std::vector<double>& laplacian, const std::vector<double>& u_boundary,
                     const std::vector<double>& grad_boundary, std::vector<double>& e,
                     std::vector<double>& r);

class Problem {
 public:
  // Compiles every expression and builds the domain. Throws InputError naming the key and the
  // config location of whatever is wrong (bad expression, bad domain, a `where` that holds at no
  // boundary point, boundary points that no entry covers, a problem whose solution is fixed only
  // up to a constant).
  static Problem build(const ProblemSpec& spec);

  int dim() const { return dim_; }
  // Coordinates the Laplacian acts on: dim() − 1 with time, else dim().
  int space_dim() const { return space_dim_; }
  bool has_time() const { return has_time_; }
  const Domain& domain() const { return *domain_; }
  // The right side f of the interior row (for heat: −f of the equation as written).
  const Expression& f() const { return f_; }
  const std::vector<BoundaryCondition>& boundary() const { return boundary_; }
  bool has_exact() const { return exact_.has_value(); }
  const Expression& exact() const { return *exact_; }

  // The interior row's coefficients as compiled (for code that translates them, e.g. a device
  // sampler): a (the constant 1 by default), b (one per coordinate, or empty when zero), c (the
  // constant 0 by default). The boundary entries' α and β are in boundary(); the initial face's
  // row (with time) is u = initial().
  const Expression& a() const { return a_; }
  const std::vector<Expression>& b() const { return b_; }
  const Expression& c() const { return c_; }
  bool has_initial() const { return initial_.has_value(); }
  const Expression& initial() const { return *initial_; }

  // True when every row is Δu = f or u = p (a = 1, b = 0, c = 0, α = 1, β = 0, no time): the
  // batches then carry no coefficients and the backends take their Poisson paths.
  bool poisson_dirichlet() const { return poisson_dirichlet_; }
  // True when a row involves ∇u (b ≠ 0 or some β ≠ 0): residuals then need the gradient.
  bool uses_gradient() const { return !default_b_ || !default_beta_; }

  // Index of the first boundary entry whose `where` holds at x (where ≠ 0), -1 when none.
  int boundary_entry(const double* x) const;
  // True for a boundary normal of the initial face t = start (with time).
  bool on_initial_face(const double* normal) const;

  // Draws n_interior + n_boundary fresh points and evaluates f, the boundary values and the
  // coefficients (each left empty when it is its default everywhere; CollocationBatch).
  void sample(Rng& rng, std::size_t n_interior, std::size_t n_boundary, CollocationBatch& batch) const;
  // Sets the batch's coefficients (and space_dim) from its points and normals, as sample() does.
  void fill_coefficients(CollocationBatch& batch) const;
  // fill_coefficients for a batch that carries none (one read from a checkpoint of a format
  // without them, or a backend's copy without them); a batch with coefficients keeps those it was
  // trained on (a batch drawn on the device has the device's, which may differ in the last bit).
  void fill_missing_coefficients(CollocationBatch& batch) const;

  // Row residuals from the model's values at n points (row-major, n × dim): at interior points
  // a·Δₛu + b·∇u + c·u − f; at boundary points with outward normals α·u + β·∂u/∂n − p (u − u₀
  // on the initial face). `gradient` (n × dim) is read only when uses_gradient().
  void interior_residuals(const double* points, std::size_t n, const double* u,
                          const double* gradient, const double* laplacian, double* out) const;
  void boundary_residuals(const double* points, const double* normals, std::size_t n,
                          const double* u, const double* gradient, double* out) const;

 private:
  int dim_ = 2, space_dim_ = 2;
  bool has_time_ = false;
  std::shared_ptr<const Domain> domain_;
  Expression f_;
  Expression a_, c_;
  std::vector<Expression> b_;  // dim entries, or empty
  bool default_a_ = true, default_b_ = true, default_c_ = true;
  bool default_alpha_ = true, default_beta_ = true;
  bool poisson_dirichlet_ = true;
  std::vector<BoundaryCondition> boundary_;
  std::optional<Expression> initial_;
  std::optional<Expression> exact_;
};

}  // namespace rbfpde
