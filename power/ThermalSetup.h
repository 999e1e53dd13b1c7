// The harness's thermal model (emu/core/Thermal.h) set up from an energy table: its `thermal`
// parameters, its clock, and the prices of the actions dissipated on the die (docs/power.md
// "Thermal").
#pragma once

#include <string>
#include <vector>

#include "emu/core/Thermal.h"
#include "power/EnergyTable.h"

namespace bud::power {

/// The thermal model of a run priced by `table` (at the operating point it runs at: at_point())
/// on a design whose counters are `counters` (describe().counters order; the NPU's are the
/// PMU's). Only on-die actions (on_die()) heat the die; host accesses are not design counters
/// and are left out. Fails, naming the table's place, when the table has no `thermal` section
/// or its window is longer than the RC time constant at the table's clock.
Result<emu::ThermalConfig> thermal_config(const EnergyTable& table,
                                          const std::vector<std::string>& counters);

}  // namespace bud::power
