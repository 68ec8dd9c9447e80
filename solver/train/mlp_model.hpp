// The MLP (docs/mathematics.md): its shape, its initial state and its model.yaml.
//   - shape: d inputs → the config's hidden widths → 1 output, one activation for every hidden
//     layer, linear output, the domain's bounding box mapped onto [−1, 1]^d in front;
//     parameters laid out as in kernels/mlp_backend.hpp;
//   - initial state: Glorot-uniform weights (U(±sqrt(6/(n_in + n_out)))) and zero biases, so
//     that the pre-activations start with unit-order variance whatever the widths;
//   - model.yaml: "rbfpde-model-1", type mlp, weights per layer; read back by read_mlp_model_yaml.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kernels/mlp_backend.hpp"
#include "problems/domain.hpp"
#include "problems/random.hpp"
#include "solver/config/config.hpp"

namespace rbfpde {

struct MlpShape {
  int dim = 2;
  std::vector<int> hidden = {50, 50, 50, 50};
  std::string activation = "tanh";
  std::vector<double> input_min, input_max;  // the input map (MlpOptions); empty: none

  std::vector<int> sizes() const { return mlp_layer_sizes(dim, hidden); }
  std::size_t parameter_count() const { return mlp_parameter_count(dim, hidden); }
};

// The config's network for `domain` (its bounding box is the input map).
MlpShape mlp_shape(const ModelConfig& model, const Domain& domain);
MlpOptions mlp_backend_options(const MlpShape& shape, double penalty);

// Glorot-uniform weights drawn from `rng` layer by layer (W row-major), zero biases.
std::vector<double> initial_mlp_parameters(const MlpShape& shape, Rng& rng);

// A trained MLP as model.yaml holds it.
struct MlpModel {
  MlpShape shape;
  std::vector<double> parameters;  // flat, the backend's layout
};

template <class T>
void write_mlp_model_yaml(const std::filesystem::path& path, const MlpShape& shape,
                          const std::vector<T>& parameters, const Config& config,
                          const std::string& backend);

// Reads a model.yaml written by write_mlp_model_yaml. Throws InputError naming the file and the
// key when it is not one (an RBF model file included).
MlpModel read_mlp_model_yaml(const std::filesystem::path& path);

template <class T>
std::vector<T> convert_mlp_parameters(const std::vector<double>& p) {
  return std::vector<T>(p.begin(), p.end());
}

}  // namespace rbfpde
