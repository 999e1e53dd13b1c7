#include "load/ArrivalTrace.h"

#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

namespace bud::load {
namespace {

// Checks one timestamp against the one before it; empty when fine.
std::string check(double t, const std::vector<double>& before) {
  if (!std::isfinite(t)) return "not a finite number";
  if (t < 0) return "negative timestamp";
  if (!before.empty() && t < before.back()) return "decreasing timestamp";
  return {};
}

}  // namespace

ArrivalTrace parse_arrival_trace(const std::string& file, const std::string& text) {
  ArrivalTrace r;
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '[') {
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_array()) {
      r.error = file + ": not a JSON array of numbers";
      return r;
    }
    for (size_t i = 0; i < j.size(); ++i) {
      std::string e = j[i].is_number() ? check(j[i].get<double>(), r.times_us) : "not a number";
      if (!e.empty()) {
        r.error = file + ": index " + std::to_string(i) + ": " + e;
        return r;
      }
      r.times_us.push_back(j[i].get<double>());
    }
  } else {
    size_t line = 0, pos = 0;
    while (pos <= text.size()) {
      const size_t end = std::min(text.find('\n', pos), text.size());
      std::string l = text.substr(pos, end - pos);
      ++line;
      pos = end + 1;
      if (const size_t hash = l.find('#'); hash != std::string::npos) l.resize(hash);
      const size_t a = l.find_first_not_of(" \t\r");
      if (a == std::string::npos) continue;
      const size_t b = l.find_last_not_of(" \t\r");
      const std::string field = l.substr(a, b - a + 1);
      char* stop = nullptr;
      const double t = std::strtod(field.c_str(), &stop);
      std::string e = stop != field.c_str() + field.size() ? "not a number: '" + field + "'"
                                                           : check(t, r.times_us);
      if (!e.empty()) {
        r.error = file + ":" + std::to_string(line) + ": " + e;
        return r;
      }
      r.times_us.push_back(t);
    }
  }
  if (r.times_us.empty()) r.error = file + ": empty trace (no timestamps)";
  return r;
}

}  // namespace bud::load
