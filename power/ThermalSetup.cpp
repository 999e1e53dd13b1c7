#include "power/ThermalSetup.h"

#include <algorithm>
#include <cmath>

namespace bud::power {

Result<emu::ThermalConfig> thermal_config(const EnergyTable& table,
                                          const std::vector<std::string>& counters) {
  if (!table.thermal)
    return Error{table.file +
                 ": the energy table has no `thermal` section (docs/power.md, "
                 "\"Thermal\")"};
  const ThermalParams& p = *table.thermal;
  emu::ThermalConfig c;
  c.enabled = true;
  c.window_cycles = p.window_cycles;
  c.frequency_khz = static_cast<uint64_t>(std::llround(table.frequency_mhz * 1e3));
  c.ambient_mc = p.ambient_mc;
  c.trip_mc = p.trip_mc;
  c.hysteresis_mc = p.hysteresis_mc;
  c.r_mc_per_w = p.r_mc_per_w;
  c.c_nj_per_c = p.c_nj_per_c;
  for (const auto& a : table.actions) {
    if (!on_die(a.component) || a.fj == 0) continue;
    const auto it = std::find(counters.begin(), counters.end(), a.counter);
    if (it == counters.end()) continue;  // host.csr_access: not a design counter
    c.prices.emplace_back(static_cast<uint32_t>(it - counters.begin()), a.fj);
  }
  if (auto e = c.validate(); !e.empty())
    return Error{p.where + ": " + e + " (at " + std::to_string(c.frequency_khz / 1000) + " MHz)"};
  return c;
}

}  // namespace bud::power
