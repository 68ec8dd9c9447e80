// expression_to_c: a tokenizer and a precedence-climbing parser that mirror muParser 2.3.3's
// grammar build a syntax tree; the tree is printed as C (expression_to_c) or interpreted with the
// same library calls (evaluate_ast), so that the interpreter proves what the printed C means.
#include "problems/expression_codegen.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <locale>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace rbfpde {

namespace codegen {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kE = 2.71828182845904523536;
const char* const kVariableNames[3] = {"x", "y", "z"};

// ---------------------------------------------------------------------------------------------
// Tokens

enum class Tok { kNumber, kName, kOperator, kLParen, kRParen, kComma, kQuestion, kColon, kEnd };

struct Token {
  Tok kind;
  std::string text;
  double value = 0;
  std::size_t pos = 0;
};

std::string position(std::size_t pos) { return " at position " + std::to_string(pos); }

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// Reads a number the way muParser does (a stream in the classic locale), so that both sides start
// from the same double whatever the process locale is.
double read_number(const std::string& text, std::size_t pos) {
  std::istringstream in(text);
  in.imbue(std::locale::classic());
  double v = 0;
  in >> v;
  if (in.fail() || !std::isfinite(v)) {
    throw ExpressionError("number '" + text + "'" + position(pos) + " is not a finite double");
  }
  return v;
}

std::vector<Token> tokenize(const std::string& s) {
  std::vector<Token> tokens;
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    const std::size_t start = i;
    if (is_digit(c) || (c == '.' && i + 1 < s.size() && is_digit(s[i + 1]))) {
      // digits [. digits] [e [+-] digits]: "1", "1.", ".5", "1e-3"
      while (i < s.size() && is_digit(s[i])) ++i;
      if (i < s.size() && s[i] == '.') {
        ++i;
        while (i < s.size() && is_digit(s[i])) ++i;
      }
      if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        std::size_t j = i + 1;
        if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
        if (j >= s.size() || !is_digit(s[j])) {
          throw ExpressionError("malformed number '" + s.substr(start, j - start) + "'" +
                                position(start));
        }
        while (j < s.size() && is_digit(s[j])) ++j;
        i = j;
      }
      const std::string text = s.substr(start, i - start);
      tokens.push_back({Tok::kNumber, text, read_number(text, start), start});
      continue;
    }
    if (is_name_start(c)) {
      while (i < s.size() && is_name_char(s[i])) ++i;
      tokens.push_back({Tok::kName, s.substr(start, i - start), 0, start});
      continue;
    }
    const std::string two = s.substr(i, 2);
    if (two == "<=" || two == ">=" || two == "==" || two == "!=" || two == "&&" || two == "||") {
      tokens.push_back({Tok::kOperator, two, 0, start});
      i += 2;
      continue;
    }
    if (c == '=') {
      throw ExpressionError("assignment '='" + position(start) +
                            " is not allowed; use '==' to compare");
    }
    static const std::string kSingle = "+-*/^<>(),?:";
    static const Tok kSingleKind[] = {Tok::kOperator, Tok::kOperator, Tok::kOperator,
                                      Tok::kOperator, Tok::kOperator, Tok::kOperator,
                                      Tok::kOperator, Tok::kLParen,   Tok::kRParen,
                                      Tok::kComma,    Tok::kQuestion, Tok::kColon};
    const std::size_t k = kSingle.find(c);
    if (k == std::string::npos) {
      throw ExpressionError(std::string("unexpected character '") + c + "'" + position(start));
    }
    const Tok kind = kSingleKind[k];
    tokens.push_back({kind, std::string(1, c), 0, start});
    ++i;
  }
  tokens.push_back({Tok::kEnd, "", 0, s.size()});
  return tokens;
}

// ---------------------------------------------------------------------------------------------
// Syntax tree

// Functions muParser 2.3.3 defines (mu::Parser::GetFunDef() lists exactly these).
enum class Fn {
  kPlain,  // one argument, the C function of the same meaning (c_name)
  kAtan2,
  kSign,
  kRint,
  kMin,
  kMax,
  kSum,
  kAvg,
};

