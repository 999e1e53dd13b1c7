// A small ordered JSON value for --json output (run reports, debugger results): objects keep insertion order so output is stable
// and diffable. Writing only (bud never parses JSON).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace bud::json {

class Json {
 public:
  using Object = std::vector<std::pair<std::string, Json>>;
  using Array = std::vector<Json>;

  Json() : v_(nullptr) {}
  Json(std::nullptr_t) : v_(nullptr) {}
  Json(bool b) : v_(b) {}
  Json(int v) : v_(static_cast<int64_t>(v)) {}
  Json(int64_t v) : v_(v) {}
  Json(uint64_t v) : v_(v) {}
  Json(uint32_t v) : v_(static_cast<uint64_t>(v)) {}
  Json(double v) : v_(v) {}
  Json(const char* s) : v_(std::string(s)) {}
  Json(std::string s) : v_(std::move(s)) {}
  static Json object() { Json j; j.v_ = Object{}; return j; }
  static Json array() { Json j; j.v_ = Array{}; return j; }

  /// Adds (or replaces) a member of an object.
  Json& set(const std::string& key, Json value);
  /// Appends to an array.
  Json& push(Json value);

  /// Compact single-line form.
  std::string dump() const;

 private:
  void write(std::string& out) const;
  std::variant<std::nullptr_t, bool, int64_t, uint64_t, double, std::string, Object, Array> v_;
};

/// Escapes a string for JSON (quotes included).
std::string json_quote(const std::string& s);

}  // namespace bud::json
