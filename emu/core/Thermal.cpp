#include "emu/core/Thermal.h"

#include <algorithm>

namespace bud::emu {

namespace {
// 128-bit products: a GCC/Clang extension (both of bud's compilers have it).
__extension__ using i128 = __int128;
__extension__ using u128 = unsigned __int128;

// R x C in picoseconds (m°C/W x nJ/°C).
u128 tau_ps(const ThermalConfig& c) { return static_cast<u128>(c.r_mc_per_w) * c.c_nj_per_c; }
}  // namespace

uint64_t ThermalConfig::tau_ns() const { return static_cast<uint64_t>(tau_ps(*this) / 1000); }

std::string ThermalConfig::validate() const {
  if (!enabled) return {};
  if (window_cycles == 0) return "thermal: window_cycles must be positive";
  if (frequency_khz == 0) return "thermal: the clock must be positive";
  if (r_mc_per_w == 0 || c_nj_per_c == 0) return "thermal: R and C must be positive";
  if (trip_mc <= ambient_mc) return "thermal: the trip point must be above ambient";
  if (hysteresis_mc < 0 || hysteresis_mc > trip_mc - ambient_mc)
    return "thermal: hysteresis must be in [0, trip - ambient]";
  // W / f <= R C, in ps: W x 10^9 / f_kHz <= tau.
  if (static_cast<u128>(window_cycles) * 1000000000u >
      static_cast<u128>(frequency_khz) * tau_ps(*this))
    return "thermal: a window of " + std::to_string(window_cycles) +
           " cycles is longer than the RC time constant (" + std::to_string(tau_ns()) +
           " ns): shorten window_cycles";
  return {};
}

ThermalState thermal_start(const ThermalConfig& c) {
  ThermalState s;
  s.temp_mc = s.peak_mc = c.ambient_mc;
  return s;
}

void thermal_window(const ThermalConfig& c, ThermalState& s, uint64_t energy_fj) {
  const uint64_t de = energy_fj >= s.energy_fj ? energy_fj - s.energy_fj : energy_fj;
  s.energy_fj = energy_fj;
  // fJ x kHz / cycles = pW.
  const i128 p_pw = static_cast<i128>(de) * c.frequency_khz / c.window_cycles;
  s.power_uw = static_cast<uint64_t>(p_pw / 1000000);
  // pW x m°C/W = 10^-12 m°C.
  const i128 ss_mc = c.ambient_mc + p_pw * c.r_mc_per_w / 1000000000000LL;
  // dT = (T_ss - T) x dt / tau, dt = W x 10^9 / f_kHz ps.
  const i128 num = (ss_mc - s.temp_mc) * static_cast<i128>(c.window_cycles) * 1000000000;
  const i128 den = static_cast<i128>(c.frequency_khz) * static_cast<i128>(tau_ps(c));
  s.temp_mc += static_cast<int64_t>(num / den);
  s.peak_mc = std::max(s.peak_mc, s.temp_mc);
  if (s.clamped) s.clamped_cycles += c.window_cycles;
  ++s.windows;
  if (!s.clamped && s.temp_mc >= c.trip_mc) {
    s.clamped = true;
    ++s.clamp_events;
  } else if (s.clamped && s.temp_mc < c.trip_mc - c.hysteresis_mc) {
    s.clamped = false;
  }
}

}  // namespace bud::emu