struct FunctionSpec {
  const char* name;    // muParser's name
  const char* c_name;  // the C function (kPlain, kAtan2, kMin, kMax)
  Fn fn;
  double (*plain)(double);
};

const FunctionSpec kFunctions[] = {
    {"sin", "sin", Fn::kPlain, [](double v) { return std::sin(v); }},
    {"cos", "cos", Fn::kPlain, [](double v) { return std::cos(v); }},
    {"tan", "tan", Fn::kPlain, [](double v) { return std::tan(v); }},
    {"asin", "asin", Fn::kPlain, [](double v) { return std::asin(v); }},
    {"acos", "acos", Fn::kPlain, [](double v) { return std::acos(v); }},
    {"atan", "atan", Fn::kPlain, [](double v) { return std::atan(v); }},
    {"sinh", "sinh", Fn::kPlain, [](double v) { return std::sinh(v); }},
    {"cosh", "cosh", Fn::kPlain, [](double v) { return std::cosh(v); }},
    {"tanh", "tanh", Fn::kPlain, [](double v) { return std::tanh(v); }},
    {"asinh", "asinh", Fn::kPlain, [](double v) { return std::asinh(v); }},
    {"acosh", "acosh", Fn::kPlain, [](double v) { return std::acosh(v); }},
    {"atanh", "atanh", Fn::kPlain, [](double v) { return std::atanh(v); }},
    {"exp", "exp", Fn::kPlain, [](double v) { return std::exp(v); }},
    // muParser's log is the natural logarithm, like ln (log(100) = 4.605...).
    {"log", "log", Fn::kPlain, [](double v) { return std::log(v); }},
    {"ln", "log", Fn::kPlain, [](double v) { return std::log(v); }},
    {"log2", "log2", Fn::kPlain, [](double v) { return std::log2(v); }},
    {"log10", "log10", Fn::kPlain, [](double v) { return std::log10(v); }},
    {"sqrt", "sqrt", Fn::kPlain, [](double v) { return std::sqrt(v); }},
    {"abs", "fabs", Fn::kPlain, [](double v) { return std::fabs(v); }},
    {"atan2", "atan2", Fn::kAtan2, nullptr},
    {"sign", "", Fn::kSign, nullptr},
    {"rint", "floor", Fn::kRint, nullptr},
    {"min", "fmin", Fn::kMin, nullptr},
    {"max", "fmax", Fn::kMax, nullptr},
    {"sum", "", Fn::kSum, nullptr},
    {"avg", "", Fn::kAvg, nullptr},
};

const FunctionSpec* find_function(const std::string& name) {
  for (const FunctionSpec& f : kFunctions)
    if (name == f.name) return &f;
  return nullptr;
}

struct Node {
  enum class Kind { kNumber, kVariable, kNegate, kBinary, kTernary, kCall };
  Kind kind;
  double value = 0;  // kNumber
  std::string text;  // kNumber: its C literal; kVariable: its name; kBinary: the operator
  int variable = 0;  // kVariable: 0, 1, 2 for x, y, z
  const FunctionSpec* function = nullptr;  // kCall
  std::vector<std::unique_ptr<Node>> args;
};

using NodePtr = std::unique_ptr<Node>;

NodePtr make_node(Node::Kind kind) {
  auto n = std::make_unique<Node>();
  n->kind = kind;
  return n;
}

// The shortest decimal that reads back as v, as a double literal ("2.0", "0.1", "1e-20"):
// readable, exact, and never an int (1/2 in C is 0). to_chars ignores the process locale, which
// could otherwise print a decimal comma.
std::string literal(double v) {
  char buf[64];
  const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
  std::string s(buf, end);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

// Constants print with 17 significant digits (%.17g), which read back exactly.
std::string constant_literal(double v) {
  char buf[64];
  const auto end = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 17).ptr;
  return std::string(buf, end);
}

