// Expressions that are not finite where they are used (e.g. f = "sqrt(x - 0.5)" on [0, 1]²) are
// the input's error, found before training starts rather than as a loss that is NaN from the first
// cycle. The check evaluates each expression at the points a run will evaluate it at.
#pragma once

#include <vector>

#include "problems/problem.hpp"

namespace rbfpde {

// Throws InputError at the expression's key, naming its text and the first point where its value
// is NaN or ±Inf:
//   - f and the interior row's coefficients (a, b, c; k of helmholtz, diffusivity of heat) at
//     `points`' interior points;
//   - with time, `initial` at the boundary points on the initial face;
//   - at `points`' other boundary points, the value (and a robin entry's alpha and beta) of the
//     boundary entry that applies there (the first whose `where` holds, as
//     Problem::boundary_entry chooses);
//   - exact (when given) at the interior and boundary points and at `grid_points` (row-major,
//     n × dim: the evaluation grid's points).
// `spec` is the ProblemSpec `problem` was built from (for keys and locations).
void check_expressions_finite(const ProblemSpec& spec, const Problem& problem,
                              const CollocationBatch& points,
                              const std::vector<double>& grid_points);

// Throws InputError when a target or coefficient that `batch` carries (f, a, b, c at interior
// points; p, α, β at boundary points) is NaN or ±Inf, naming the key and text of the expression it
// came from and the point. For batches whose values were computed elsewhere than by the host's
// expressions, as a device sampler computes them: its arithmetic can differ from the host's in the
// last bit, which is enough to take acos or sqrt out of its domain at a point on an edge. A
// boundary value the device set to NaN because no entry's `where` holds is reported against
// `problem.boundary`.
void check_batch_finite(const ProblemSpec& spec, const Problem& problem,
                        const CollocationBatch& batch);

}  // namespace rbfpde
