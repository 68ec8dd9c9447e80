// The CUDA backends are a shared library of their own, librbfpde_cuda.so, built beside the
// rbfpde executable. The host code reaches it only through the entry points of backend.hpp,
// mlp_backend.hpp and comm.hpp (cuda_device_available, make_cuda_backend, cuda_mlp_backend_built,
// make_cuda_mlp_backend, make_device_communicator), which kernels/cuda_loader.cpp defines: on
// first use it loads the library and takes the table below from it. A process that never asks
// for the GPU (the CPU backend, `rbfpde check`, `eval`, the CPU tests) or that runs where there is
// no NVIDIA driver never loads it, nor the CUDA libraries it links (about 0.45 s of start-up).
#pragma once

#include <memory>

#include "kernels/backend.hpp"
#include "kernels/comm.hpp"
#include "kernels/mlp_backend.hpp"

namespace rbfpde {

// Changes whenever the table's layout or meaning changes: a library of another layout is
// refused with a message, not called.
constexpr int kCudaModuleAbi = 1;

struct CudaModule {
  int abi = kCudaModuleAbi;
  bool (*device_available)() = nullptr;
  std::unique_ptr<RbfBackend<double>> (*rbf_double)(const BackendOptions&) = nullptr;
  std::unique_ptr<RbfBackend<float>> (*rbf_float)(const BackendOptions&) = nullptr;
  std::unique_ptr<MlpBackend<double>> (*mlp_double)(const MlpOptions&) = nullptr;
  std::unique_ptr<MlpBackend<float>> (*mlp_float)(const MlpOptions&) = nullptr;
  std::shared_ptr<Communicator> (*device_communicator)(std::shared_ptr<Communicator>) = nullptr;
};

}  // namespace rbfpde

// The library's one exported C entry point (kernels/cuda/common/cuda_module.cpp).
extern "C" const rbfpde::CudaModule* rbfpde_cuda_module();
// The library's file name: the loader looks for it next to the executable, one folder above it
// (build/tests/ → build/), then on the loader's search path.
#define RBFPDE_CUDA_MODULE_FILE "librbfpde_cuda.so"
