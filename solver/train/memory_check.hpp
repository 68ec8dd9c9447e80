// Refuses a run that cannot fit in the host's memory before it starts, with the sizes asked
// for and available, instead of letting the allocator or the OOM killer end it mid-training.
#pragma once

#include <cstddef>

#include "solver/config/config.hpp"

namespace rbfpde {

// Bytes the CPU backend will hold for this config (features, Jacobian, normal matrices).
std::size_t estimate_cpu_bytes(const Config& config, int dim);
// MemAvailable from /proc/meminfo, or 0 when it cannot be read.
std::size_t host_available_bytes();
// Throws InputError naming the largest contributor when the estimate exceeds what is available.
void check_host_memory(const Config& config, int dim);

}  // namespace rbfpde
