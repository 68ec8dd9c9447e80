#include "problems/errors.hpp"

namespace rbfpde {

std::string SourceLoc::str() const {
  if (line <= 0) return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

static std::string compose(const SourceLoc& loc, const std::string& key, const std::string& message) {
  std::string out = loc.str();
  if (!out.empty()) out += ": ";
  if (!key.empty()) out += key + ": ";
  return out + message;
}

InputError::InputError(const SourceLoc& loc, const std::string& key, const std::string& message)
    : std::runtime_error(compose(loc, key, message)), loc_(loc), key_(key), message_(message) {}

InputError::InputError(const std::string& message)
    : std::runtime_error(message), message_(message) {}

}  // namespace rbfpde
