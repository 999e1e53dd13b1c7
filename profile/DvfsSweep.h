// `bud profile --dvfs` (docs/power.md "Operating points", docs/profiling.md "DVFS sweep"): the
// run repeated at each operating point of an energy table, with the DRAM's physical timing
// converted to cycles of that point's clock and the energies scaled to its supply, and the
// points that are not worth running flagged.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "debugger/json/Json.h"
#include "emu/run/RunJob.h"
#include "power/EnergyTable.h"

namespace bud::profile {

/// One operating point's run.
struct DvfsPoint {
  power::OperatingPoint point;
  emu::DramConfig dram;   ///< the DRAM timing in this point's cycles
  run::RunReport report;  ///< the checked run (passed, state, counters)
  uint64_t cycles = 0;
  double seconds = 0;      ///< cycles / frequency
  uint64_t energy_fj = 0;  ///< one inference (the run) at this point
  double watts = 0;
  double inferences_per_joule = 0;
  double tops_per_watt = 0;
  double inferences_per_second = 0;
  /// Empty when the point is on the time-energy Pareto front; otherwise why not, naming the
  /// point that beats it ("'turbo' is faster and costs no more energy per inference").
  std::string inefficient;
};

struct DvfsSweep {
  std::vector<DvfsPoint> points;  ///< the table's order
  bool scaled_dram = false;       ///< the table has `dram_timing` (else cycles stay as run)
  std::string error;              ///< a point could not run (bad input at that point)
};

/// Runs `prepared` once per operating point of `table`: with its `dram_timing` converted at the
/// point's frequency (power::dram_at; the other DRAM settings are the options'), energies at
/// the point (power::at_point). Marks a point inefficient when another is at least as fast and
/// costs no more energy per inference, one of the two strictly.
DvfsSweep sweep_dvfs(const run::PreparedRun& prepared, const run::RunOptions& options,
                     const power::EnergyTable& table);

/// {"table", "scaled_dram", "points": [{"name", "frequency_mhz", "voltage", "dram": {...},
///  "passed", "cycles", "seconds", "energy_fj", "watts", "inferences_per_joule",
///  "tops_per_watt", "inferences_per_second", "inefficient"}]}.
json::Json dvfs_json(const DvfsSweep& s, const power::EnergyTable& table);
std::string dvfs_text(const DvfsSweep& s, const power::EnergyTable& table);

}  // namespace bud::profile
