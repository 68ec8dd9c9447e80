// model.yaml: the trained network's parameters, readable back to evaluate or continue training.
#pragma once

#include <filesystem>
#include <string>

#include "kernels/backend.hpp"
#include "solver/config/config.hpp"

namespace rbfpde {

template <class T>
void write_model_yaml(const std::filesystem::path& path, const RbfParameters<T>& params,
                      const Config& config, const std::string& backend);

// Reads a model.yaml written by write_model_yaml. Throws InputError naming the file and the
// key when it is not one.
RbfParameters<double> read_model_yaml(const std::filesystem::path& path);

}  // namespace rbfpde
