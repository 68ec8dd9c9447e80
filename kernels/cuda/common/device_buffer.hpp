// Move-only owner of device memory. No CUDA types here, so host code and tests can hold buffers
// without the CUDA headers; the allocator itself lives in device_buffer.cu.
#pragma once

#include <cstddef>
#include <utility>

namespace rbfpde::gpu {

// Allocates count × element_size bytes of device memory. Throws std::runtime_error stating the
// bytes requested and the device's free/total memory when the allocation cannot be made.
void* device_allocate(std::size_t count, std::size_t element_size);
// Frees device memory; never throws (an error is logged to stderr).
void device_free(void* ptr) noexcept;

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) { resize(count); }
  ~DeviceBuffer() { device_free(ptr_); }

  // Copies are deleted: a device copy is an explicit, costly operation.
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)),
        size_(std::exchange(other.size_, 0)),
        capacity_(std::exchange(other.capacity_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      device_free(ptr_);
      ptr_ = std::exchange(other.ptr_, nullptr);
      size_ = std::exchange(other.size_, 0);
      capacity_ = std::exchange(other.capacity_, 0);
    }
    return *this;
  }

  // Sets the size; the contents become unspecified. Reallocates only when `count` exceeds the
  // capacity, so that a trainer redrawing batches of one size allocates once.
  void resize(std::size_t count) {
    if (count > capacity_) {
      device_free(ptr_);
      ptr_ = nullptr;
      size_ = capacity_ = 0;
      ptr_ = static_cast<T*>(device_allocate(count, sizeof(T)));
      capacity_ = count;
    }
    size_ = count;
  }

  T* data() { return ptr_; }
  const T* data() const { return ptr_; }
  std::size_t size() const { return size_; }
  std::size_t bytes() const { return size_ * sizeof(T); }

 private:
  T* ptr_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

}  // namespace rbfpde::gpu
