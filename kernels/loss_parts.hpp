// The loss of a network on a batch, split as every trainer and backend reports it (RBF network
// and MLP alike): I = 1/(2N) Σe² + λ/(2K) Σb² with e the PDE residuals at the N interior points
// and b the boundary residuals at the K boundary points.
#pragma once

namespace rbfpde {

struct LossParts {
  double loss = 0;          // I
  double rms_interior = 0;  // sqrt(Σe²/N)
  double rms_boundary = 0;  // sqrt(Σb²/K)
};

}  // namespace rbfpde
