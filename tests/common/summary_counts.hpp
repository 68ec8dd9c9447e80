// A count of summary.json's "counts" object read from the file's text, for tests that check one
// without a JSON reader.
#pragma once

#include <string>
#include <vector>

namespace rbfpde::test_inputs {

// counts.<key> of a summary.json's text; −1 when absent.
inline long summary_count(const std::string& summary, const std::string& key) {
  const auto open = summary.find("\"counts\": {");
  if (open == std::string::npos) return -1;
  const std::string counts = summary.substr(open, summary.find('}', open) - open);
  const std::string field = "\"" + key + "\": ";
  const auto at = counts.find(field);
  return at == std::string::npos ? -1 : std::stol(counts.substr(at + field.size()));
}

// `common` with `extra` appended: the overrides of two runs that differ in one key.
inline std::vector<std::string> with(std::vector<std::string> common, const std::string& extra) {
  common.push_back(extra);
  return common;
}

}  // namespace rbfpde::test_inputs
