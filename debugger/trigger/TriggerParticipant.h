// The trigger engine as a party to a batch run (no session): per-cycle frames, a settle at every
// pause, hits serviced there, a halt action halts the run; the way back to a hit found late is
// the engine's own history (it is the driver's rewinder too). drive() runs a whole batch run.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "debugger/trigger/TriggerEngine.h"
#include "emu/drive/Driver.h"

namespace bud::debugger {

class TriggerParticipant final : public drive::Participant, public drive::Rewinder {
 public:
  explicit TriggerParticipant(TriggerEngine& engine) : engine_(engine) {}
  emu::CycleHook* cycle_hook() override { return &engine_; }
  emu::TxnObserver* txn_observer() override { return &engine_; }
  void on_start(uint64_t cycle) override;
  std::optional<uint64_t> settle() override { return engine_.settle(); }
  std::string rewind_to(uint64_t cycle) override { return engine_.rewind_to(cycle); }
  drive::PauseAction on_pause(uint64_t cycle) override;
  std::string stop_detail() const override { return "halted by a trigger"; }

 private:
  TriggerEngine& engine_;
};

/// Why drive() returned.
struct DriveResult {
  bool halted = false;  ///< a halt action fired
  uint64_t cycle = 0;
  std::string error;  ///< the run could not return to a trigger hit (it stopped there)
};

/// Runs `emu` with `engine` (a TriggerParticipant on a driver of its own) until the run leaves
/// the Ready state, `max_cycles` is reached or a halt action fires (batch runs). Calls `progress`
/// about every `progress_interval` cycles. Does not call finish_run().
DriveResult drive(emu::Emulator& emu, TriggerEngine& engine, uint64_t max_cycles,
                  const std::function<void(uint64_t)>& progress, uint64_t progress_interval);

}  // namespace bud::debugger
