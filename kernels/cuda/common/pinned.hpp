// Pinned (page-locked) host memory, owning and move-only: the host side of the copies a CUDA
// graph captures (a graph copies from and to fixed addresses) and of the asynchronous
// read-backs. Values are zero-initialised; the destructor logs instead of throwing.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdio>
#include <memory>
#include <utility>

#include "kernels/cuda/common/cuda_check.hpp"

namespace rbfpde::gpu {

template <class T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t n) : size_(n) {
    if (n == 0) return;
    void* p = nullptr;
    CUDA_CHECK(cudaMallocHost(&p, n * sizeof(T)));
    ptr_ = static_cast<T*>(p);
    std::uninitialized_value_construct_n(ptr_, n);
  }
  ~PinnedBuffer() {
    if (ptr_ && cudaFreeHost(ptr_) != cudaSuccess)
      std::fprintf(stderr, "rbfpde: cudaFreeHost failed\n");
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  PinnedBuffer(PinnedBuffer&& o) noexcept { swap(o); }
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    swap(o);
    return *this;
  }

  T* data() { return ptr_; }
  const T* data() const { return ptr_; }
  T& operator[](std::size_t i) { return ptr_[i]; }
  const T& operator[](std::size_t i) const { return ptr_[i]; }
  std::size_t size() const { return size_; }

 private:
  void swap(PinnedBuffer& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(size_, o.size_);
  }
  T* ptr_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace rbfpde::gpu
