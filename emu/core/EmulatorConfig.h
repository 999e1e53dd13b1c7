// How to build an emulator: which design, and the settings every bud design understands (the
// memory model, the simulator's seed, the no-progress watchdog, clock-enable clamping). A design
// ignores what it has no use for; emu/run/Designs.h turns a config into an emulator.
#pragma once

#include <cstdint>
#include <string>

#include "emu/core/DramModel.h"
#include "emu/core/Thermal.h"

namespace bud::emu {

/// Clock-enable clamping (DVFS/thermal): the design's clock enable is low for `on_cycles` out of
/// every `period` cycles (period 0 = never throttled).
struct ThrottleConfig {
  uint32_t period = 0;
  uint32_t on_cycles = 0;
  std::string validate() const;
};

struct EmulatorConfig {
  /// The design to build ("npu", "mock"; emu/run/Designs.h lists them).
  std::string design = "npu";
  DramConfig dram;
  /// The simulator's own seed (+verilator+seed+ for a Verilated design), pinned and recorded even
  /// though the X policy (all X -> 0) leaves nothing random in the NPU model today.
  uint32_t verilator_seed = 1;
  /// The watchdog reports a hang after this many cycles without progress while the program runs.
  uint64_t hang_cycles = 100000;
  ThrottleConfig throttle;
  /// The thermal model (off unless enabled): clamps the throttle input above its trip point.
  ThermalConfig thermal;
};

}  // namespace bud::emu
