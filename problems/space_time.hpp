// The space-time domain of a time-dependent problem: Ω × [start, end], with t the last
// coordinate (docs/mathematics.md, "Time-dependent problems").
#pragma once

#include <memory>

#include "problems/domain.hpp"

namespace rbfpde {

// Ω × [start, end] for a spatial domain Ω of dimension d (a Domain of dimension d + 1).
//   - The interior is sampled uniformly (a point of Ω, a time uniform in [start, end]).
//   - The boundary that carries conditions is the lateral part ∂Ω × [start, end], normals (n, 0),
//     and the initial face Ω × {start}, normal (0, …, 0, −1); nothing is sampled on t = end,
//     where a parabolic problem takes no condition. Each part is chosen with probability
//     proportional to its measure (|∂Ω|·(end − start) and |Ω|).
//   - contains, distance_to_boundary, bounding_box and measure are those of the closed product
//     (whose boundary does include the final face).
// |∂Ω| is not a Domain query: it is computed once from Ω's own boundary samples by the
// divergence theorem, d·|Ω| = ∮ (x − x₀)·n ds, so |∂Ω| = d·|Ω| / mean((x − x₀)·n), which holds
// for every domain that samples its boundary uniformly with outward normals (holes included).
class SpaceTimeDomain final : public Domain {
 public:
  // Throws std::invalid_argument unless start < end (both finite) and space is 2D or 3D.
  SpaceTimeDomain(std::shared_ptr<const Domain> space, double start, double end);

  int dim() const override { return space_->dim() + 1; }
  std::string type() const override { return space_->type() + " × time"; }
  bool contains(const double* x) const override;
  double distance_to_boundary(const double* x) const override;
  void sample_interior(Rng& rng, std::size_t n, double* points) const override;
  void sample_boundary(Rng& rng, std::size_t n, double* points, double* normals) const override;
  void bounding_box(double* lo, double* hi) const override;
  double measure() const override { return space_->measure() * (end_ - start_); }

  const Domain& space() const { return *space_; }
  double start() const { return start_; }
  double end() const { return end_; }
  // The probability that a boundary sample lies on the initial face: |Ω| / (|Ω| + |∂Ω|·T).
  double initial_share() const { return initial_share_; }
  // The measure of ∂Ω (length in 2D, area in 3D), as estimated at construction.
  double space_boundary_measure() const { return boundary_measure_; }
  // True for a boundary normal of the initial face (its last component is −1, exactly).
  bool on_initial_face(const double* normal) const { return normal[space_->dim()] == -1.0; }

 private:
  std::shared_ptr<const Domain> space_;
  double start_, end_;
  double tol_;
  double boundary_measure_ = 0;
  double initial_share_ = 0;
};

}  // namespace rbfpde
