// The golden model run command by command over a prepared program, handing every stage
// transaction to a sink with its index in its stage's stream. The golden check runs one alongside
// the RTL (TxnChecker) instead of keeping the golden transactions of the whole run, and the trace
// builds its per-command summary with one.
#pragma once

#include <array>
#include <cstdint>
#include <functional>

#include "emu/core/StageTxn.h"
#include "emu/golden/GoldenNpu.h"
#include "emu/run/RunJob.h"

namespace bud::debugger {

class GoldenStream {
 public:
  using Sink = std::function<void(const emu::StageTxn&, uint64_t index)>;
  /// A golden model with the program's initial DRAM, before its first command. `prepared` must
  /// outlive the stream.
  GoldenStream(const run::PreparedRun& prepared, Sink sink);
  GoldenStream(const GoldenStream&) = delete;
  GoldenStream& operator=(const GoldenStream&) = delete;

  /// Executes the next command in program order, its transactions going to the sink. False (and
  /// nothing executed) once the program has ended: END, an error (result().error) or no command
  /// left. Allocates nothing for a legal command.
  bool step();
  /// Runs to the end of the program.
  void run_to_end() {
    while (step()) {
    }
  }
  /// The stream between two commands, to continue from there in another stream of the same
  /// program (the golden trace keeps a few, so a checker need not start from reset).
  struct Snapshot {
    golden::GoldenNpu::State npu;
    golden::RunResult result;
    std::array<uint64_t, emu::kNumStages> index{};
    size_t next = 0;
    uint64_t bytes() const { return npu.bytes(); }
  };
  Snapshot snapshot() const;
  /// Continues from `s`, taken from a stream of the same prepared run that was at least as far.
  void restore(const Snapshot& s);

  /// Program index of the next command (the number executed so far).
  size_t next() const { return next_; }
  bool ended() const { return ended_; }
  /// What GoldenNpu::run would have returned so far.
  const golden::RunResult& result() const { return result_; }
  const golden::GoldenNpu& npu() const { return npu_; }

 private:
  const run::PreparedRun& prepared_;
  golden::GoldenNpu npu_;
  golden::RunResult result_;
  std::array<uint64_t, emu::kNumStages> index_{};
  Sink sink_;
  size_t next_ = 0;
  bool ended_ = false;
};

}  // namespace bud::debugger
