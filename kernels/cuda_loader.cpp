// The host side of the CUDA backends' entry points (kernels/cuda_module.hpp). In a build with the
// CUDA backend they load librbfpde_cuda.so on first use and forward to its table; in a build
// without it they are stand-ins: no device, `auto` means the CPU, and asking for CUDA is an error.
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "kernels/backend.hpp"
#include "kernels/comm.hpp"
#include "kernels/mlp_backend.hpp"

#ifdef RBFPDE_HAVE_CUDA_BACKEND
#include <dlfcn.h>
#include <unistd.h>

#include <climits>

#include "kernels/cuda_module.hpp"

namespace rbfpde {
namespace {

// The folder of the running executable ("" if it cannot be read).
std::string executable_folder() {
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return "";
  const std::string exe(path, std::size_t(n));
  const auto slash = exe.rfind('/');
  return slash == std::string::npos ? "" : exe.substr(0, slash);
}

struct Loaded {
  const CudaModule* module = nullptr;
  std::string why_not;  // when module is null: why, in a phrase
};

Loaded load() {
  Loaded r;
  // Without the NVIDIA driver there is no device to find: the library and the CUDA libraries it
  // links are not loaded at all.
  if (!dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL)) {
    r.why_not = "no NVIDIA driver (libcuda.so.1) was found";
    return r;
  }
  // Linked into this executable already (the GPU tests and benchmarks), or found on disk.
  void* handle = dlopen(RBFPDE_CUDA_MODULE_FILE, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  std::string errors;
  const std::string folder = executable_folder();
  for (const std::string& candidate :
       {folder + "/" RBFPDE_CUDA_MODULE_FILE, folder + "/../" RBFPDE_CUDA_MODULE_FILE,
        std::string(RBFPDE_CUDA_MODULE_FILE)}) {
    if (handle) break;
    handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* e = dlerror();
      errors += std::string(errors.empty() ? "" : "; ") + (e ? e : candidate);
    }
  }
  if (!handle) {
    r.why_not = "the CUDA backend's library could not be loaded (" + errors + ")";
    return r;
  }
  using Entry = const CudaModule* (*)();
  const auto entry = reinterpret_cast<Entry>(dlsym(handle, "rbfpde_cuda_module"));
  const CudaModule* module = entry ? entry() : nullptr;
  if (!module || module->abi != kCudaModuleAbi) {
    r.why_not = std::string(RBFPDE_CUDA_MODULE_FILE) +
                " is from another build of rbfpde (its entry table does not match)";
    return r;
  }
  r.module = module;
  return r;
}

const Loaded& loaded() {
  static const Loaded once = load();
  return once;
}

const CudaModule& module_or_throw(const char* what) {
  const Loaded& l = loaded();
  if (!l.module)
    throw std::runtime_error(std::string("the CUDA ") + what + " was requested, but " + l.why_not);
  return *l.module;
}

}  // namespace

bool cuda_device_available() {
  const Loaded& l = loaded();
  return l.module && l.module->device_available();
}

std::string cuda_unavailable_reason() {
  const Loaded& l = loaded();
  if (!l.module) return l.why_not;
  return l.module->device_available() ? "" : "no CUDA device is present";
}

template <class T>
std::unique_ptr<RbfBackend<T>> make_cuda_backend(const BackendOptions& options) {
  const CudaModule& m = module_or_throw("backend");
  if constexpr (std::is_same_v<T, double>) return m.rbf_double(options);
  else return m.rbf_float(options);
}
template std::unique_ptr<RbfBackend<double>> make_cuda_backend<double>(const BackendOptions&);
template std::unique_ptr<RbfBackend<float>> make_cuda_backend<float>(const BackendOptions&);

bool cuda_mlp_backend_built() { return true; }

template <class T>
std::unique_ptr<MlpBackend<T>> make_cuda_mlp_backend(const MlpOptions& options) {
  const CudaModule& m = module_or_throw("MLP backend");
  if constexpr (std::is_same_v<T, double>) return m.mlp_double(options);
  else return m.mlp_float(options);
}
template std::unique_ptr<MlpBackend<double>> make_cuda_mlp_backend<double>(const MlpOptions&);
template std::unique_ptr<MlpBackend<float>> make_cuda_mlp_backend<float>(const MlpOptions&);

std::shared_ptr<Communicator> make_device_communicator(std::shared_ptr<Communicator> host) {
  // One rank selects nothing (comm.hpp): the library is not loaded for it.
  if (!host || host->size() <= 1) return host;
  return module_or_throw("backend").device_communicator(std::move(host));
}

}  // namespace rbfpde

#else  // no CUDA backend in this build

namespace rbfpde {

bool cuda_device_available() { return false; }

std::string cuda_unavailable_reason() { return "this build of rbfpde has no CUDA backend"; }

template <class T>
std::unique_ptr<RbfBackend<T>> make_cuda_backend(const BackendOptions&) {
  throw std::runtime_error(
      "this build of rbfpde has no CUDA backend (nvcc was not found when it was built)");
}
template std::unique_ptr<RbfBackend<double>> make_cuda_backend<double>(const BackendOptions&);
template std::unique_ptr<RbfBackend<float>> make_cuda_backend<float>(const BackendOptions&);

bool cuda_mlp_backend_built() { return false; }

template <class T>
std::unique_ptr<MlpBackend<T>> make_cuda_mlp_backend(const MlpOptions&) {
  throw std::runtime_error("this build has no CUDA MLP backend");
}
template std::unique_ptr<MlpBackend<double>> make_cuda_mlp_backend<double>(const MlpOptions&);
template std::unique_ptr<MlpBackend<float>> make_cuda_mlp_backend<float>(const MlpOptions&);

std::shared_ptr<Communicator> make_device_communicator(std::shared_ptr<Communicator> host) {
  return host;
}

}  // namespace rbfpde

#endif
