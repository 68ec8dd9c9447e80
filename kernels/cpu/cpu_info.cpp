#include "kernels/cpu/cpu_info.hpp"

#include <fstream>

namespace rbfpde {

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto pos = line.find(':');
      if (pos != std::string::npos) return line.substr(pos + 2);
    }
  }
  return "CPU";
}

}  // namespace rbfpde
