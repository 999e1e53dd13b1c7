// Changes made to a run from outside the design (a user's deposit, force or memory write, later a
// power policy's throttle): one log, in cycle order, that every re-execution applies the same
// way - the debugger's timeline, a trigger's way back to a hit, a recording and its replay.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "emu/core/Emulator.h"
#include "emu/drive/Driver.h"

namespace bud::drive {

/// One change to the design's state, applied at `cycle` (before that cycle's clock edge).
struct Intervention {
  enum class Kind : uint8_t { Deposit, Force, Release, MemoryWrite };
  Kind kind = Kind::Deposit;
  uint64_t cycle = 0;
  emu::SignalId signal = 0;
  uint32_t element = 0;
  emu::SignalValue value;
  std::string memory;
  uint64_t offset = 0;
  std::vector<uint8_t> bytes;
  /// Applies it to `emu`; false if the emulator refused.
  bool apply(emu::Emulator& emu) const;
  /// "deposit", "force", "release", "memory-write".
  static const char* kind_name(Kind k);
};

/// Applies a log of interventions (sorted by cycle; not owned) as a run reaches their cycles:
/// an actor of the run. It asks for a pause at every intervention's cycle, so the change lands
/// exactly before that cycle's edge whatever else takes part.
class InterventionActor final : public Participant {
 public:
  InterventionActor(emu::Emulator& emu, const std::vector<Intervention>& log)
      : emu_(emu), log_(log) {}
  void on_start(uint64_t cycle) override;
  uint64_t next_pause(uint64_t now) const override;
  void on_rewind(uint64_t cycle) override;
  PauseAction on_pause(uint64_t cycle) override;
  std::string stop_detail() const override { return error_; }
  /// Error of the last start (an intervention at the start cycle refused), or empty.
  const std::string& error() const { return error_; }

 private:
  bool apply_due(uint64_t cycle);
  emu::Emulator& emu_;
  const std::vector<Intervention>& log_;
  size_t next_ = 0;  ///< first intervention not applied yet
  std::string error_;
};

}  // namespace bud::drive
