#include "solver/train/model_file.hpp"

#include <yaml-cpp/yaml.h>

#include "solver/output/output.hpp"

namespace rbfpde {

std::string problem_section(const Config& config) {
  const std::string dump = dump_config(config);
  std::size_t begin = dump.find("\nproblem:");
  if (begin == std::string::npos) return "";
  ++begin;
  // The section ends at the next top-level key (a line that starts with neither space nor '-').
  std::size_t end = begin;
  while ((end = dump.find('\n', end)) != std::string::npos && end + 1 < dump.size() &&
         (dump[end + 1] == ' ' || dump[end + 1] == '-'))
    ++end;
  return dump.substr(begin, end == std::string::npos ? std::string::npos : end + 1 - begin);
}

template <class T>
void write_model_yaml(const std::filesystem::path& path, const RbfParameters<T>& params,
                      const Config& config, const std::string& backend) {
  YAML::Emitter out;
  out.SetDoublePrecision(17);
  out.SetFloatPrecision(9);
  out << YAML::Comment("rbfpde model: u(x) = sum_k w_k exp(-|x - c_k|^2 / a_k^2)");
  out << YAML::BeginMap;
  out << YAML::Key << "format" << YAML::Value << "rbfpde-model-1";
  out << YAML::Key << "type" << YAML::Value << "rbf";
  out << YAML::Key << "name" << YAML::Value << config.name;
  out << YAML::Key << "dimension" << YAML::Value << params.dim;
  out << YAML::Key << "neurons" << YAML::Value << params.neurons();
  out << YAML::Key << "trained_with" << YAML::Value << YAML::Flow << YAML::BeginMap
      << YAML::Key << "method" << YAML::Value << config.training.method << YAML::Key << "backend"
      << YAML::Value << backend << YAML::Key << "precision" << YAML::Value
      << config.compute.precision << YAML::EndMap;
  out << YAML::Key << "problem" << YAML::Value << YAML::Literal << problem_section(config);
  out << YAML::Key << "centres" << YAML::Value << YAML::BeginSeq;
  for (int k = 0; k < params.neurons(); ++k) {
    out << YAML::Flow << YAML::BeginSeq;
    for (int j = 0; j < params.dim; ++j) out << double(params.centres[k * params.dim + j]);
    out << YAML::EndSeq;
  }
  out << YAML::EndSeq;
  out << YAML::Key << "widths" << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (T a : params.widths) out << double(a);
  out << YAML::EndSeq;
  out << YAML::Key << "weights" << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (T w : params.weights) out << double(w);
  out << YAML::EndSeq;
  out << YAML::EndMap;
  write_file_atomic(path, std::string(out.c_str()) + "\n");
}

template void write_model_yaml<double>(const std::filesystem::path&, const RbfParameters<double>&,
                                       const Config&, const std::string&);
template void write_model_yaml<float>(const std::filesystem::path&, const RbfParameters<float>&,
                                      const Config&, const std::string&);

InputError model_file_error(const std::string& file, const YAML::Node& node, const std::string& key,
                            const std::string& what) {
  const YAML::Mark m = node.Mark();
  return InputError(SourceLoc{file, m.line + 1, m.column + 1}, key, what);
}

YAML::Node read_model_root(const std::string& file) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(file);
  } catch (const YAML::BadFile&) {
    throw InputError(file + ": cannot read file");
  } catch (const YAML::Exception& e) {
    throw InputError(SourceLoc{file, e.mark.line + 1, e.mark.column + 1}, "", e.msg);
  }
  if (!root.IsMap() || !root["format"] || root["format"].as<std::string>("") != "rbfpde-model-1")
    throw model_file_error(file, root, "format",
                           "expected an rbfpde model file (format: rbfpde-model-1)");
  return root;
}

YAML::Node load_model_file(const std::string& file, const std::string& type) {
  const YAML::Node root = read_model_root(file);
  if (!root["type"] || root["type"].as<std::string>("") != type)
    throw model_file_error(file, root, "type",
                           "expected a model of type " + type + ", found \"" +
                               root["type"].as<std::string>("") + "\"");
  return root;
}

RbfParameters<double> read_model_yaml(const std::filesystem::path& path) {
  const std::string file = path.string();
  const YAML::Node root = load_model_file(file, "rbf");
  auto fail = [&](const YAML::Node& node, const std::string& key, const std::string& what) {
    return model_file_error(file, node, key, what);
  };
  RbfParameters<double> p;
  try {
    p.dim = root["dimension"].as<int>();
    const int m = root["neurons"].as<int>();
    for (const auto& c : root["centres"]) {
      if (!c.IsSequence() || int(c.size()) != p.dim)
        throw fail(c, "centres", "expected " + std::to_string(p.dim) + " coordinates per centre");
      for (const auto& v : c) p.centres.push_back(v.as<double>());
    }
    for (const auto& v : root["widths"]) p.widths.push_back(v.as<double>());
    for (const auto& v : root["weights"]) p.weights.push_back(v.as<double>());
    if (int(p.weights.size()) != m || int(p.widths.size()) != m || int(p.centres.size()) != m * p.dim)
      throw fail(root, "neurons", "expected " + std::to_string(m) + " centres, widths and weights");
  } catch (const YAML::Exception& e) {
    throw InputError(SourceLoc{file, e.mark.line + 1, e.mark.column + 1}, "", e.msg);
  }
  return p;
}

}  // namespace rbfpde
