// load_config: file → YAML tree → --set overrides → validated Config (config_validate.cpp).
#include "solver/config/config.hpp"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "solver/config/config_tree.hpp"

namespace rbfpde {
namespace config_detail {
namespace {

const SourceLoc kSetLoc{"--set"};

std::string read_file(const std::string& path) {
  // stdio rather than ifstream: errno then names the reason ("No such file or directory",
  // "Is a directory", "Permission denied").
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                       &std::fclose);
  if (!file) throw InputError(path + ": cannot read file: " + std::strerror(errno));
  std::string text;
  char buffer[1 << 14];
  std::size_t count;
  while ((count = std::fread(buffer, 1, sizeof buffer, file.get())) > 0) text.append(buffer, count);
  if (std::ferror(file.get())) {
    throw InputError(path + ": cannot read file: " + std::strerror(errno));
  }
  return text;
}

SourceLoc mark_loc(const std::string& file, const YAML::Mark& mark) {
  if (mark.is_null()) return SourceLoc{file};
  return SourceLoc{file, mark.line + 1, mark.column + 1};  // yaml-cpp counts from 0
}

YAML::Node parse_yaml(const std::string& text, const std::string& path) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(mark_loc(path, e.mark), "", "invalid YAML: " + e.msg);
  }
}

// The name a config without `name:` gets: its file's stem, made into a valid name.
std::string default_name(const std::string& path) {
  std::string name = std::filesystem::path(path).stem().string();
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') c = '_';
  }
  return name.empty() ? "rbfpde" : name;
}

struct KeyPart {
  std::string name;  // map key; empty for a sequence index
  std::size_t index = 0;
};

bool all_digits(const std::string& text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// "problem.boundary[0].value" or "problem.boundary.0.value" → [problem, boundary, 0, value].
// A purely numeric part is an index, so no config key may be a number.
std::vector<KeyPart> split_key(const std::string& key, const std::string& assignment) {
  const auto malformed = [&]() {
    return InputError(kSetLoc, key, "expected key.path=value, found \"" + assignment + "\"");
  };
  std::vector<KeyPart> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = key.find('.', start);
    std::string segment = key.substr(start, dot == std::string::npos ? dot : dot - start);
    std::size_t bracket = segment.find('[');
    std::string name = segment.substr(0, bracket);
    if (name.empty() && bracket != 0) throw malformed();
    if (!name.empty()) {
      KeyPart part;
      if (all_digits(name)) {
        part.index = std::stoul(name);
      } else {
        part.name = name;
      }
      parts.push_back(part);
    }
    while (bracket != std::string::npos) {
      const std::size_t close = segment.find(']', bracket);
      if (close == std::string::npos) throw malformed();
      const std::string index = segment.substr(bracket + 1, close - bracket - 1);
      if (!all_digits(index) || (close + 1 < segment.size() && segment[close + 1] != '[')) {
        throw malformed();
      }
      parts.push_back(KeyPart{"", std::stoul(index)});
      bracket = close + 1 < segment.size() ? close + 1 : std::string::npos;
    }
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (parts.empty() || !parts.front().name.size()) throw malformed();
  return parts;
}

}  // namespace

std::string apply_override(YAML::Node& root, const std::string& assignment) {
  const std::size_t equals = assignment.find('=');
  const std::string key = assignment.substr(0, equals);
  if (equals == std::string::npos || key.empty()) {
    throw InputError(kSetLoc, key, "expected key.path=value, found \"" + assignment + "\"");
  }
  const std::vector<KeyPart> parts = split_key(key, assignment);

  YAML::Node value;
  const std::string text = assignment.substr(equals + 1);
  try {
    value = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(kSetLoc, key, "cannot read \"" + text + "\" as a YAML value: " + e.msg);
  }

  std::string path;
  if (!root.IsMap()) root = YAML::Node(YAML::NodeType::Map);
  YAML::Node node = root;  // yaml-cpp: reset() rebinds, operator= would overwrite the tree
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const KeyPart& part = parts[i];
    const bool last = i + 1 == parts.size();
    YAML::Node next;
    if (part.name.empty()) {
      const std::string where = path;
      path += "[" + std::to_string(part.index) + "]";
      if (!node.IsSequence() || part.index >= node.size()) {
        throw InputError(kSetLoc, path,
                         "no such entry: " + where + " is " + describe(node) +
                             (node.IsSequence() ? " of " + std::to_string(node.size()) : ""));
      }
      if (last) {
        node[part.index] = value;
        break;
      }
      next.reset(node[part.index]);
    } else {
      const std::string where = path;
      path += (path.empty() ? "" : ".") + part.name;
      if (!node.IsMap() && !node.IsNull()) {
        throw InputError(kSetLoc, path,
                         "cannot set a key inside " + where + ", which is " + describe(node));
      }
      if (last) {
        node[part.name] = value;
        break;
      }
      if (!node[part.name].IsDefined() || node[part.name].IsNull()) {
        node[part.name] = YAML::Node(YAML::NodeType::Map);
      }
      next.reset(node[part.name]);
    }
    node.reset(next);
  }
  return path;
}

}  // namespace config_detail

Config load_config(const std::string& path, const std::vector<std::string>& overrides) {
  return load_config_text(config_detail::read_file(path), path, overrides);
}

Config load_config_text(const std::string& text, const std::string& path,
                        const std::vector<std::string>& overrides) {
  using namespace config_detail;
  YAML::Node root = parse_yaml(text, path);
  Origin origin{path, {}};
  for (const std::string& assignment : overrides) {
    origin.set_paths.push_back(apply_override(root, assignment));
  }
  try {
    return config_from_tree(root, origin, default_name(path));
  } catch (const YAML::Exception& e) {
    // Validation only walks the tree; this is a yaml-cpp surprise, still reported as bad input.
    throw InputError(mark_loc(path, e.mark), "", e.msg);
  }
}

}  // namespace rbfpde
