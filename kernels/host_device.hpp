// RBFPDE_HD marks the functions written once for both backends: host and device functions
// (forced inline) under nvcc, plain inline functions for the C++ compiler.
#pragma once

#if defined(__CUDACC__)
#define RBFPDE_HD __host__ __device__ __forceinline__
#else
#define RBFPDE_HD inline
#endif
