// The allocator behind DeviceBuffer: plain cudaMalloc, with an error that says what was asked
// for and what the device had, instead of a bare "out of memory".
#include <cstdint>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>

#include "kernels/cuda/common/cuda_check.hpp"
#include "kernels/cuda/common/device_buffer.hpp"

namespace rbfpde::gpu {

void* device_allocate(std::size_t count, std::size_t element_size) {
  if (count == 0) return nullptr;
  if (element_size != 0 && count > std::numeric_limits<std::size_t>::max() / element_size)
    throw std::runtime_error("device allocation of " + std::to_string(count) + " elements of " +
                             std::to_string(element_size) + " bytes overflows size_t");
  const std::size_t bytes = count * element_size;
  void* ptr = nullptr;
  const cudaError_t status = cudaMalloc(&ptr, bytes);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();  // an allocation failure is not sticky: clear it for later checks
    std::size_t free_bytes = 0, total_bytes = 0;
    const bool have_info = cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess;
    (void)cudaGetLastError();
    std::string message = "device allocation of " + std::to_string(bytes) + " bytes failed (" +
                          cudaGetErrorString(status) + ")";
    if (have_info)
      message += ": the device has " + std::to_string(free_bytes) + " bytes free of " +
                 std::to_string(total_bytes);
    throw std::runtime_error(message);
  }
  return ptr;
}

void device_free(void* ptr) noexcept {
  if (!ptr) return;
  const cudaError_t status = cudaFree(ptr);
  if (status != cudaSuccess)
    std::fprintf(stderr, "rbfpde: cudaFree failed: %s\n", cudaGetErrorString(status));
}

}  // namespace rbfpde::gpu
