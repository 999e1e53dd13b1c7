// The golden check of a recording that stops before its run ends (`record stop` at the prompt):
// the stage transactions of the recorded cycles against the golden model's, so that a packet of
// a session that went wrong says so and its replay reproduces it (docs/packets.md, "Prefixes").
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "debugger/bisect/GoldenTrace.h"
#include "debugger/bisect/TxnChecker.h"
#include "replay/Replayer.h"

namespace bud::debugger {

/// A replay::PrefixChecker over TxnChecker: made at the run's current cycle (the recording's
/// first), it checks every transaction from there; a stage whose transactions before that cycle
/// are no golden prefix already is a divergence at that cycle.
class GoldenPrefixChecker final : public replay::PrefixChecker {
 public:
  /// Checks `emu` (at its current cycle) against the golden model of `prepared`. nullptr and
  /// `error` when the golden model rejects the program.
  static std::unique_ptr<GoldenPrefixChecker> make(std::unique_ptr<run::PreparedRun> prepared,
                                                   const emu::Emulator& emu, std::string& error);

  emu::TxnObserver* txn_observer() override { return checker_.get(); }
  std::optional<replay::pb::Symptom> symptom() const override;

 private:
  GoldenPrefixChecker() = default;
  std::unique_ptr<run::PreparedRun> prepared_;  ///< what trace_ reads; never moves
  std::unique_ptr<GoldenTrace> trace_;
  std::unique_ptr<TxnChecker> checker_;
  std::optional<replay::pb::Symptom> before_;  ///< a stage already off the golden prefix
};

/// The PrefixCheck bud installs in every replay (replay::ReplayOptions::prefix_check): prepares
/// the packet's workload with its checks and makes a GoldenPrefixChecker.
replay::PrefixCheck golden_prefix_check();

}  // namespace bud::debugger
