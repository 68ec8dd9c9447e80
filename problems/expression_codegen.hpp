// Translation of user expressions (muParser syntax, see expression.hpp) into C source, so that a
// kernel generated at run time (NVRTC) evaluates f, boundary values and `where` on the device with
// the same meaning as the host's muParser.
//
// The generated text is ONE C expression of type double over variables named `x`, `y` (and `z` in
// 3D) that the surrounding code must declare as double. It uses only the double-precision math
// functions that CUDA device code and <math.h> both provide: sin cos tan asin acos atan atan2 sinh
// cosh tanh asinh acosh atanh exp log log2 log10 sqrt fabs floor pow fmin fmax. Every operation is
// parenthesised, so C's own precedence never matters, and every literal is a double literal.
//
// muParser 2.3.3 semantics it reproduces (checked against the library, see the tests):
//   log and ln    natural logarithm (log(100) = 4.605...), both → log
//   rint(v)       floor(v + 0.5) (rint(2.5) = 3, rint(-2.5) = -2): NOT C's rint, which rounds to
//   even sign(v)       ((v > 0) - (v < 0)) as double, 0 for 0 and NaN abs → fabs; min/max → nested
//   fmin/fmax; sum → (a + b) + c; avg → sum / n a ^ b         pow(a, b); right-associative (2^3^2 =
//   512) and binding tighter than a sign
//                 (-2^2 = -4, -x^2 = -(x^2)); after ^ a sign takes the whole power chain to its
//                 right but not a product (2^-1^2 = 2^(-(1^2)) = 0.5, 2^-1*3 = (2^-1)*3 = 1.5)
//   signs         one unary + or - per operand ("--2" and "2^--2" are errors, "x--2" is x - (-2))
//   comparisons   < > <= >= == != all one level, left-associative (3>2>1 = 0), below + and -
//   && above ||, both below comparisons; results are 1.0 or 0.0; a non-zero operand (NaN too) is
//   true c ? a : b     lowest level, right-associative; c is true when non-zero (NaN counts as
//   true) pi, _pi, _e   full-precision constants (Expression overrides muParser's 12-digit _pi)
// Differences that cannot show in a finite result: fmin/fmax ignore a NaN argument (muParser's
// min/max may propagate it), and abs(-0) is +0 here but -0 in muParser.
#pragma once

#include <string>

#include "problems/expression.hpp"

namespace rbfpde {

// Translates `text` (anything Expression(text, dim) accepts) into one fully parenthesised C
// expression, e.g. "x^2" → "pow(x, 2.0)". Throws ExpressionError for anything Expression rejects
// (with Expression's message) and for anything it cannot translate (naming it).
std::string expression_to_c(const std::string& text, int dim);

namespace codegen {

// Interprets the syntax tree that expression_to_c prints, with the same C library calls, at one
// point (dim coordinates). Exists so that tests can prove the translation means what muParser means
// without a C compiler; not meant for bulk evaluation (it parses on every call).
double evaluate_ast(const std::string& text, int dim, const double* point);

}  // namespace codegen
}  // namespace rbfpde
