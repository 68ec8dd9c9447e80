// DeviceSampler: the source of kernels/sampler_source.hpp compiled with NVRTC (cached per source
// and architecture) and loaded with the runtime's library API (cudaLibraryLoadData), so no
// driver-API linking is needed.
#include "kernels/cuda/common/device_sampler.hpp"

#include <cuda_runtime.h>
#include <nvrtc.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "kernels/cuda/common/cuda_check.hpp"
#include "kernels/cuda/common/device_buffer.hpp"

#ifndef RBFPDE_CUDA_INCLUDE_DIRS
#define RBFPDE_CUDA_INCLUDE_DIRS ""
#endif

namespace rbfpde::gpu {

// The headers the generated source includes, by name and text: problems/domain_shapes.hpp and
// kernels/host_device.hpp, embedded at build time (kernels/embed_text.cmake), so that the
// installed binary needs no source tree.
extern const int kSamplerHeaderCount;
extern const char* const kSamplerHeaderNames[];
extern const char* const kSamplerHeaderTexts[];

namespace {

std::vector<std::string> include_options() {
  std::vector<std::string> out;
  std::string dirs = RBFPDE_CUDA_INCLUDE_DIRS;
  std::size_t pos = 0;
  while (pos <= dirs.size()) {
    const std::size_t end = std::min(dirs.find('|', pos), dirs.size());
    const std::string dir = dirs.substr(pos, end - pos);
    if (!dir.empty()) {
      out.push_back("-I" + dir);
      // CUDA 13 keeps libcu++ (cuda/std, which curand_kernel.h includes) there.
      if (dir.size() < 5 || dir.compare(dir.size() - 5, 5, "/cccl") != 0)
        out.push_back("-I" + dir + "/cccl");
    }
    pos = end + 1;
  }
  return out;
}

// Compiles `source` for `arch` (e.g. 90); cached per (source, arch).
const std::vector<char>& compile(const std::string& source, int arch) {
  static std::mutex mutex;
  static std::map<std::pair<std::string, int>, std::vector<char>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_pair(source, arch);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;

  nvrtcProgram program = nullptr;
  auto check = [&](nvrtcResult r, const char* what) {
    if (r != NVRTC_SUCCESS)
      throw std::runtime_error(std::string("NVRTC: ") + what + ": " + nvrtcGetErrorString(r));
  };
  check(nvrtcCreateProgram(&program, source.c_str(), "rbfpde_sampler.cu", kSamplerHeaderCount,
                           kSamplerHeaderTexts, kSamplerHeaderNames),
        "nvrtcCreateProgram");
  std::vector<std::string> options = include_options();
  options.push_back("--gpu-architecture=sm_" + std::to_string(arch));
  options.push_back("--std=c++17");
  options.push_back("-default-device");
  std::vector<const char*> argv;
  for (const auto& o : options) argv.push_back(o.c_str());
  const nvrtcResult result = nvrtcCompileProgram(program, int(argv.size()), argv.data());
  std::size_t log_size = 0;
  nvrtcGetProgramLogSize(program, &log_size);
  std::string log(log_size, '\0');
  if (log_size > 0) nvrtcGetProgramLog(program, log.data());
  if (result != NVRTC_SUCCESS) {
    nvrtcDestroyProgram(&program);
    throw std::runtime_error(std::string("NVRTC could not compile the device sampler (") +
                             nvrtcGetErrorString(result) + "):\n" + log);
  }
  std::size_t size = 0;
  check(nvrtcGetCUBINSize(program, &size), "nvrtcGetCUBINSize");
  std::vector<char> cubin(size);
  check(nvrtcGetCUBIN(program, cubin.data()), "nvrtcGetCUBIN");
  nvrtcDestroyProgram(&program);
  return cache.emplace(key, std::move(cubin)).first->second;
}

}  // namespace

struct DeviceSampler::Impl {
  DeviceBuffer<std::uint64_t> batch_index{1};
  int dim = 2;
  bool general = false;
  int space_dim = 2;
  cudaLibrary_t library = nullptr;
  cudaKernel_t kernel = nullptr;
};

DeviceSampler::DeviceSampler(const Problem& problem, bool double_precision)
    : DeviceSampler(problem, operator_text(problem), double_precision) {}

DeviceSampler::DeviceSampler(const Problem& problem, const OperatorText& op, bool double_precision)
    : impl_(std::make_unique<Impl>()) {
  impl_->dim = problem.dim();
  impl_->general = !op.poisson_dirichlet(problem.dim());
  impl_->space_dim =
      op.space_dim > 0 && op.space_dim < problem.dim() ? op.space_dim : problem.dim();
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  std::string source;
  try {
    source = sampler_source(problem, op, double_precision);
  } catch (const std::exception& e) {
    // A domain that cannot describe itself or an expression that cannot be translated: the
    // caller falls back to host batches.
    throw std::runtime_error(std::string("cannot generate the device sampler: ") + e.what());
  }
  const std::vector<char>& cubin = compile(source, prop.major * 10 + prop.minor);
  CUDA_CHECK(cudaLibraryLoadData(&impl_->library, cubin.data(), nullptr, nullptr, 0, nullptr,
                                 nullptr, 0));
  CUDA_CHECK(cudaLibraryGetKernel(&impl_->kernel, impl_->library, "rbfpde_draw_batch"));
}

DeviceSampler::~DeviceSampler() {
  if (impl_ && impl_->library) {
    const cudaError_t status = cudaLibraryUnload(impl_->library);
    if (status != cudaSuccess)
      std::fprintf(stderr, "rbfpde: cudaLibraryUnload failed: %s\n", cudaGetErrorString(status));
  }
}

std::uint64_t* DeviceSampler::batch_index() { return impl_->batch_index.data(); }

void DeviceSampler::set_batch_index(Stream stream, std::uint64_t index) {
  CUDA_CHECK(cudaMemcpyAsync(impl_->batch_index.data(), &index, sizeof(std::uint64_t),
                             cudaMemcpyHostToDevice, stream));
}

void DeviceSampler::check_rows(std::size_t n_int, std::size_t n_bnd) {
  if (n_int + n_bnd > std::size_t(std::numeric_limits<int>::max() / 4))
    throw std::invalid_argument("collocation batch too large for the CUDA backend");
}

DeviceSampler& sampler_for(const std::unique_ptr<DeviceSampler>& sampler, const char* caller) {
  if (!sampler)
    throw std::logic_error(std::string(caller) + " draws a batch, but set_problem was not called");
  return *sampler;
}

int DeviceSampler::dim() const { return impl_->dim; }
bool DeviceSampler::general() const { return impl_->general; }
int DeviceSampler::space_dim() const { return impl_->space_dim; }

void DeviceSampler::launch(Stream stream, const std::uint64_t* index, std::uint64_t seed, int n_int,
                           int n_bnd, void* x, void* target, void* normals, const int* halt,
                           int step, const SampledCoefficients* coefficients) const {
  const int rows = n_int + n_bnd;
  if (rows == 0) return;
  if (impl_->general && coefficients == nullptr)
    throw std::logic_error("DeviceSampler::launch: a general operator needs coefficient arrays");
  SampledCoefficients coef = impl_->general ? *coefficients : SampledCoefficients{};
  const unsigned long long* index_arg = reinterpret_cast<const unsigned long long*>(index);
  unsigned long long seed_arg = seed;
  void* args[] = {&index_arg, &seed_arg, &n_int,  &n_bnd,  &x,      &target,     &normals,
                  &halt,      &step,     &coef.a, &coef.b, &coef.c, &coef.alpha, &coef.beta};
  CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(impl_->kernel),
                              dim3((rows + kSamplerThreads - 1) / kSamplerThreads),
                              dim3(kSamplerThreads), args, 0, stream));
}

}  // namespace rbfpde::gpu
