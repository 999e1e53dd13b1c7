// Participants for driver tests, over the mock design (tests/core/MockEmulator).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "emu/drive/Driver.h"
#include "tests/core/MockEmulator.h"

namespace bud::drive::test {

/// Asks for a pause every `every` cycles and remembers where it paused.
struct Pacer final : Participant {
  explicit Pacer(uint64_t cycles) : every(cycles) {}
  uint64_t every;
  std::vector<uint64_t> pauses;
  uint64_t next_pause(uint64_t now) const override { return (now / every + 1) * every; }
  PauseAction on_pause(uint64_t cycle) override {
    pauses.push_back(cycle);
    return PauseAction::Continue;
  }
};

/// Counts the cycles it sees; asks for a pause at `stop_at` and halts the run there.
struct Counter final : Participant, emu::CycleHook {
  uint64_t seen = 0;
  std::optional<uint64_t> stop_at;
  bool hit = false;
  emu::CycleHook* cycle_hook() override { return this; }
  bool after_cycle(uint64_t cycle) override {
    ++seen;
    hit = stop_at && cycle == *stop_at;
    return hit;
  }
  PauseAction on_pause(uint64_t) override { return hit ? PauseAction::Halt : PauseAction::Continue; }
};

/// A rewinder over one saved state: restore it, then drive forward (nested driver, no hooks).
struct StateRewinder final : Rewinder {
  StateRewinder(emu::Emulator& e, Participant* with) : emu(e), actor(with) { e.save(state); }
  emu::Emulator& emu;
  Participant* actor;
  std::vector<uint8_t> state;
  uint64_t calls = 0;
  std::string rewind_to(uint64_t cycle) override {
    ++calls;
    std::string error;
    if (!emu.restore(state, error)) return error;
    Driver d(emu);
    if (actor) d.add(*actor);
    d.run_until(cycle);
    return {};
  }
};

}  // namespace bud::drive::test
