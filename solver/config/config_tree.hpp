// The steps of load_config between text and Config, separated so that each stays one idea:
// overrides edit the YAML tree (config.cpp), validation turns the tree into a Config
// (config_validate.cpp).
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "solver/config/config.hpp"
#include "solver/config/yaml_fields.hpp"

namespace rbfpde::config_detail {

// Applies one "key.path=value" override to `root`, creating maps on the way; returns the
// normalised key path ("problem.boundary[0].value") for Origin::set_paths.
std::string apply_override(YAML::Node& root, const std::string& assignment);

// Checks every key and value of the tree and fills defaults. `default_name` is used when the
// tree has no name.
Config config_from_tree(const YAML::Node& root, const Origin& origin,
                        const std::string& default_name);

}  // namespace rbfpde::config_detail
