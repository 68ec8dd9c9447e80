// Expression: a muParser formula bound to the coordinates of one point. Every check that can fail
// on the text itself runs in the constructor, so a bad config fails at load time, not mid-training.
#include "problems/expression.hpp"

#include <muParser.h>

#include <cctype>
#include <set>
#include <string>
#include <vector>

namespace rbfpde {

namespace {

const char* const kVariableNames[3] = {"x", "y", "z"};
constexpr double kPi = 3.14159265358979323846;

bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool is_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!is_identifier_char(c)) return false;
  return true;
}

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  const auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

// muParser accepts "x = 0" (and "x += 1") as an assignment to the variable. A user who writes it
// means a comparison, and would silently get 0 everywhere; reject it with the fix.
void reject_assignment(const std::string& text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '=') continue;
    const char prev = i > 0 ? text[i - 1] : ' ';
    const char next = i + 1 < text.size() ? text[i + 1] : ' ';
    if (next == '=') {
      ++i;  // "==": skip both characters
      continue;
    }
    if (prev == '<' || prev == '>' || prev == '!') continue;
    throw ExpressionError("assignment '=' at position " + std::to_string(i) +
                          " is not allowed; use '==' to compare (or abs(a - b) < tol)");
  }
}

std::string dims_hint(int dim, bool time) {
  if (time) return dim == 3 ? " (variables are x, y and t)" : " (variables are x, y, z and t)";
  return dim == 2 ? " (a 2D problem has variables x and y)" : " (variables are x, y and z)";
}

// The identifier that ends just before `pos` (e.g. "foo" in "foo(x)" when pos points at '(').
std::string identifier_before(const std::string& text, int pos) {
  if (pos <= 0 || pos > static_cast<int>(text.size())) return "";
  int end = pos;
  while (end > 0 && text[end - 1] == ' ') --end;
  int begin = end;
  while (begin > 0 && is_identifier_char(text[begin - 1])) --begin;
  std::string id = text.substr(begin, end - begin);
  return is_identifier(id) ? id : "";
}

}  // namespace

struct Expression::Impl {
  mu::Parser parser;
  // The parser holds pointers to these: Impl never moves (shared_ptr).
  double vars[4] = {0, 0, 0, 0};
  bool constant = true;
};

Expression::Expression(const std::string& text, int dim, bool time) : text_(text), dim_(dim) {
  if (time ? (dim != 3 && dim != 4) : (dim != 2 && dim != 3)) {
    throw ExpressionError("dimension must be 2 or 3 (plus time), found " + std::to_string(dim));
  }
  if (trim(text).empty()) throw ExpressionError("empty expression");
  reject_assignment(text);

  auto impl = std::make_shared<Impl>();
  mu::Parser& p = impl->parser;
  std::set<std::string> allowed;
  try {
    for (int k = 0; k < dim; ++k) {
      const char* name = time && k == dim - 1 ? "t" : kVariableNames[k];
      p.DefineVar(name, &impl->vars[k]);
      allowed.insert(name);
    }
    p.DefineConst("pi", kPi);
    // Debian's muParser 2.3.3 defines _pi with only 12 decimals (3.141592653589); override it so
    // that "_pi" and "pi" agree to double precision.
    p.DefineConst("_pi", kPi);
    p.SetExpr(text);
  } catch (const mu::Parser::exception_type& e) {
    throw ExpressionError(e.GetMsg());
  }

  // GetUsedVar parses the whole text while tolerating undefined names, so it reports every name
  // used as a variable; Eval then forces the real parse (syntax, unknown functions).
  std::vector<std::string> unknown;
  try {
    const auto& used = p.GetUsedVar();
    for (const auto& entry : used) {
      if (!allowed.count(entry.first)) unknown.push_back(entry.first);
    }
    impl->constant = used.empty();
    p.Eval();
    if (p.GetNumResults() > 1) {
      throw ExpressionError("expected one expression, found " + std::to_string(p.GetNumResults()) +
                            " separated by commas");
    }
  } catch (const mu::Parser::exception_type& e) {
    const std::string token = e.GetToken();
    const int pos = e.GetPos();
    if (e.GetCode() == mu::ecUNASSIGNABLE_TOKEN && is_identifier(trim(token))) {
      throw ExpressionError("unknown variable '" + trim(token) + "' at position " +
                            std::to_string(pos) + dims_hint(dim, time));
    }
    if (e.GetCode() == mu::ecUNEXPECTED_PARENS && token == "(") {
      const std::string name = identifier_before(text, pos);
      if (!name.empty()) {
        throw ExpressionError("unknown function '" + name + "' at position " +
                              std::to_string(pos - static_cast<int>(name.size())));
      }
    }
    std::string message = "syntax error: " + e.GetMsg();
    if (message.find("position") == std::string::npos && pos >= 0) {
      message += " at position " + std::to_string(pos);
    }
    throw ExpressionError(message);
  }
  // Defensive: a name GetUsedVar saw but Eval did not reject (should not happen with no factory).
  if (!unknown.empty()) {
    throw ExpressionError("unknown variable '" + unknown.front() + "'" + dims_hint(dim, time));
  }
  impl_ = std::move(impl);
}

bool Expression::is_constant() const { return !impl_ || impl_->constant; }

double Expression::operator()(const double* point) const {
  if (!impl_) return 0.0;
  for (int k = 0; k < dim_; ++k) impl_->vars[k] = point[k];
  return impl_->parser.Eval();
}

void Expression::evaluate(const double* points, std::size_t n, double* out) const {
  if (!impl_) {
    for (std::size_t i = 0; i < n; ++i) out[i] = 0.0;
    return;
  }
  mu::Parser& p = impl_->parser;
  double* vars = impl_->vars;
  const int d = dim_;
  for (std::size_t i = 0; i < n; ++i) {
    for (int k = 0; k < d; ++k) vars[k] = points[i * d + k];
    out[i] = p.Eval();
  }
}

}  // namespace rbfpde
