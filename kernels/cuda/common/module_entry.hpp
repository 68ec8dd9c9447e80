// What librbfpde_cuda.so's entry table (cuda_module.cpp, kernels/cuda_module.hpp) hands out,
// each defined beside the code it builds.
#pragma once

#include <memory>

#include "kernels/backend.hpp"
#include "kernels/comm.hpp"

namespace rbfpde::gpu {

// True when a CUDA device is present (rbf/cuda_backend.cu).
bool device_available();

// The CUDA RBF backend of options.dim 2, 3 or 4; throws std::runtime_error without a device
// (rbf/cuda_backend.cu).
template <class T>
std::unique_ptr<RbfBackend<T>> make_rbf_backend(const BackendOptions& options);

// make_device_communicator of kernels/comm.hpp, for the CUDA backends (common/device_comm.cpp).
std::shared_ptr<Communicator> make_device_communicator(std::shared_ptr<Communicator> host);

}  // namespace rbfpde::gpu
