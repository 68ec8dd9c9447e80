// Typed reads from a YAML tree that fail with a located, readable InputError. Internal to the
// config loader: every read knows its full key path ("training.gd.steps") and where its node was
// written (file:line:column, or "--set" for values that came from an override), so that a bad
// value becomes one line naming the place, the key, what was expected and what was found.
#pragma once

#include <yaml-cpp/yaml.h>

#include <limits>
#include <string>
#include <vector>

#include "problems/errors.hpp"
#include "problems/problem.hpp"

namespace rbfpde::config_detail {

// Where the tree came from: the file, and the key paths that --set overrides replaced (their
// nodes carry marks relative to the override text, not the file, so marks cannot tell).
struct Origin {
  std::string file;
  std::vector<std::string> set_paths;

  // True when `path` is an overridden key or lies below one.
  bool from_set(const std::string& path) const;
};

// Formats a double with the fewest significant digits that read back to the same value.
std::string format_double(double value);

// Closest entry of `candidates` to `word` when close enough to be a likely typo, else "".
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

// A node of the config tree with its full key path and origin.
class Field {
 public:
  Field(YAML::Node node, std::string path, YAML::Mark key_mark, const Origin* origin);

  const YAML::Node& node() const { return node_; }
  const std::string& path() const { return path_; }
  bool present() const { return node_.IsDefined(); }

  // The node's position; an empty value is placed at its key (yaml-cpp marks it at the next
  // token), an override at "--set".
  SourceLoc loc() const;

  [[noreturn]] void fail(const std::string& message) const;
  // "expected <expected>, found <what the node holds>"
  [[noreturn]] void fail_expected(const std::string& expected) const;

  // Requires a map whose keys are all in `allowed`, each once; the first unknown key fails with a
  // "did you mean" when one of `allowed` is close.
  void check_map(const std::vector<std::string>& allowed) const;
  // A map entry (not present() when absent). Call check_map first.
  Field child(const std::string& key) const;
  // A map entry that must be there: fails at this map with "missing required key".
  Field require(const std::string& key) const;
  // Requires a sequence; its entries with paths "<path>[i]".
  std::vector<Field> entries(const std::string& expected) const;

 private:
  YAML::Node node_;
  std::string path_;
  YAML::Mark key_mark_;
  const Origin* origin_;
};

// How the node is shown after "found": "-5" in quotes, a quoted string as `the string "64"`,
// "a map", "a sequence", "an empty value".
std::string describe(const YAML::Node& node);

// Integers written as integers (a sign and digits): "64.5" or "1e3" is not an integer.
long long read_integer(const Field& field, long long min, long long max,
                       const std::string& expected);
int read_int(const Field& field, int min, const std::string& expected);
unsigned long long read_unsigned(const Field& field, const std::string& expected);

// Finite numbers in any YAML-plain notation (1, 1.5, 1.0e-10); `ok` says whether it is in range.
double read_double(const Field& field, bool (*ok)(double), const std::string& expected);

// Any scalar, as its text (a name, a directory).
std::string read_text(const Field& field, const std::string& expected);

// One of `options`.
std::string read_choice(const Field& field, const std::vector<std::string>& options);

// An expression: a non-empty scalar (a plain number such as 0 is the text "0"); its syntax is
// checked when the Problem is built, at the location recorded here.
ExprSpec read_expression(const Field& field);

// A sequence of exactly `count` numbers.
std::vector<double> read_numbers(const Field& field, std::size_t count, const std::string& why);

}  // namespace rbfpde::config_detail