// Binary levels, loosest first; all left-associative. '^' is handled apart (right-associative,
// and its right operand may carry a sign).
int binary_precedence(const Token& t) {
  if (t.kind != Tok::kOperator) return 0;
  const std::string& o = t.text;
  if (o == "||") return 1;
  if (o == "&&") return 2;
  if (o == "<" || o == ">" || o == "<=" || o == ">=" || o == "==" || o == "!=") return 4;
  if (o == "+" || o == "-") return 5;
  if (o == "*" || o == "/") return 6;
  return 0;
}

std::string describe(const Token& t) {
  if (t.kind == Tok::kEnd) return "end of expression";
  return "'" + t.text + "'" + position(t.pos);
}

class Parser {
 public:
  Parser(const std::string& text, int dim) : tokens_(tokenize(text)), dim_(dim) {}

  NodePtr parse() {
    NodePtr root = parse_ternary();
    if (peek().kind == Tok::kComma) {
      throw ExpressionError("expected one expression, found several separated by commas");
    }
    if (peek().kind != Tok::kEnd) throw ExpressionError("unexpected " + describe(peek()));
    return root;
  }

 private:
  const Token& peek() const { return tokens_[next_]; }
  const Token& take() { return tokens_[next_++]; }
  bool at_operator(const char* op) const {
    return peek().kind == Tok::kOperator && peek().text == op;
  }
  void expect(Tok kind, const char* what) {
    if (peek().kind != kind) {
      throw ExpressionError(std::string("expected ") + what + ", found " + describe(peek()));
    }
    ++next_;
  }

  // ternary := binary(1) [ '?' ternary ':' ternary ]
  NodePtr parse_ternary() {
    NodePtr cond = parse_binary(1);
    if (peek().kind != Tok::kQuestion) return cond;
    take();
    NodePtr then_branch = parse_ternary();
    expect(Tok::kColon, "':' of the if-then-else operator");
    NodePtr else_branch = parse_ternary();
    NodePtr n = make_node(Node::Kind::kTernary);
    n->args.push_back(std::move(cond));
    n->args.push_back(std::move(then_branch));
    n->args.push_back(std::move(else_branch));
    return n;
  }

  // Precedence climbing over the left-associative binary levels.
  NodePtr parse_binary(int min_precedence) {
    NodePtr lhs = parse_signed();
    for (;;) {
      const int p = binary_precedence(peek());
      if (p == 0 || p < min_precedence) return lhs;
      const std::string op = take().text;
      NodePtr rhs = parse_binary(p + 1);
      NodePtr n = make_node(Node::Kind::kBinary);
      n->text = op;
      n->args.push_back(std::move(lhs));
      n->args.push_back(std::move(rhs));
      lhs = std::move(n);
    }
  }

  // signed := ['+' | '-'] power. One sign only: muParser rejects "--2". The sign applies to a whole
  // power chain (-2^2 = -4); against * and / its place does not change the value.
  NodePtr parse_signed() {
    if (at_operator("-")) {
      take();
      NodePtr n = make_node(Node::Kind::kNegate);
      n->args.push_back(parse_power());
      return n;
    }
    if (at_operator("+")) take();  // muParser's unary plus returns its operand
    return parse_power();
  }

  // power := primary [ '^' signed ]: right-associative, 2^3^2 = 2^9.
  NodePtr parse_power() {
    NodePtr base = parse_primary();
    if (!at_operator("^")) return base;
    take();
    NodePtr exponent = parse_signed();
    NodePtr n = make_node(Node::Kind::kBinary);
    n->text = "^";
    n->args.push_back(std::move(base));
    n->args.push_back(std::move(exponent));
    return n;
  }

  NodePtr parse_primary() {
    const Token& t = take();
    switch (t.kind) {
      case Tok::kNumber: {
        NodePtr n = make_node(Node::Kind::kNumber);
        n->value = t.value;
        n->text = literal(t.value);
        return n;
      }
      case Tok::kLParen: {
        NodePtr inner = parse_ternary();
        expect(Tok::kRParen, "')'");
        return inner;
      }
      case Tok::kName:
        return peek().kind == Tok::kLParen ? parse_call(t) : parse_name(t);
      default:
        throw ExpressionError("unexpected " + describe(t));
    }
  }

