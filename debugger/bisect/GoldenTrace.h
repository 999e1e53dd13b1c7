// What every stage of the dataflow should produce: the golden model's transactions for a
// program, summarized per stage and command (where a command's transactions lie in the stage's
// stream and the digest of everything before them) together with the golden model's final state.
// Nothing is kept per transaction: whoever needs transactions (the checker, a report) runs the
// golden model again alongside (GoldenStream), so the trace grows with the program's commands and
// not with the run's cycles.
//
// Memory: 32 bytes per command and stage that produces transactions (about 75 bytes per
// command), where a hash, an address and a buffer per transaction took ~4 bytes per simulated
// cycle, plus up to 16 golden snapshots (the DRAM written so far and the scratchpads) within a
// budget (64 MiB by default), so a checker starting mid-run need not run the golden model from
// reset (docs/bisect.md, "The stage ladder").
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "debugger/bisect/GoldenStream.h"
#include "emu/core/StageTxn.h"
#include "emu/isa/Isa.h"
#include "emu/run/RunJob.h"

namespace bud::debugger {

/// How GoldenTrace::build keeps golden snapshots (docs/bisect.md, "The stage ladder").
struct GoldenTraceOptions {
  /// Commands between snapshots: 0 picks max(4096, commands / 16); SIZE_MAX takes none.
  size_t snapshot_interval = 0;
  /// Most bytes the snapshots may hold; beyond it every other one is dropped and the interval
  /// doubles.
  uint64_t snapshot_budget = 64ull << 20;
};

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
    std::vector<Command> commands; ///< in program order (ascending cmd_id)
    emu::StageDigest total;        ///< digest of the whole stream
    /// The most transactions any kWindowCommands consecutive commands of the stage produce: a
    /// checker holding that many sees a correct RTL run without growing.
    uint64_t window_txns = 0;
    /// What a checker's window for the stage holds before it grows: window_txns, at least 64,
    /// rounded up to a power of two.
    uint64_t window_capacity() const { return std::bit_ceil(std::max<uint64_t>(window_txns, 64)); }
    uint64_t size() const { return total.count; }
  };
  /// Commands of one stage a correct RTL can have in flight at once, with margin: its engine's
  /// 8-deep queue and the one executing (GEMM and POST share an engine) (docs/architecture.md).
  static constexpr size_t kWindowCommands = 64;

  /// Builds the trace of a prepared run (runs the golden model once). `prepared` must outlive
  /// the trace: `materialize` runs its program again.
  static GoldenTrace build(const run::PreparedRun& prepared,
                           const GoldenTraceOptions& options = {});

  const Stream& stream(emu::Stage s) const { return streams_[static_cast<int>(s)]; }
  /// The command `cmd_id` of stage `s`, or nullptr if it produces nothing there.
  const Command* command(emu::Stage s, uint32_t cmd_id) const;

  /// The latest golden snapshot taken before program command `command` (nullptr: none, start
  /// from reset). A checker starting mid-run continues from it instead of from reset.
  const GoldenStream::Snapshot* snapshot_at_or_before(size_t command) const;
  const std::vector<GoldenStream::Snapshot>& snapshots() const { return snapshots_; }

  /// The command of `stage` whose transactions include index `n` (nullptr past the end).
  const Command* command_holding(emu::Stage stage, uint64_t n) const;
  /// Program index of the command that produces transaction `n` of `stage` (0 if none does).
  size_t program_index(emu::Stage stage, uint64_t n) const;
  /// The command of `stage` whose transactions begin at index `n` (nullptr if none does).
  const Command* command_at(emu::Stage stage, uint64_t n) const;
  /// Whether `d` is the golden prefix of `stage` that ends at a command boundary (or at the end).
  bool boundary_prefix(emu::Stage stage, const emu::StageDigest& d) const;
  /// Whether an RTL digest taken at any cycle can be consistent with the golden stream: it is a
  /// golden prefix at a command boundary, or its closed part is the golden prefix that ends where
  /// `d.open_cmd`'s transactions begin and the open part is no larger than that command's (which
  /// of the command's transactions the open part holds takes the command's transactions, so the
  /// checker settles it: TxnChecker::start_exact).
  bool digest_consistent(emu::Stage stage, const emu::StageDigest& d) const;

  /// Runs the golden model again and hands `visit` every transaction with its index in its
  /// stage's stream. Re-derives what the summary leaves out.
  void replay(const std::function<void(const emu::StageTxn&, uint64_t index)>& visit) const;
  /// The whole golden transactions at `wanted` (stage, index) places, in the same order.
  std::vector<emu::StageTxn> materialize(
      std::span<const std::pair<emu::Stage, uint64_t>> wanted) const;

  /// Final golden scratchpads and DRAM.
  std::array<std::vector<uint8_t>, isa::kNumBuffers> spads;
  std::vector<uint8_t> dram;
  std::string error;  ///< the golden model rejected the program

  const run::PreparedRun& prepared() const { return *prepared_; }

 private:
  const run::PreparedRun* prepared_ = nullptr;
  std::array<Stream, emu::kNumStages> streams_;
  std::vector<GoldenStream::Snapshot> snapshots_;  ///< ascending `next`
};

}  // namespace bud::debugger
