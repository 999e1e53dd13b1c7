// The trigger engine's way back in time without a session: a small ring of in-memory snapshots
// of the observed run (taken every interval cycles while a capture or a late-hit return may need
// one), and re-execution from one of them with the session's interventions (Reexecutor). A
// capture window starts from the latest snapshot at or before it; a batch run returns to a
// barrier hit found late by the evaluation thread the same way.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "emu/core/Emulator.h"
#include "emu/drive/Driver.h"
#include "emu/drive/Intervention.h"

namespace bud::debugger {

class Session;

/// Drives an emulator forward to a cycle through a driver of its own, re-applying the
/// interventions of the session (none without one), and counts the cycles re-executed.
class Reexecutor {
 public:
  void set_session(const Session* session) { session_ = session; }
  /// Drives `e` to `target` with `with` (optional) taking part. Error message or empty.
  std::string advance(emu::Emulator& e, uint64_t target, drive::Participant* with = nullptr);
  /// Cycles re-executed so far.
  uint64_t cycles() const { return cycles_; }

 private:
  const Session* session_ = nullptr;
  uint64_t cycles_ = 0;
};

/// Snapshots of the observed run, every interval() cycles, the newest keep() of them.
class TriggerHistory {
 public:
  struct Snapshot {
    uint64_t cycle = 0;
    std::shared_ptr<std::vector<uint8_t>> state;  ///< shared with captures that start from it
  };

  /// Keep `keep` snapshots every `interval` cycles from `now` (taking one at `now` when none is
  /// kept yet or none was planned).
  void plan(const emu::Emulator& emu, uint64_t interval, size_t keep);
  /// No snapshots are needed: drops them.
  void disable();
  /// Drops every snapshot (the run restarts from the current state).
  void clear() { ring_.clear(); }
  /// Whether a snapshot is due at `cycle` (per cycle: one compare).
  bool due(uint64_t cycle) const { return cycle >= next_; }
  /// Saves the emulator's state at `cycle` (replacing the oldest when full).
  void take(const emu::Emulator& emu, uint64_t cycle);
  /// The next snapshot is due one interval after `cycle` (after a rewind).
  void reschedule(uint64_t cycle);
  /// The latest snapshot at or before `cycle`, or null.
  const Snapshot* at_or_before(uint64_t cycle) const;
  /// The oldest snapshot, or null.
  const Snapshot* oldest() const;

  uint64_t interval() const { return interval_; }  ///< 0: no snapshots taken
  size_t size() const { return ring_.size(); }
  size_t bytes() const;

 private:
  uint64_t interval_ = 0;
  size_t keep_ = 0;
  uint64_t next_ = UINT64_MAX;
  std::vector<Snapshot> ring_;
};

}  // namespace bud::debugger
