// One request stream of a multi-stream serve (docs/serving.md, "Several streams"), as
// `bud serve-load --stream NAME:WORKLOAD:SHARE[:SLA_US[:PRIORITY|WEIGHT]]` gives it.
#pragma once

#include <cstdint>
#include <string>

namespace bud::load {

struct StreamSpec {
  std::string name;
  std::string workload;  ///< built-in name, workload file or ONNX model
  double share = 1;      ///< its part of the offered rate (normalised over all streams), > 0
  /// Its own p99 SLA in microseconds; 0: none. Unset in the spec: the caller's default.
  double sla_p99_us = 0;
  bool sla_given = false;  ///< SLA_US was in the spec
  /// The fifth field: its priority under the strict policy (higher first) and its weight under
  /// the weighted one (>= 1). Default 1.
  uint32_t priority = 1;
  uint32_t weight = 1;
};

/// A parsed --stream, or why not: `field` names the bad field (NAME, WORKLOAD, SHARE, SLA_US,
/// PRIORITY|WEIGHT) and `error` is one line quoting the spec, the field and the reason.
struct StreamParse {
  StreamSpec spec;
  std::string field;
  std::string error;
};

/// Parses NAME:WORKLOAD:SHARE[:SLA_US[:PRIORITY|WEIGHT]]. NAME is [A-Za-z0-9_.-]+; SHARE a
/// number > 0; SLA_US a number >= 0 or empty (unset); the last field an integer 1..1000000.
StreamParse parse_stream_spec(const std::string& text);

}  // namespace bud::load
