#include "solver/config/yaml_fields.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <system_error>
#include <utility>

namespace rbfpde::config_detail {

bool Origin::from_set(const std::string& path) const {
  for (const std::string& set : set_paths) {
    if (path.compare(0, set.size(), set) != 0) continue;
    if (path.size() == set.size() || path[set.size()] == '.' || path[set.size()] == '[') {
      return true;
    }
  }
  return false;
}

std::string format_double(double value) {
  char buffer[40];
  // Whole numbers as integers: %g would write 100 as "1e+02".
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    std::snprintf(buffer, sizeof buffer, "%.0f", value);
    return buffer;
  }
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, value);
    if (std::strtod(buffer, nullptr) == value) break;
  }
  return buffer;
}

// Optimal-string-alignment distance: a swapped pair of letters ("nuerons") counts as one edit,
// the commonest typo in a key.
static std::size_t edit_distance(const std::string& a, const std::string& b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                                       std::tolower(static_cast<unsigned char>(b[j - 1]))
                                   ? 0
                                   : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  // Short words are one edit from many others; allow one edit per three letters, at most two.
  const std::size_t allowed = std::min<std::size_t>(2, std::max<std::size_t>(1, word.size() / 3));
  std::string best;
  std::size_t best_distance = allowed + 1;
  for (const std::string& candidate : candidates) {
    const std::size_t distance = edit_distance(word, candidate);
    if (distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

static std::string quoted(const std::string& text) { return "\"" + text + "\""; }

std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
      return "nothing";
    case YAML::NodeType::Null:
      return "an empty value";
    case YAML::NodeType::Sequence:
      return "a sequence";
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Scalar:
      break;
  }
  return quoted(node.Scalar());
}

// A quoted scalar ("64") is a string even when it looks like a number: saying so explains why a
// number was rejected.
static std::string describe_for_number(const YAML::Node& node) {
  if (node.IsScalar() && node.Tag() == "!") return "the string " + quoted(node.Scalar());
  return describe(node);
}

Field::Field(YAML::Node node, std::string path, YAML::Mark key_mark, const Origin* origin)
    : node_(std::move(node)), path_(std::move(path)), key_mark_(key_mark), origin_(origin) {}

SourceLoc Field::loc() const {
  if (origin_->from_set(path_)) return SourceLoc{"--set"};
  YAML::Mark mark = key_mark_;
  const bool has_mark = node_.IsDefined() && !node_.Mark().is_null();
  if (has_mark && (!node_.IsNull() || key_mark_.is_null())) mark = node_.Mark();
  // Maps created on the way to an override's key have no position of their own.
  if (mark.is_null()) return SourceLoc{"--set"};
  return SourceLoc{origin_->file, mark.line + 1, mark.column + 1};
}

void Field::fail(const std::string& message) const { throw InputError(loc(), path_, message); }

void Field::fail_expected(const std::string& expected) const {
  fail("expected " + expected + ", found " + describe(node_));
}

static std::string join_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

void Field::check_map(const std::vector<std::string>& allowed) const {
  if (!node_.IsMap()) fail_expected("a map");
  std::vector<std::string> seen;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const YAML::Node key_node = it->first;  // a copy: it-> yields a temporary proxy
    Field key_field(key_node, path_, key_node.Mark(), origin_);
    if (!key_node.IsScalar()) key_field.fail_expected("a key name");
    const std::string key = key_node.Scalar();
    Field entry(key_node, join_path(path_, key), key_node.Mark(), origin_);
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string message = "unknown key " + quoted(key);
      const std::string guess = closest_match(key, allowed);
      if (!guess.empty()) message += " (did you mean " + quoted(guess) + "?)";
      entry.fail(message);
    }
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      entry.fail("duplicate key " + quoted(key));
    }
    seen.push_back(key);
  }
}

Field Field::child(const std::string& key) const {
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) {
      return Field(it->second, join_path(path_, key), it->first.Mark(), origin_);
    }
  }
  return Field(YAML::Node(YAML::NodeType::Undefined), join_path(path_, key),
               YAML::Mark::null_mark(), origin_);
}

Field Field::require(const std::string& key) const {
  Field entry = child(key);
  if (!entry.present()) fail("missing required key " + quoted(key));
  return entry;
}

std::vector<Field> Field::entries(const std::string& expected) const {
  if (!node_.IsSequence()) fail_expected(expected);
  std::vector<Field> out;
  for (std::size_t i = 0; i < node_.size(); ++i) {
    const YAML::Node entry = node_[i];
    out.emplace_back(entry, path_ + "[" + std::to_string(i) + "]", entry.Mark(), origin_);
  }
  return out;
}

