// kernels/cuda_loader.cpp: the CUDA libraries are loaded only when a run asks for the GPU.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "kernels/backend.hpp"
#include "kernels/comm.hpp"
#include "kernels/mlp_backend.hpp"

namespace rbfpde {
namespace {

std::string mapped_files() {
  std::ifstream maps("/proc/self/maps");
  std::stringstream text;
  text << maps.rdbuf();
  return text.str();
}

TEST(CudaLoader, CpuWorkLoadsNoCudaLibrary) {
  BackendOptions opt;
  opt.dim = 2;
  auto be = make_cpu_backend<double>(opt);
  ASSERT_NE(be, nullptr);
  // One rank: the device communicator is the host's, with nothing loaded.
  const auto serial = serial_communicator();
  EXPECT_EQ(make_device_communicator(serial).get(), serial.get());
  const std::string maps = mapped_files();
  ASSERT_FALSE(maps.empty());
  EXPECT_EQ(maps.find("libcublas"), std::string::npos);
  EXPECT_EQ(maps.find("libcusolver"), std::string::npos);
  EXPECT_EQ(maps.find("librbfpde_cuda"), std::string::npos);
}

TEST(CudaLoader, AskingForTheGpuWhereThereIsNoneSaysWhy) {
  if (cuda_device_available()) GTEST_SKIP() << "a CUDA device is present";
  BackendOptions opt;
  opt.dim = 2;
  try {
    make_cuda_backend<double>(opt);
    FAIL() << "make_cuda_backend returned without a device";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("CUDA"), std::string::npos) << what;
    EXPECT_GT(what.size(), 30u) << what;
  }
  MlpOptions mopt;
  EXPECT_THROW(make_cuda_mlp_backend<double>(mopt), std::runtime_error);
}

}  // namespace
}  // namespace rbfpde
