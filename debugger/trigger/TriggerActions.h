// Performs the actions of trigger hits once the run is at a pause (on the simulation thread, the
// design at the hit cycle when an action needs it): records the hit with the values its
// conditions saw, halts, queues capture windows, writes checkpoints (a named checkpoint in a
// session, a state file in a batch run), takes counter snapshots, asks the record hook for a
// replay packet, adds log messages. Keeps every hit (up to max_hits; the rest are counted).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "debugger/trigger/CaptureWriter.h"
#include "debugger/trigger/CompiledTriggers.h"
#include "debugger/trigger/TriggerHistory.h"
#include "debugger/trigger/TriggerTypes.h"

namespace bud::debugger {

class Session;

class TriggerActions {
 public:
  /// Everything passed outlives the actions.
  TriggerActions(emu::Emulator& emu, const TriggerEngineConfig& config,
                 const TriggerHistory& history, CaptureWriter& captures)
      : emu_(emu), config_(config), history_(history), captures_(captures) {}

  void set_session(Session* session) { session_ = session; }
  void set_record_hook(TriggerRecordHook* hook) { record_hook_ = hook; }

  /// Performs the actions of `hit` of `trigger` (the emulator is at the pause).
  void perform(const PendingHit& hit, const HitTrigger& trigger);
  /// Writes the captures whose window has closed by `now` (every one when `all`).
  void service_captures(uint64_t now, bool all) { captures_.service(now, all, hits_); }

  /// Whether a halt action fired since the last clear_halt().
  bool halt_requested() const { return halt_; }
  void clear_halt() { halt_ = false; }
  const std::vector<TriggerHit>& hits() const { return hits_; }
  uint64_t dropped_hits() const { return dropped_hits_; }

 private:
  void capture(const PendingHit& ph, const HitTrigger& t, const TriggerAction& a, TriggerHit& h,
               int& capture_no);
  void checkpoint(const PendingHit& ph, const HitTrigger& t, const TriggerAction& a, TriggerHit& h);

  emu::Emulator& emu_;
  const TriggerEngineConfig& config_;
  const TriggerHistory& history_;
  CaptureWriter& captures_;
  Session* session_ = nullptr;
  TriggerRecordHook* record_hook_ = nullptr;
  std::vector<TriggerHit> hits_;
  uint64_t dropped_hits_ = 0;
  bool halt_ = false;
  std::map<int, uint64_t> captures_taken_;  ///< trigger id -> captures requested
};

}  // namespace bud::debugger