// Parses all of `text` as an integer of type T; YAML allows a leading '+', from_chars does not.
template <typename T>
static bool parse_integer(const std::string& text, T& value, bool& overflow) {
  overflow = false;
  const char* begin = text.data();
  const char* end = begin + text.size();
  if (begin != end && *begin == '+') ++begin;
  if (begin == end || (*begin != '-' && !std::isdigit(static_cast<unsigned char>(*begin)))) {
    return false;
  }
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ptr != end) return false;
  if (ec == std::errc::result_out_of_range) {
    overflow = true;
    return false;
  }
  return ec == std::errc();
}

long long read_integer(const Field& field, long long min, long long max,
                       const std::string& expected) {
  const YAML::Node& node = field.node();
  long long value = 0;
  bool overflow = false;
  if (!node.IsScalar() || node.Tag() == "!" || !parse_integer(node.Scalar(), value, overflow)) {
    if (overflow) {
      field.fail("expected " + expected + " of at most " + std::to_string(max) + ", found " +
                 describe(node));
    }
    field.fail("expected " + expected + ", found " + describe_for_number(node));
  }
  if (value < min) field.fail_expected(expected);
  if (value > max) {
    field.fail("expected " + expected + " of at most " + std::to_string(max) + ", found " +
               describe(node));
  }
  return value;
}

int read_int(const Field& field, int min, const std::string& expected) {
  return static_cast<int>(read_integer(field, min, std::numeric_limits<int>::max(), expected));
}

unsigned long long read_unsigned(const Field& field, const std::string& expected) {
  const YAML::Node& node = field.node();
  unsigned long long value = 0;
  bool overflow = false;
  const bool negative = node.IsScalar() && !node.Scalar().empty() && node.Scalar()[0] == '-';
  if (!node.IsScalar() || node.Tag() == "!" || negative ||
      !parse_integer(node.Scalar(), value, overflow)) {
    if (overflow) {
      field.fail("expected " + expected + " of at most " +
                 std::to_string(std::numeric_limits<unsigned long long>::max()) + ", found " +
                 describe(node));
    }
    field.fail("expected " + expected + ", found " + describe_for_number(node));
  }
  return value;
}

double read_double(const Field& field, bool (*ok)(double), const std::string& expected) {
  const YAML::Node& node = field.node();
  bool parsed = false;
  double value = 0;
  if (node.IsScalar() && node.Tag() != "!") {
    const std::string& text = node.Scalar();
    const char* begin = text.data();
    const char* end = begin + text.size();
    if (begin != end && *begin == '+') ++begin;
    const auto [ptr, ec] = std::from_chars(begin, end, value);
    // from_chars reads "inf" and "nan"; no parameter here can take them.
    parsed = begin != end && ptr == end && ec == std::errc() && std::isfinite(value);
  }
  if (!parsed) field.fail("expected " + expected + ", found " + describe_for_number(node));
  if (!ok(value)) field.fail_expected(expected);
  return value;
}

std::string read_text(const Field& field, const std::string& expected) {
  if (!field.node().IsScalar() || field.node().Scalar().empty()) field.fail_expected(expected);
  return field.node().Scalar();
}

std::string read_choice(const Field& field, const std::vector<std::string>& options) {
  std::string expected = options.size() == 1 ? options[0] : "one of ";
  if (options.size() > 1) {
    for (std::size_t i = 0; i < options.size(); ++i) expected += (i ? ", " : "") + options[i];
  }
  if (!field.node().IsScalar()) field.fail_expected(expected);
  const std::string& text = field.node().Scalar();
  if (std::find(options.begin(), options.end(), text) == options.end()) {
    field.fail_expected(expected);
  }
  return text;
}

ExprSpec read_expression(const Field& field) {
  ExprSpec spec;
  spec.text = read_text(field, "an expression");
  spec.key = field.path();
  spec.loc = field.loc();
  return spec;
}

std::vector<double> read_numbers(const Field& field, std::size_t count, const std::string& why) {
  const std::string expected = "a sequence of " + std::to_string(count) + " numbers";
  const std::vector<Field> items = field.entries(expected);
  if (items.size() != count) {
    field.fail("expected " + std::to_string(count) + " numbers (" + why + "), found " +
               std::to_string(items.size()));
  }
  std::vector<double> values;
  for (const Field& item : items) {
    values.push_back(read_double(
        item, [](double) { return true; }, "a number"));
  }
  return values;
}

}  // namespace rbfpde::config_detail