  NodePtr parse_name(const Token& t) {
    for (int k = 0; k < 3; ++k) {
      if (t.text != kVariableNames[k]) continue;
      if (k >= dim_) {
        throw ExpressionError("unknown variable '" + t.text + "'" + position(t.pos) +
                              " (a 2D problem has variables x and y)");
      }
      NodePtr n = make_node(Node::Kind::kVariable);
      n->variable = k;
      n->text = t.text;
      return n;
    }
    if (t.text == "pi" || t.text == "_pi" || t.text == "_e") {
      NodePtr n = make_node(Node::Kind::kNumber);
      n->value = t.text == "_e" ? kE : kPi;
      n->text = constant_literal(n->value);
      return n;
    }
    if (find_function(t.text)) {
      throw ExpressionError("function '" + t.text + "'" + position(t.pos) +
                            " needs its arguments in parentheses");
    }
    throw ExpressionError("unknown variable '" + t.text + "'" + position(t.pos));
  }

  NodePtr parse_call(const Token& name) {
    const FunctionSpec* f = find_function(name.text);
    if (!f) throw ExpressionError("unknown function '" + name.text + "'" + position(name.pos));
    take();  // '('
    NodePtr n = make_node(Node::Kind::kCall);
    n->function = f;
    n->text = name.text;
    if (peek().kind != Tok::kRParen) {
      n->args.push_back(parse_ternary());
      while (peek().kind == Tok::kComma) {
        take();
        n->args.push_back(parse_ternary());
      }
    }
    expect(Tok::kRParen, "')' or ','");
    const std::size_t argc = n->args.size();
    const bool variadic =
        f->fn == Fn::kMin || f->fn == Fn::kMax || f->fn == Fn::kSum || f->fn == Fn::kAvg;
    const std::size_t wanted = f->fn == Fn::kAtan2 ? 2 : 1;
    if (variadic ? argc < 1 : argc != wanted) {
      throw ExpressionError(
          "function '" + name.text + "'" + position(name.pos) + " takes " +
          (variadic ? "at least 1 argument" : std::to_string(wanted) + " argument(s)") +
          ", found " + std::to_string(argc));
    }
    return n;
  }

  std::vector<Token> tokens_;
  std::size_t next_ = 0;
  int dim_;
};

NodePtr parse(const std::string& text, int dim) {
  // Expression (muParser) decides what is accepted and words the errors, so that a text the
  // device path takes is exactly a text the host path takes; the parser below then only has to
  // understand what muParser understood.
  Expression validated(text, dim);
  return Parser(text, dim).parse();
}

// ---------------------------------------------------------------------------------------------
// Printing as C

bool is_comparison(const std::string& op) {
  return op == "<" || op == ">" || op == "<=" || op == ">=" || op == "==" || op == "!=";
}

std::string to_c(const Node& n) {
  switch (n.kind) {
    case Node::Kind::kNumber:
    case Node::Kind::kVariable:
      return n.text;
    case Node::Kind::kNegate:
      // Always parenthesised, so a nested sign prints "(-(-x))", never the token "--".
      return "(-" + to_c(*n.args[0]) + ")";
    case Node::Kind::kTernary:
      return "((" + to_c(*n.args[0]) + " != 0.0) ? " + to_c(*n.args[1]) + " : " + to_c(*n.args[2]) +
             ")";
    case Node::Kind::kBinary: {
      const std::string a = to_c(*n.args[0]), b = to_c(*n.args[1]);
      const std::string& op = n.text;
      if (op == "^") return "pow(" + a + ", " + b + ")";
      if (is_comparison(op)) return "((" + a + " " + op + " " + b + ") ? 1.0 : 0.0)";
      if (op == "&&" || op == "||") {
        return "(((" + a + " != 0.0) " + op + " (" + b + " != 0.0)) ? 1.0 : 0.0)";
      }
      return "(" + a + " " + op + " " + b + ")";
    }
    case Node::Kind::kCall: {
      const FunctionSpec& f = *n.function;
      std::vector<std::string> args;
      for (const auto& a : n.args) args.push_back(to_c(*a));
      switch (f.fn) {
        case Fn::kPlain:
          return std::string(f.c_name) + "(" + args[0] + ")";
        case Fn::kAtan2:
          return "atan2(" + args[0] + ", " + args[1] + ")";
        case Fn::kSign:
          // The argument is printed twice: nested sign() grows the text, but stays one expression.
          return "((double)((" + args[0] + " > 0.0) - (" + args[0] + " < 0.0)))";
        case Fn::kRint:
          return "floor((" + args[0] + " + 0.5))";
        case Fn::kMin:
        case Fn::kMax: {
          std::string s = args[0];
          for (std::size_t i = 1; i < args.size(); ++i) {
            s = std::string(f.c_name) + "(" + s + ", " + args[i] + ")";
          }
          return s;
        }
        case Fn::kSum:
        case Fn::kAvg: {
          std::string s = args[0];
          for (std::size_t i = 1; i < args.size(); ++i) s = "(" + s + " + " + args[i] + ")";
          if (f.fn == Fn::kAvg) {
            s = "(" + s + " / " + literal(static_cast<double>(args.size())) + ")";
          }
          return s;
        }
      }
      break;
    }
  }
  throw ExpressionError("internal error: untranslatable node");
}

