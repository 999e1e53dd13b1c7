// The debugger's golden-model check (StageCheck over TxnChecker): the same stage transaction
// checks as bisect, evaluated while a Session runs, plus the final result check of `bud run`.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "debugger/bisect/GoldenTrace.h"
#include "debugger/bisect/TxnChecker.h"
#include "debugger/session/StageCheck.h"
#include "emu/run/RunJob.h"

namespace bud::debugger {

class GoldenCheck final : public StageCheck {
 public:
  /// Checks `session` against the golden model of `prepared` (both must outlive it). Builds the
  /// golden trace once (runs the golden model). Install with Session::set_stage_check.
  GoldenCheck(const run::PreparedRun& prepared, Session& session);

  /// The golden model rejected the program: nothing can be checked (then do not install it).
  const std::string& error() const { return trace_.error; }

  bool active() const override { return true; }
  void arm() override;
  bool after_cycle(uint64_t cycle) override;
  void on_txn(const emu::StageTxn& txn) override;
  std::optional<uint64_t> settle() override;
  void stop_reasons(std::vector<StopReason>& out) override;

  void set_break(bool on) override { break_ = on; }
  bool breaks() const override { return break_; }
  std::vector<StageCheckStatus> status() override;

  /// "stage gemm diverged at cycle C: command #N, element E, expected X, actual Y".
  std::string render(const Divergence& d) const;

 private:
  /// Whether the checker describes exactly the cycles before the emulator's current cycle.
  bool in_sync() const;
  /// Rebuilds the checker for the current cycle after time travel: from the latest checkpoint
  /// whose stage digests are a golden prefix, re-executing from there with the checker watching.
  void resync();
  /// At the end of the run: golden transactions never produced, then the result check.
  void finish_run(std::vector<StopReason>* out);

  const run::PreparedRun& prepared_;
  Session& session_;
  GoldenTrace trace_;
  std::unique_ptr<TxnChecker> checker_;
  std::array<emu::StageDigest, emu::kNumStages> seen_{};  ///< what the checker was shown
  uint64_t seen_cycle_ = 0;   ///< the cycle the checker's view ends at
  size_t reported_ = 0;       ///< divergences already turned into stop reasons
  bool pending_ = false;      ///< a divergence was noted since the last pause
  bool break_ = true;
  bool finished_ = false;     ///< finish_run done for this execution
  std::vector<std::string> result_failures_;
};

}  // namespace bud::debugger
