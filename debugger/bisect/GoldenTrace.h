// What every stage of the dataflow should produce: the golden model's transactions for a
// program, per stage in program order, with prefix digests (so a recorded window's cumulative
// totals can be checked without re-simulating) and the golden model's final state.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <vector>

#include "emu/core/StageTxn.h"
#include "emu/isa/Isa.h"
#include "emu/run/RunJob.h"

namespace bud::debugger {

struct GoldenTrace {
  /// Per stage, the golden transactions in program order.
  std::array<std::vector<emu::StageTxn>, emu::kNumStages> txns;
  /// Per stage, prefix[n] = digest of the first n transactions (prefix[0] = empty).
  std::array<std::vector<emu::StageDigest>, emu::kNumStages> prefix;
  /// Final golden scratchpads and DRAM.
  std::array<std::vector<uint8_t>, isa::kNumBuffers> spads;
  std::vector<uint8_t> dram;
  std::string error;  ///< the golden model rejected the program

  /// Builds the trace of a prepared run (runs the golden model once).
  static GoldenTrace build(const run::PreparedRun& prepared);
  /// Whether the first `d.count` golden transactions of `stage` sum to `d.sum`.
  bool prefix_matches(emu::Stage stage, const emu::StageDigest& d) const;
};

}  // namespace bud::debugger
