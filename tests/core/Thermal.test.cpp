// The harness's thermal model (emu/core/Thermal.h, docs/power.md "Thermal"): a small case worked
// by hand, clamping at the trip point and releasing only below trip - hysteresis; integer
// arithmetic truncated toward zero; the parameter checks.
#include "emu/core/Thermal.h"

#include <catch2/catch.hpp>

using namespace bud::emu;

namespace {

// Windows of 1000 cycles at 1 GHz (1 us); R = 1 C/W, C = 2 uJ/C: tau = 2 us, so each window
// closes half the gap to the steady state. Ambient 40 C, trip 50 C, hysteresis 5 C.
ThermalConfig small() {
  ThermalConfig c;
  c.enabled = true;
  c.window_cycles = 1000;
  c.frequency_khz = 1000000;
  c.ambient_mc = 40000;
  c.trip_mc = 50000;
  c.hysteresis_mc = 5000;
  c.r_mc_per_w = 1000;
  c.c_nj_per_c = 2000;
  return c;
}

// 20 W for 1 us is 20 uJ = 2e10 fJ; 2 W is 2e9 fJ.
constexpr uint64_t k20W = 20'000'000'000ULL, k2W = 2'000'000'000ULL;

}  // namespace

TEST_CASE("the thermal model clamps at the trip point and releases below trip - hysteresis",
          "[core][thermal]") {
  const auto c = small();
  REQUIRE(c.validate().empty());
  REQUIRE(c.tau_ns() == 2000);
  auto s = thermal_start(c);
  CHECK(s.temp_mc == 40000);
  uint64_t e = 0;
  // 20 W: steady state 60 C; 40 + (60 - 40) / 2 = 50 C: the trip point, clamp.
  thermal_window(c, s, e += k20W);
  CHECK(s.power_uw == 20'000'000);
  CHECK(s.temp_mc == 50000);
  CHECK(s.clamped);
  CHECK(s.clamp_events == 1);
  CHECK(s.clamped_cycles == 0);
  // Clamped, 2 W: steady state 42 C; 50 + (42 - 50) / 2 = 46 C: below trip but not below 45 C,
  // still clamped (hysteresis).
  thermal_window(c, s, e += k2W);
  CHECK(s.temp_mc == 46000);
  CHECK(s.clamped);
  CHECK(s.clamped_cycles == 1000);
  // 46 + (42 - 46) / 2 = 44 C < 45 C: released.
  thermal_window(c, s, e += k2W);
  CHECK(s.temp_mc == 44000);
  CHECK_FALSE(s.clamped);
  CHECK(s.clamped_cycles == 2000);
  // 20 W again: 44 + (60 - 44) / 2 = 52 C: the second clamp.
  thermal_window(c, s, e += k20W);
  CHECK(s.temp_mc == 52000);
  CHECK(s.clamped);
  CHECK(s.clamp_events == 2);
  CHECK(s.peak_mc == 52000);
  CHECK(s.windows == 4);
}

TEST_CASE("the thermal model rounds toward zero and restarts its window after a counter clear",
          "[core][thermal]") {
  const auto c = small();
  auto s = thermal_start(c);
  // 3 W at 40 C: steady state 43 C, +1.5 C.
  thermal_window(c, s, 3'000'000'000ULL);
  CHECK(s.temp_mc == 41500);
  // 0 W: -1.5 C / 2 = -0.75 C.
  thermal_window(c, s, 3'000'000'000ULL);
  CHECK(s.temp_mc == 40750);
  // 1 fJ short of 0.001 W x 1 us: the power rounds down to 0 uW; 40.750 -> 40.375 C.
  thermal_window(c, s, 3'000'000'000ULL + 999);
  CHECK(s.power_uw == 0);
  CHECK(s.temp_mc == 40375);
  // Three windows of 0 W: each step -(T - 40 C) / 2 truncated toward zero: -187, -94, -47.
  for (int i = 0; i < 3; ++i) thermal_window(c, s, 3'000'000'000ULL + 999);
  CHECK(s.temp_mc == 40047);
  // Counters cleared (a smaller total): the window counts from 0.
  thermal_window(c, s, 2'000'000'000ULL);
  CHECK(s.power_uw == 2'000'000);
}

TEST_CASE("thermal parameters are checked", "[core][thermal]") {
  auto c = small();
  c.window_cycles = 2001;  // 2.001 us > tau
  CHECK(c.validate().find("longer than the RC time constant") != std::string::npos);
  c = small();
  c.trip_mc = c.ambient_mc;
  CHECK(c.validate() == "thermal: the trip point must be above ambient");
  c = small();
  c.hysteresis_mc = 10001;
  CHECK(c.validate() == "thermal: hysteresis must be in [0, trip - ambient]");
  c = small();
  c.enabled = false;
  c.window_cycles = 0;
  CHECK(c.validate().empty());
}
