// make_cpu_backend: the CPU reference RBF backend (cpu_rbf_backend.hpp) for dimension 2, 3 or 4.
#include <memory>
#include <stdexcept>
#include <string>

#include "kernels/backend.hpp"
#include "kernels/cpu/cpu_rbf_backend.hpp"

namespace rbfpde {

using cpu_detail::CpuRbfBackend;

template <class T>
std::unique_ptr<RbfBackend<T>> make_cpu_backend(const BackendOptions& options) {
  if (options.dim == 2) return std::make_unique<CpuRbfBackend<T, 2>>(options);
  if (options.dim == 3) return std::make_unique<CpuRbfBackend<T, 3>>(options);
  if (options.dim == 4) return std::make_unique<CpuRbfBackend<T, 4>>(options);  // 3D and time
  throw std::invalid_argument("the CPU backend supports 2, 3 or 4 dimensions, got " +
                              std::to_string(options.dim));
}

template std::unique_ptr<RbfBackend<double>> make_cpu_backend<double>(const BackendOptions&);
template std::unique_ptr<RbfBackend<float>> make_cpu_backend<float>(const BackendOptions&);

}  // namespace rbfpde
