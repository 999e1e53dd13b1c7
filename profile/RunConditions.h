// What a run was measured under besides its workload (docs/profiling.md, "Run conditions"):
// design, array, operating point and clock, DRAM timing, throttle, thermal model, precision mix,
// tile caps, faults and seeds. Every profile records them (`profile.conditions`), and
// `bud profile --compare` tests them before it attributes a mechanism: a clock change moves
// cycles and time differently (DRAM timing is in ns), a narrower DRAM moves the transfer time,
// and neither is a defect of the program.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "debugger/json/Json.h"
#include "emu/run/RunJob.h"

namespace bud::profile {

/// One condition: a number (cycles, MHz, bytes) or a text (names, on/off).
struct RunCondition {
  std::string name;   ///< "clock_mhz", "dram_bytes_per_cycle", "operating_point", ...
  std::string text;   ///< the value as written in tables and JSON strings
  std::optional<double> number;  ///< set for numeric conditions (JSON numbers)
};

/// Conditions in a fixed order (the order docs/profiling.md lists them in).
struct RunConditions {
  std::vector<RunCondition> items;
  const RunCondition* find(const std::string& name) const;
};

/// The conditions of a run with `options`, as `report` ran it. `clock_mhz` is the clock of the
/// operating point it ran at (the energy table's at `options.point`), 0 when unknown.
RunConditions run_conditions(const run::RunOptions& options, const run::RunReport& report,
                             double clock_mhz);

/// {"design": "npu", "clock_mhz": 1000, ...} in order.
json::Json conditions_json(const RunConditions& c);
/// Reads the object written by conditions_json (numbers stay numbers); unknown keys are kept.
RunConditions read_conditions(const json::Json& j);

/// A condition whose value differs between two runs.
struct ConditionChange {
  std::string name, base, next;
  std::optional<double> base_number, next_number;
};
/// The conditions both runs record whose values differ, in `base`'s order (one a side does not
/// record, e.g. a packet's clock, is not compared).
std::vector<ConditionChange> changed_conditions(const RunConditions& base,
                                                const RunConditions& next);

/// What changing `c` does to a run's cycles, in one sentence: the cause --compare names before
/// the mechanism the counters show.
std::string condition_effect(const ConditionChange& c);

}  // namespace bud::profile
