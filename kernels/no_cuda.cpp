// Stand-ins used when this build has no CUDA backend: `auto` then means the CPU.
#ifndef RBFPDE_HAVE_CUDA_BACKEND
#include <stdexcept>

#include "kernels/backend.hpp"

namespace rbfpde {

bool cuda_device_available() { return false; }

template <class T>
std::unique_ptr<RbfBackend<T>> make_cuda_backend(const BackendOptions&) {
  throw std::runtime_error("this build of rbfpde has no CUDA backend (nvcc was not found when it was built)");
}

template std::unique_ptr<RbfBackend<double>> make_cuda_backend<double>(const BackendOptions&);
template std::unique_ptr<RbfBackend<float>> make_cuda_backend<float>(const BackendOptions&);

}  // namespace rbfpde
#endif
