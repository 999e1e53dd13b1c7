#include "debugger/json/Json.h"

#include <cmath>
#include <cstdio>

namespace bud::json {

std::string json_quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

Json& Json::set(const std::string& key, Json value) {
  auto& obj = std::get<Object>(v_);
  for (auto& [k, v] : obj) {
    if (k == key) {
      v = std::move(value);
      return *this;
    }
  }
  obj.emplace_back(key, std::move(value));
  return *this;
}

Json& Json::push(Json value) {
  std::get<Array>(v_).push_back(std::move(value));
  return *this;
}

std::string Json::dump() const {
  std::string out;
  write(out);
  return out;
}

void Json::write(std::string& out) const {
  switch (v_.index()) {
    case 0: out += "null"; break;
    case 1: out += std::get<bool>(v_) ? "true" : "false"; break;
    case 2: out += std::to_string(std::get<int64_t>(v_)); break;
    case 3: out += std::to_string(std::get<uint64_t>(v_)); break;
    case 4: {
      const double d = std::get<double>(v_);
      if (!std::isfinite(d)) {
        out += "null";
      } else {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.6g", d);
        out += buf;
      }
      break;
    }
    case 5: out += json_quote(std::get<std::string>(v_)); break;
    case 6: {
      out += '{';
      bool first = true;
      for (const auto& [k, v] : std::get<Object>(v_)) {
        if (!first) out += ',';
        first = false;
        out += json_quote(k);
        out += ':';
        v.write(out);
      }
      out += '}';
      break;
    }
    case 7: {
      out += '[';
      bool first = true;
      for (const auto& v : std::get<Array>(v_)) {
        if (!first) out += ',';
        first = false;
        v.write(out);
      }
      out += ']';
      break;
    }
  }
}

}  // namespace bud::json
