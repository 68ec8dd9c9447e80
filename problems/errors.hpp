// Errors that reach the user. Each carries what the CLI needs to print one readable line and
// choose the exit code (docs/outputs.md, "Exit codes"): InputError → 2, DivergenceError → 3,
// anything else → 1.
#pragma once

#include <stdexcept>
#include <string>

namespace rbfpde {

// Where a value came from: a config file position (1-based line and column), or an origin with
// no position such as a --set override (line == 0).
struct SourceLoc {
  std::string file;
  int line = 0;
  int column = 0;

  // "file:line:column", or just "file" when there is no position.
  std::string str() const;
};

// Bad input: config, expression, file. what() is the whole one-line message:
//   "<file>:<line>:<col>: <key>: <message>"
class InputError : public std::runtime_error {
 public:
  InputError(const SourceLoc& loc, const std::string& key, const std::string& message);
  // For errors that belong to no config key (e.g. a file that cannot be read).
  explicit InputError(const std::string& message);

  const SourceLoc& loc() const { return loc_; }
  const std::string& key() const { return key_; }
  const std::string& message() const { return message_; }

 private:
  SourceLoc loc_;
  std::string key_;
  std::string message_;
};

// Training produced NaN/Inf or an exploding loss. The trainers report divergence in their
// TrainOutcome instead of throwing it; the CLI exits with 3 for either.
class DivergenceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace rbfpde
