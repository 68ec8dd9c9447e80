// Json: just enough JSON for summary.json. Numbers are written as the shortest text that reads
// back as the same double, so nothing is lost between the run and whoever reads the summary.
#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "solver/output/output.hpp"

namespace rbfpde {
namespace {

void append_escaped(std::string& out, const std::string& s) {
  out += '"';
  for (unsigned char c : s) {
    if (c == '"') {
      out += "\\\"";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
}

void append_newline(std::string& out, int indent, int depth) {
  if (indent <= 0) return;
  out += '\n';
  out.append(static_cast<std::size_t>(indent) * depth, ' ');
}

}  // namespace

Json::Json() = default;

Json::Json(double v) {
  if (std::isfinite(v)) {
    kind_ = Kind::Number;
    number_ = v;
  }
}

Json::Json(long long v) : kind_(Kind::Integer), integer_(v) {}

Json::Json(unsigned long long v)
    : kind_(Kind::Integer), integer_(static_cast<long long>(v)), unsigned_(true) {}

Json::Json(bool v) : kind_(Kind::Bool), bool_(v) {}

Json::Json(const char* s) : kind_(Kind::String), string_(s ? s : "") {}

Json::Json(const std::string& s) : kind_(Kind::String), string_(s) {}

Json Json::object() {
  Json j;
  j.kind_ = Kind::Object;
  return j;
}

Json Json::array() {
  Json j;
  j.kind_ = Kind::Array;
  return j;
}

Json& Json::set(const std::string& key, Json value) {
  if (kind_ == Kind::Null) kind_ = Kind::Object;
  if (kind_ != Kind::Object) throw std::logic_error("Json::set on a value that is not an object");
  for (auto& member : members_) {
    if (member.first == key) {  // JSON keys are unique: replace in place, keep the position
      member.second = std::move(value);
      return *this;
    }
  }
  members_.emplace_back(key, std::move(value));
  return *this;
}

Json& Json::push(Json value) {
  if (kind_ == Kind::Null) kind_ = Kind::Array;
  if (kind_ != Kind::Array) throw std::logic_error("Json::push on a value that is not an array");
  items_.push_back(std::move(value));
  return *this;
}

std::string Json::dump(int indent) const {
  std::string out;
  dump_to(out, indent, 0);
  return out;
}

void Json::dump_to(std::string& out, int indent, int depth) const {
  switch (kind_) {
    case Kind::Null:
      out += "null";
      return;
    case Kind::Bool:
      out += bool_ ? "true" : "false";
      return;
    case Kind::Number: {
      char buf[64];
      const auto r = std::to_chars(buf, buf + sizeof buf, number_);
      out.append(buf, r.ptr);
      return;
    }
    case Kind::Integer:
      out += unsigned_ ? std::to_string(static_cast<unsigned long long>(integer_))
                       : std::to_string(integer_);
      return;
    case Kind::String:
      append_escaped(out, string_);
      return;
    case Kind::Object: {
      if (members_.empty()) {
        out += "{}";
        return;
      }
      out += '{';
      for (std::size_t i = 0; i < members_.size(); ++i) {
        if (i) out += ',';
        append_newline(out, indent, depth + 1);
        append_escaped(out, members_[i].first);
        out += indent > 0 ? ": " : ":";
        members_[i].second.dump_to(out, indent, depth + 1);
      }
      append_newline(out, indent, depth);
      out += '}';
      return;
    }
    case Kind::Array: {
      if (items_.empty()) {
        out += "[]";
        return;
      }
      out += '[';
      for (std::size_t i = 0; i < items_.size(); ++i) {
        if (i) out += ',';
        append_newline(out, indent, depth + 1);
        items_[i].dump_to(out, indent, depth + 1);
      }
      append_newline(out, indent, depth);
      out += ']';
      return;
    }
  }
}

}  // namespace rbfpde
