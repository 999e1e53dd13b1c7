// `bud bisect --good G --bad B`: where two recorded runs part ways. For functional differences:
// the exact first cycle at which the whole-state digests differ for good (located by the
// recorded digest streams, then cycle by cycle from the checkpoints before it) and the state
// elements (signals, memory addresses) that differ first. For performance regressions (same
// results, more cycles): the first window whose counter deltas differ beyond a tolerance, and
// the mechanism class (compute, memory, scheduling, precision, thermal) that explains it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "debugger/json/Json.h"

namespace bud::debugger {

struct DiffOptions {
  double tolerance = 0.05;  ///< relative change of a window's counter deltas that counts
  bool allow_revision_mismatch = false;
};

struct StateDifference {
  std::string element;  ///< "load.state", "dram 0x10040", "acc[12] byte 3"
  std::string good, bad;
};

struct DiffReport {
  /// "same" (identical runs), "diverged" (state differs persistently), "performance" (same
  /// results, different timing), "error".
  std::string verdict = "error";
  std::string message;
  std::optional<uint64_t> first_divergence_cycle;
  bool persistent = false;
  std::vector<StateDifference> differences;  ///< first state elements that differ
  // performance
  std::optional<uint64_t> window_start, window_end;
  std::string mechanism;                     ///< compute, memory, scheduling, precision, thermal
  std::vector<std::string> evidence;         ///< counter deltas that point there
  uint64_t good_cycles = 0, bad_cycles = 0;
  uint64_t resimulated_cycles = 0;

  std::string text() const;
  json::Json to_json() const;
};

DiffReport bisect_pair(const std::string& good_path, const std::string& bad_path,
                       const DiffOptions& options);

}  // namespace bud::debugger
