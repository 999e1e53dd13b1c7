// What every stage of the dataflow should produce: the golden model's transactions for a
// program, per stage in program order, kept compactly (a hash, an address and a buffer per
// transaction, and per command where its transactions lie and the digest of everything before
// them) together with the golden model's final state. A transaction's whole content is
// re-derived by running the golden model again (`materialize`), which only reports need.
//
// Memory: 13 bytes and one bit per golden transaction plus 32 bytes per command and stage,
// about 4 bytes per simulated cycle on the built-ins, where a full copy of each transaction
// and a digest per prefix took ~50 (docs/debugger.md, "Golden check").
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "emu/core/StageTxn.h"
#include "emu/isa/Isa.h"
#include "emu/run/RunJob.h"

namespace bud::debugger {

class GoldenTrace {
 public:
  /// One command's transactions in a stage: indices [first, last) of the stage's stream.
  struct Command {
    uint32_t cmd_id = 0;
    uint64_t first = 0, last = 0;
    uint64_t sum_before = 0;  ///< digest sum of the stage's transactions before `first`
  };
  /// One stage's golden stream.
  struct Stream {
    std::vector<uint64_t> hash;    ///< StageTxn::hash() per transaction, program order
    std::vector<uint32_t> addr;    ///< StageTxn::addr per transaction
    std::vector<uint8_t> buffer;   ///< StageTxn::buffer per transaction
    std::vector<Command> commands; ///< in program order (ascending cmd_id)
    emu::StageDigest total;        ///< digest of the whole stream
    size_t size() const { return hash.size(); }
  };

  /// Builds the trace of a prepared run (runs the golden model once). `prepared` must outlive
  /// the trace: `materialize` runs its program again.
  static GoldenTrace build(const run::PreparedRun& prepared);

  const Stream& stream(emu::Stage s) const { return streams_[static_cast<int>(s)]; }
  /// The command `cmd_id` of stage `s`, or nullptr if it produces nothing there.
  const Command* command(emu::Stage s, uint32_t cmd_id) const;

  /// Digest (count and sum) of the first `n` golden transactions of `stage`; n <= size.
  emu::StageDigest prefix(emu::Stage stage, uint64_t n) const;
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

  /// Runs the golden model again and hands `visit` every transaction with its index in its
  /// stage's stream. Re-derives what the compact form leaves out.
  void replay(const std::function<void(const emu::StageTxn&, uint64_t index)>& visit) const;
  /// The whole golden transactions at `wanted` (stage, index) places, in the same order.
  std::vector<emu::StageTxn> materialize(
      std::span<const std::pair<emu::Stage, uint64_t>> wanted) const;

  /// Final golden scratchpads and DRAM.
  std::array<std::vector<uint8_t>, isa::kNumBuffers> spads;
  std::vector<uint8_t> dram;
  std::string error;  ///< the golden model rejected the program

 private:
  const run::PreparedRun* prepared_ = nullptr;
  std::array<Stream, emu::kNumStages> streams_;
};

}  // namespace bud::debugger
