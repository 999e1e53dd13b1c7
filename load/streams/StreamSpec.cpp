#include "load/streams/StreamSpec.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <vector>

namespace bud::load {

namespace {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts(1);
  for (char c : text) {
    if (c == sep)
      parts.emplace_back();
    else
      parts.back() += c;
  }
  return parts;
}

/// The whole of `s` as a finite number, or none.
bool to_number(const std::string& s, double& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtod(s.c_str(), &end);
  return errno == 0 && end == s.c_str() + s.size() && std::isfinite(out);
}

bool valid_name(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-'))
      return false;
  return true;
}

}  // namespace

StreamParse parse_stream_spec(const std::string& text) {
  StreamParse r;
  auto bad = [&](const char* field, const std::string& value, const std::string& why) {
    r.field = field;
    r.error = "--stream \"" + text + "\": " + field + " \"" + value + "\" " + why +
              " (NAME:WORKLOAD:SHARE[:SLA_US[:PRIORITY|WEIGHT]])";
    return r;
  };
  const auto f = split(text, ':');
  if (f.size() < 3) return bad(f.size() < 2 ? "WORKLOAD" : "SHARE", "", "is missing");
  if (f.size() > 5) return bad("PRIORITY|WEIGHT", f[5], "is one field too many");
  if (!valid_name(f[0])) return bad("NAME", f[0], "must be letters, digits, '_', '.' or '-'");
  if (f[1].empty()) return bad("WORKLOAD", f[1], "must name a workload");
  r.spec.name = f[0];
  r.spec.workload = f[1];
  if (!to_number(f[2], r.spec.share) || !(r.spec.share > 0))
    return bad("SHARE", f[2], "must be a number > 0");
  if (f.size() > 3 && !f[3].empty()) {
    if (!to_number(f[3], r.spec.sla_p99_us) || r.spec.sla_p99_us < 0)
      return bad("SLA_US", f[3], "must be a number >= 0 (microseconds)");
    r.spec.sla_given = true;
  }
  if (f.size() > 4) {
    double v = 0;
    if (!to_number(f[4], v) || v < 1 || v > 1e6 || v != std::floor(v))
      return bad("PRIORITY|WEIGHT", f[4], "must be an integer in 1..1000000");
    r.spec.priority = r.spec.weight = static_cast<uint32_t>(v);
  }
  return r;
}

}  // namespace bud::load
