// The energy of a profiled run (docs/power.md, docs/profiling.md "Energy"): the run's counters
// priced by an energy table, and the same counts split over the layers through the exact
// attribution, so that every femtojoule belongs to a layer or to the rest of the run (host
// orchestration, idle engines, the tail), and within a scope to a component, an engine and a
// scratchpad buffer.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "debugger/json/Json.h"
#include "power/EnergyAccount.h"
#include "profile/Profile.h"

namespace bud::profile {

/// Energy of one scope (a layer, the rest of the run, or the whole run), in whole fJ.
struct ScopeEnergy {
  std::string name;
  std::vector<uint64_t> counts;  ///< per table action (EnergyTable::actions order)
  uint64_t total_fj = 0;
  std::array<uint64_t, power::kNumComponents> by_component{};
  /// What each engine's actions cost: its static engine-cycles and the dynamic actions it makes
  /// (docs/power.md "Attribution"); DRAM background and host accesses belong to no engine.
  std::array<uint64_t, isa::kNumEngines> by_engine{};
  uint64_t no_engine_fj = 0;
  std::array<uint64_t, isa::kNumBuffers> by_buffer{};  ///< scratchpad energy per buffer
  uint64_t cycles = 0;  ///< elapsed cycles (a layer: its span; the run: all of it)
  uint64_t macs_useful = 0;
  power::PowerFigures figures;  ///< over `cycles` at the table's clock
};

/// The energy profile of a run.
struct EnergyProfile {
  power::EnergyTable table;         ///< the table used (at the operating point the run ran at)
  ScopeEnergy run;                  ///< the PMU's totals (and the host's CSR accesses), priced
  std::vector<ScopeEnergy> layers;  ///< program order
  /// Everything no layer's commands hold: the host's orchestration (idle engines, CSR accesses),
  /// the tail after each engine's last command, and DRAM background outside the layers.
  ScopeEnergy rest;
  std::vector<std::string> unpriced;  ///< counters with actions the table does not price
};

/// A scope's count of a design counter (names as docs/counters.md; kHostCsrAccess: none, the
/// host is outside every layer). `cycles` is the scope's share of the run's cycles: its compute
/// holder's attributed engine-cycles, which partition the run (layers' spans do not).
uint64_t scope_count(const ScopeMetrics& m, std::string_view counter);

/// Prices the run (`names`/`values`: the design's counters at the end plus kHostCsrAccess) and
/// its layers with `table`. Layer counts come from the profile; `rest` is the run's count less
/// the layers' for each action, so layers + rest = run exactly, fJ for fJ. Fails only when a sum
/// would overflow 64 bits of fJ.
power::Result<EnergyProfile> energy_profile(const Profile& p, const power::EnergyTable& table,
                                            const std::vector<std::string>& names,
                                            const std::vector<uint64_t>& values);

/// {"table": {...}, "run": {...}, "layers": [...], "rest": {...}, "unpriced": [...]}, energies
/// in fJ (integers), power in W.
json::Json energy_json(const EnergyProfile& e);
/// The energy tables: per layer (energy, share, average power, TOPS/W), components, engines,
/// buffers, and the run's figures.
std::string energy_text(const EnergyProfile& e);
/// A run with the thermal model against the same run without it (docs/power.md "Thermal"):
/// nominal vs sustained throughput, and how often and how long the clamp held.
struct ThermalFigures {
  uint64_t nominal_cycles = 0;    ///< the run without the thermal model
  uint64_t sustained_cycles = 0;  ///< the run with it
  double frequency_mhz = 0;
  int64_t peak_mc = 0, end_mc = 0;
  uint64_t clamp_events = 0, clamped_cycles = 0;
  /// Inferences (runs) per second at the clock.
  double nominal_per_second() const;
  double sustained_per_second() const;
  double clamped_fraction() const;  ///< clamped cycles / sustained cycles
};
json::Json thermal_json(const ThermalFigures& t);
std::string thermal_text(const ThermalFigures& t);

/// "12.345 uJ"-style rendering of femtojoules.
std::string joules_text(uint64_t fj);

}  // namespace bud::profile
