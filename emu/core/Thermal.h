// The thermal model of the harness (docs/power.md "Thermal"): a lumped RC model of the die,
// driven by the power of each window of cycles (the PMU's counter growth over the window priced
// by an energy table), with a passive trip point and hysteresis that clamps the clock through
// the design's throttle input. All integer arithmetic: the same run heats the same way on every
// machine, to the milli-degree, so a recorded run replays bit-exactly.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace bud::emu {

/// The model's parameters, in the integer units it computes in (power::thermal_config() builds
/// them from an energy table's `thermal` section and its prices).
struct ThermalConfig {
  bool enabled = false;
  uint64_t window_cycles = 0;  ///< the clamp is decided at every multiple of this
  uint64_t frequency_khz = 0;  ///< the clock, to turn a window's energy into power
  int64_t ambient_mc = 0;      ///< milli-degrees Celsius
  int64_t trip_mc = 0;         ///< clamp when the temperature reaches this
  int64_t hysteresis_mc = 0;   ///< release below trip - hysteresis
  uint64_t r_mc_per_w = 0;     ///< thermal resistance, milli-degrees per watt
  uint64_t c_nj_per_c = 0;     ///< heat capacity, nanojoules per degree
  /// Energy per count of the design's counters (index into describe().counters, fJ).
  std::vector<std::pair<uint32_t, uint64_t>> prices;

  /// Empty when usable, else what is wrong: window, clock, R and C positive, trip above ambient,
  /// hysteresis in [0, trip - ambient], a window no longer than the RC time constant (the step is
  /// a first-order relaxation: longer windows would overshoot).
  std::string validate() const;
  /// R x C in nanoseconds (rounded down).
  uint64_t tau_ns() const;
};

/// The model's state, saved with the emulator's (checkpoints, packets).
struct ThermalState {
  int64_t temp_mc = 0;          ///< die temperature after the last window
  int64_t peak_mc = 0;          ///< the highest temp_mc so far
  bool clamped = false;         ///< the throttle input is held high
  uint64_t energy_fj = 0;       ///< priced counters at the last window boundary
  uint64_t power_uw = 0;        ///< the last window's average power, microwatts
  uint64_t windows = 0;         ///< windows evaluated
  uint64_t clamp_events = 0;    ///< times the clamp engaged
  uint64_t clamped_cycles = 0;  ///< cycles run with the clamp held
};

/// The state at the start of a run: ambient, not clamped.
ThermalState thermal_start(const ThermalConfig& c);

/// One window of `c.window_cycles` ended with the priced counters at `energy_fj` (their total
/// since the PMU was cleared; a smaller value than the last means they were cleared: the window
/// counts from 0). Updates power, temperature and the clamp:
///   P = dE / (W / f);  T_ss = ambient + P x R;  T += (T_ss - T) x (W / f) / (R x C)
/// (power in pW, times in ps, products in 128 bits)
/// (integer, truncated toward zero), then clamp when T >= trip, release when T < trip - hyst.
void thermal_window(const ThermalConfig& c, ThermalState& s, uint64_t energy_fj);

}  // namespace bud::emu
