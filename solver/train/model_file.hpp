// model.yaml: the trained network's parameters, readable back to evaluate or continue training.
#pragma once

#include <filesystem>
#include <string>

#include <yaml-cpp/yaml.h>

#include "kernels/backend.hpp"
#include "solver/config/config.hpp"

namespace rbfpde {

template <class T>
void write_model_yaml(const std::filesystem::path& path, const RbfParameters<T>& params,
                      const Config& config, const std::string& backend);

// The `problem:` section of the resolved config (dump_config's text), which every model file
// keeps under its key `problem` as a literal block, so that `rbfpde eval` knows the domain, f and
// the exact solution of the model it evaluates.
std::string problem_section(const Config& config);

// Reads a model file (any model type): parses it and checks its format and `type`, throwing
// InputError naming the file, position and key otherwise.
// The parsed model file, checked to be one (format: rbfpde-model-1); InputError otherwise.
YAML::Node read_model_root(const std::string& file);
YAML::Node load_model_file(const std::string& file, const std::string& type);
// An InputError at `node` of a model file.
InputError model_file_error(const std::string& file, const YAML::Node& node, const std::string& key,
                            const std::string& what);

// Reads a model.yaml written by write_model_yaml. Throws InputError naming the file and the
// key when it is not one.
RbfParameters<double> read_model_yaml(const std::filesystem::path& path);

}  // namespace rbfpde
