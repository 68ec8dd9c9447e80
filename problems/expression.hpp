// A user expression in x, y (and z in 3D, and t in a space-time problem), compiled once with
// muParser and evaluated in bulk.
// Constants: pi, _pi, _e. Functions: muParser's built-ins (sin, cos, exp, sqrt, abs, min, ...).
#pragma once

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>

namespace rbfpde {

// Thrown by Expression for syntax errors and unknown variables; the message names the problem
// (e.g. "unknown variable 'q' at position 5") but not the config location, which the caller adds.
class ExpressionError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Expression {
 public:
  Expression() = default;  // empty: evaluates to 0, is_constant() == true
  // Compiles `text` with the variables of a `dim`-dimensional point (x, y; x, y, z). With
  // `time`, the last coordinate is t (x, y, t; x, y, z, t). Throws ExpressionError when the text
  // does not parse or uses anything undefined.
  Expression(const std::string& text, int dim, bool time = false);

  const std::string& text() const { return text_; }
  int dim() const { return dim_; }
  bool empty() const { return !impl_; }
  // True when the expression uses no variable (e.g. "0", "2*pi").
  bool is_constant() const;

  // Value at one point (dim coordinates). Not thread-safe: one Expression per thread.
  double operator()(const double* point) const;
  // Values at n points stored row-major (n × dim) into out[n].
  void evaluate(const double* points, std::size_t n, double* out) const;

 private:
  struct Impl;
  std::string text_;
  int dim_ = 0;
  std::shared_ptr<Impl> impl_;
};

}  // namespace rbfpde
