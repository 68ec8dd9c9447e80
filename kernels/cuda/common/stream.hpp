// The CUDA stream as host code without CUDA headers names it: the opaque CUstream_st*.
#pragma once

struct CUstream_st;

namespace rbfpde::gpu {

using Stream = CUstream_st*;

}  // namespace rbfpde::gpu
