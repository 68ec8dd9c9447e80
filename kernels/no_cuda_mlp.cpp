// Stand-ins used until the build has a CUDA MLP backend (RBFPDE_HAVE_CUDA_MLP): solve_mlp then
// runs the MLP on the CPU even when the RBF network would run on the GPU.
#ifndef RBFPDE_HAVE_CUDA_MLP
#include <stdexcept>

#include "kernels/mlp_backend.hpp"

namespace rbfpde {

bool cuda_mlp_backend_built() { return false; }

template <class T>
std::unique_ptr<MlpBackend<T>> make_cuda_mlp_backend(const MlpOptions&) {
  throw std::runtime_error("this build has no CUDA MLP backend");
}

template std::unique_ptr<MlpBackend<double>> make_cuda_mlp_backend<double>(const MlpOptions&);
template std::unique_ptr<MlpBackend<float>> make_cuda_mlp_backend<float>(const MlpOptions&);

}  // namespace rbfpde
#endif
