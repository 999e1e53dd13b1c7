// The verdict of a bisect from what the transaction checker found: the first divergence of each
// dataflow stage, the earliest of them (the first failing stage, persistent when the results are
// wrong, transient when they are right), the stages downstream of it, and the ladder's one line per
// rung. Divergences that only show because the run stopped (an assertion, a hang) are dated and
// owned by what the design's assertion port and engines say.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "debugger/bisect/BisectReport.h"
#include "emu/run/RunJob.h"

namespace bud::debugger {

/// How the run ended, for divergences that only show because it stopped.
struct RunEnd {
  uint64_t cycle = 0;        ///< cycle the re-simulation ended at
  bool stopped = false;      ///< by an assertion, a hang or an error (not by finishing)
  std::optional<emu::AssertionReport> assertion;  ///< what the design's assertion port said
  uint64_t hang_cycles = 0;  ///< watchdog setting, to date a hang's start
  bool hang = false;
  std::vector<emu::EngineStatus> engines;  ///< what each engine held when the run stopped
};

/// Fills the verdict, stages and ladder of `r` from what `chk` found and whether the results are
/// wrong (`results_failed`, with `result_detail` saying how).
void conclude(BisectReport& r, const TxnChecker& chk, const run::PreparedRun& p,
              bool results_failed, const std::string& result_detail, const RunEnd& end);

}  // namespace bud::debugger
