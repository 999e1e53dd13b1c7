// DVFS (docs/power.md, "Operating points"): an energy table's energies at another clock and
// supply, and the DRAM's physical timing in cycles of a clock.
#pragma once

#include "emu/core/DramModel.h"
#include "power/EnergyTable.h"

namespace bud::power {

/// `table` with every energy scaled to `point`, rounded once to whole femtojoules:
///  - dynamic actions (mac, scratchpad, dram, control, host): x (V / V0)^2;
///  - static (per engine-cycle): x (V / V0) x (f0 / f): static power follows V, a cycle lasts 1/f;
///  - background (DRAM standby, per cycle): x (f0 / f): its power does not follow the NPU's supply.
/// Its frequency and voltage become the point's.
EnergyTable at_point(const EnergyTable& table, const OperatingPoint& point);

/// `base` with its latency, jitter and bandwidth converted from `timing` at `frequency_mhz`:
/// latency rounds up to whole cycles (at least 1), jitter to the nearest cycle, bandwidth down to
/// whole bytes per cycle (at least 1). Everything else is kept.
emu::DramConfig dram_at(const emu::DramConfig& base, const DramTiming& timing, double frequency_mhz);

}  // namespace bud::power
