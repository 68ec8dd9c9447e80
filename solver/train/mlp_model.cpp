#include "solver/train/mlp_model.hpp"

#include "solver/train/model_file.hpp"

#include <yaml-cpp/yaml.h>

#include <cmath>

#include "problems/errors.hpp"
#include "solver/output/output.hpp"

namespace rbfpde {

MlpShape mlp_shape(const ModelConfig& model, const Domain& domain) {
  MlpShape shape;
  shape.dim = domain.dim();
  shape.hidden = model.layers;
  shape.activation = model.activation;
  shape.input_min.resize(shape.dim);
  shape.input_max.resize(shape.dim);
  domain.bounding_box(shape.input_min.data(), shape.input_max.data());
  return shape;
}

MlpOptions mlp_backend_options(const MlpShape& shape, double penalty) {
  MlpOptions o;
  o.dim = shape.dim;
  o.layers = shape.hidden;
  o.activation = shape.activation;
  o.penalty = penalty;
  o.input_min = shape.input_min;
  o.input_max = shape.input_max;
  return o;
}

std::vector<double> initial_mlp_parameters(const MlpShape& shape, Rng& rng) {
  const std::vector<int> s = shape.sizes();
  std::vector<double> theta;
  theta.reserve(shape.parameter_count());
  for (std::size_t l = 1; l < s.size(); ++l) {
    const double limit = std::sqrt(6.0 / double(s[l - 1] + s[l]));
    for (long k = 0; k < long(s[l]) * s[l - 1]; ++k) theta.push_back(uniform(rng, -limit, limit));
    theta.insert(theta.end(), std::size_t(s[l]), 0.0);
  }
  return theta;
}

template <class T>
void write_mlp_model_yaml(const std::filesystem::path& path, const MlpShape& shape,
                          const std::vector<T>& parameters, const Config& config,
                          const std::string& backend) {
  const std::vector<int> s = shape.sizes();
  YAML::Emitter out;
  out.SetDoublePrecision(17);
  out.SetFloatPrecision(9);
  out << YAML::Comment(
      "rbfpde model: u(x) = W_L h_L + b_L, h_l = activation(W_l h_(l-1) + b_l), "
      "h_0 = 2 (x - input_map.min) / (input_map.max - input_map.min) - 1; W rows are outputs");
  out << YAML::BeginMap;
  out << YAML::Key << "format" << YAML::Value << "rbfpde-model-1";
  out << YAML::Key << "type" << YAML::Value << "mlp";
  out << YAML::Key << "name" << YAML::Value << config.name;
  out << YAML::Key << "dimension" << YAML::Value << shape.dim;
  out << YAML::Key << "layers" << YAML::Value << YAML::Flow << shape.hidden;
  out << YAML::Key << "activation" << YAML::Value << shape.activation;
  if (!shape.input_min.empty()) {
    out << YAML::Key << "input_map" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key
        << "min" << YAML::Value << shape.input_min << YAML::Key << "max" << YAML::Value
        << shape.input_max << YAML::EndMap;
  }
  out << YAML::Key << "trained_with" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key
      << "method" << YAML::Value << config.training.method << YAML::Key << "backend" << YAML::Value
      << backend << YAML::Key << "precision" << YAML::Value << config.compute.precision
      << YAML::EndMap;
  out << YAML::Key << "problem" << YAML::Value << YAML::Literal << problem_section(config);
  out << YAML::Key << "weights" << YAML::Value << YAML::BeginSeq;
  std::size_t off = 0;
  for (std::size_t l = 1; l < s.size(); ++l) {
    out << YAML::BeginMap;
    out << YAML::Key << "W" << YAML::Value << YAML::BeginSeq;
    for (int r = 0; r < s[l]; ++r) {
      out << YAML::Flow << YAML::BeginSeq;
      for (int c = 0; c < s[l - 1]; ++c) out << double(parameters[off++]);
      out << YAML::EndSeq;
    }
    out << YAML::EndSeq;
    out << YAML::Key << "b" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (int r = 0; r < s[l]; ++r) out << double(parameters[off++]);
    out << YAML::EndSeq;
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
  out << YAML::EndMap;
  write_file_atomic(path, std::string(out.c_str()) + "\n");
}

template void write_mlp_model_yaml<double>(const std::filesystem::path&, const MlpShape&,
                                           const std::vector<double>&, const Config&,
                                           const std::string&);
template void write_mlp_model_yaml<float>(const std::filesystem::path&, const MlpShape&,
                                          const std::vector<float>&, const Config&,
                                          const std::string&);

MlpModel read_mlp_model_yaml(const std::filesystem::path& path) {
  const std::string file = path.string();
  const YAML::Node root = load_model_file(file, "mlp");
  auto fail = [&](const YAML::Node& node, const std::string& key, const std::string& what) {
    return model_file_error(file, node, key, what);
  };
  MlpModel model;
  try {
    model.shape.dim = root["dimension"].as<int>();
    model.shape.hidden = root["layers"].as<std::vector<int>>();
    model.shape.activation = root["activation"].as<std::string>();
    try {
      parse_activation(model.shape.activation);
    } catch (const std::invalid_argument&) {
      throw fail(root["activation"], "activation", "expected tanh, sin or sigmoid");
    }
    if (const YAML::Node map = root["input_map"]) {
      model.shape.input_min = map["min"].as<std::vector<double>>();
      model.shape.input_max = map["max"].as<std::vector<double>>();
      if (int(model.shape.input_min.size()) != model.shape.dim ||
          int(model.shape.input_max.size()) != model.shape.dim)
        throw fail(map, "input_map",
                   "expected min and max with " + std::to_string(model.shape.dim) + " values each");
    }
    const std::vector<int> s = model.shape.sizes();
    const YAML::Node layers = root["weights"];
    if (!layers.IsSequence() || layers.size() + 1 != s.size())
      throw fail(layers, "weights", "expected " + std::to_string(s.size() - 1) + " layers");
    for (std::size_t l = 1; l < s.size(); ++l) {
      const YAML::Node layer = layers[l - 1];
      const std::string key = "weights[" + std::to_string(l - 1) + "]";
      const YAML::Node w = layer["W"], b = layer["b"];
      if (!w.IsSequence() || int(w.size()) != s[l])
        throw fail(layer, key + ".W", "expected " + std::to_string(s[l]) + " rows");
      for (const auto& row : w) {
        if (!row.IsSequence() || int(row.size()) != s[l - 1])
          throw fail(row, key + ".W", "expected " + std::to_string(s[l - 1]) + " columns");
        for (const auto& v : row) model.parameters.push_back(v.as<double>());
      }
      if (!b.IsSequence() || int(b.size()) != s[l])
        throw fail(layer, key + ".b", "expected " + std::to_string(s[l]) + " biases");
      for (const auto& v : b) model.parameters.push_back(v.as<double>());
    }
  } catch (const YAML::Exception& e) {
    throw InputError(SourceLoc{file, e.mark.line + 1, e.mark.column + 1}, "", e.msg);
  }
  return model;
}

}  // namespace rbfpde