// ---------------------------------------------------------------------------------------------
// Interpreting, with the same calls as the printed C

double evaluate(const Node& n, const double* point) {
  switch (n.kind) {
    case Node::Kind::kNumber:
      return n.value;
    case Node::Kind::kVariable:
      return point[n.variable];
    case Node::Kind::kNegate:
      return -evaluate(*n.args[0], point);
    case Node::Kind::kTernary:
      return evaluate(*n.args[0], point) != 0.0 ? evaluate(*n.args[1], point)
                                                : evaluate(*n.args[2], point);
    case Node::Kind::kBinary: {
      const double a = evaluate(*n.args[0], point), b = evaluate(*n.args[1], point);
      const std::string& op = n.text;
      if (op == "+") return a + b;
      if (op == "-") return a - b;
      if (op == "*") return a * b;
      if (op == "/") return a / b;
      if (op == "^") return std::pow(a, b);
      if (op == "<") return a < b ? 1.0 : 0.0;
      if (op == ">") return a > b ? 1.0 : 0.0;
      if (op == "<=") return a <= b ? 1.0 : 0.0;
      if (op == ">=") return a >= b ? 1.0 : 0.0;
      if (op == "==") return a == b ? 1.0 : 0.0;
      if (op == "!=") return a != b ? 1.0 : 0.0;
      if (op == "&&") return (a != 0.0 && b != 0.0) ? 1.0 : 0.0;
      if (op == "||") return (a != 0.0 || b != 0.0) ? 1.0 : 0.0;
      break;
    }
    case Node::Kind::kCall: {
      const FunctionSpec& f = *n.function;
      std::vector<double> v;
      for (const auto& a : n.args) v.push_back(evaluate(*a, point));
      switch (f.fn) {
        case Fn::kPlain:
          return f.plain(v[0]);
        case Fn::kAtan2:
          return std::atan2(v[0], v[1]);
        case Fn::kSign:
          return static_cast<double>((v[0] > 0.0) - (v[0] < 0.0));
        case Fn::kRint:
          return std::floor(v[0] + 0.5);
        case Fn::kMin:
        case Fn::kMax: {
          double r = v[0];
          for (std::size_t i = 1; i < v.size(); ++i)
            r = f.fn == Fn::kMin ? std::fmin(r, v[i]) : std::fmax(r, v[i]);
          return r;
        }
        case Fn::kSum:
        case Fn::kAvg: {
          double s = v[0];
          for (std::size_t i = 1; i < v.size(); ++i) s = s + v[i];
          return f.fn == Fn::kAvg ? s / static_cast<double>(v.size()) : s;
        }
      }
      break;
    }
  }
  throw ExpressionError("internal error: unevaluable node");
}

}  // namespace

double evaluate_ast(const std::string& text, int dim, const double* point) {
  return evaluate(*parse(text, dim), point);
}

}  // namespace codegen

std::string expression_to_c(const std::string& text, int dim) {
  return codegen::to_c(*codegen::parse(text, dim));
}

}  // namespace rbfpde
