#include "power/Dvfs.h"

#include <algorithm>
#include <cmath>

namespace bud::power {

EnergyTable at_point(const EnergyTable& table, const OperatingPoint& point) {
  EnergyTable t = table;
  const double v = point.voltage / table.voltage;
  const double slower = table.frequency_mhz / point.frequency_mhz;
  for (auto& a : t.actions) {
    double scale = v * v;
    if (a.component == Component::Static) scale = v * slower;
    if (a.component == Component::Background) scale = slower;
    a.fj = static_cast<uint64_t>(std::llround(static_cast<double>(a.fj) * scale));
  }
  t.frequency_mhz = point.frequency_mhz;
  t.voltage = point.voltage;
  return t;
}

emu::DramConfig dram_at(const emu::DramConfig& base, const DramTiming& timing, double frequency_mhz) {
  emu::DramConfig d = base;
  const double cycles_per_ns = frequency_mhz / 1000.0;
  // A tiny tolerance keeps exact products (40 ns at 1 GHz = 40 cycles) from rounding up.
  d.base_latency = static_cast<uint32_t>(std::max(1.0, std::ceil(timing.latency_ns * cycles_per_ns - 1e-9)));
  d.jitter = static_cast<uint32_t>(std::llround(timing.jitter_ns * cycles_per_ns));
  d.bytes_per_cycle = static_cast<uint32_t>(
      std::max(1.0, std::floor(timing.bandwidth_gbps * 1000.0 / frequency_mhz + 1e-9)));
  return d;
}

}  // namespace bud::power
