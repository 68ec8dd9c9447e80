// librbfpde_cuda.so's entry table (kernels/cuda_module.hpp): the one symbol the host code's
// loader (kernels/cuda_loader.cpp) looks up.
#include "kernels/cuda_module.hpp"

#include "kernels/cuda/common/module_entry.hpp"
#include "kernels/cuda/mlp/mlp_kernels.hpp"

namespace rbfpde {
namespace {

template <class T>
std::unique_ptr<MlpBackend<T>> make_mlp_backend(const MlpOptions& options) {
  return gpu::make_cuda_mlp_backend<T>(options, gpu::MlpTuning{});
}

const CudaModule kModule = [] {
  CudaModule m;
  m.device_available = &gpu::device_available;
  m.rbf_double = &gpu::make_rbf_backend<double>;
  m.rbf_float = &gpu::make_rbf_backend<float>;
  m.mlp_double = &make_mlp_backend<double>;
  m.mlp_float = &make_mlp_backend<float>;
  m.device_communicator = &gpu::make_device_communicator;
  return m;
}();

}  // namespace
}  // namespace rbfpde

extern "C" __attribute__((visibility("default"))) const rbfpde::CudaModule* rbfpde_cuda_module() {
  return &rbfpde::kModule;
}
