// A recorded arrival trace (docs/serving.md): timestamps in microseconds, one per line (`#`
// comments and blank lines allowed) or a JSON array of numbers; non-negative and non-decreasing.
#pragma once

#include <string>
#include <vector>

namespace bud::load {

/// Parsed timestamps (us), or why not: `error` is one line naming FILE:LINE (text) or
/// FILE: index I (JSON) and the reason (not a number, negative, decreasing, empty).
struct ArrivalTrace {
  std::vector<double> times_us;
  std::string error;
};

/// Parses `text` read from `file` (named in errors). A first non-blank character `[` means JSON.
ArrivalTrace parse_arrival_trace(const std::string& file, const std::string& text);

}  // namespace bud::load
