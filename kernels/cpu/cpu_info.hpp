// The host CPU's name, for device_name() of the CPU backends.
#pragma once

#include <string>

namespace rbfpde {

// "model name" from /proc/cpuinfo, or "CPU" when it cannot be read.
std::string cpu_model_name();

}  // namespace rbfpde
