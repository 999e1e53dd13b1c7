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
  /// Per stage, command id -> [first, last) indices of its transactions in `txns` (golden
  /// transactions are grouped by command, in program order).
  std::array<std::map<uint32_t, std::pair<size_t, size_t>>, emu::kNumStages> groups;

  /// Whether the first `d.count` golden transactions of `stage` sum to `d.sum`.
  bool prefix_matches(emu::Stage stage, const emu::StageDigest& d) const;
  /// Whether an RTL digest taken at any cycle is consistent with the golden stream: the whole
  /// digest is a golden prefix, or its closed part is the golden prefix that ends where
  /// `d.open_cmd`'s transactions begin and the open part is no larger than that command's.
  bool digest_consistent(emu::Stage stage, const emu::StageDigest& d) const;
  /// Where checking resumes from a consistent digest: the number of golden transactions known to
  /// be produced (the whole prefix, or the commands before the open one) and, for a digest taken
  /// inside a command, that command with the count and sum of its transactions already produced.
  struct Resume {
    uint64_t consumed = 0;
    bool open = false;  ///< a command was partly produced (which of its transactions is unknown)
    uint32_t open_cmd = 0;
    uint64_t open_count = 0;
    uint64_t open_sum = 0;
  };
  Resume resume_at(emu::Stage stage, const emu::StageDigest& d) const;
};

}  // namespace bud::debugger
