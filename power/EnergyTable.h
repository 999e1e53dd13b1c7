// Energy tables (docs/power.md): the energy of each counted action, read from a versioned,
// user-replaceable text-format file (power/energy_table.proto). Energies are kept as integer
// femtojoules so that energy sums are exact.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "emu/workload/Result.h"

namespace bud::power {

using workload::Error;
using workload::Result;

/// What an action is, for the report's breakdown (energy_table.proto's Component).
enum class Component : uint8_t { Mac, Scratchpad, Dram, Control, Static, Host, Background, Count };
inline constexpr int kNumComponents = static_cast<int>(Component::Count);
/// "mac", "scratchpad", "dram", "control", "static", "host", "background".
const char* component_name(Component c);

/// A counter with its energy per count.
struct PricedAction {
  std::string counter;
  uint64_t fj = 0;  ///< femtojoules per count, at the table's voltage
  Component component = Component::Mac;
  std::string source;
  std::string where;  ///< FILE:LINE:COL of its entry
};

/// A clock and supply pair (DVFS).
struct OperatingPoint {
  std::string name;
  double frequency_mhz = 0;
  double voltage = 0;
};

/// DRAM timing in physical units (absent from a table: timing stays in cycles).
struct DramTiming {
  double latency_ns = 0, jitter_ns = 0, bandwidth_gbps = 0;
};

/// The die's thermal model, in the integer units bud computes in (docs/power.md "Thermal").
struct ThermalParams {
  uint64_t r_mc_per_w = 0;  ///< milli-degrees C per watt
  uint64_t c_nj_per_c = 0;  ///< nanojoules per degree C
  int64_t ambient_mc = 0, trip_mc = 0, hysteresis_mc = 0;
  uint64_t window_cycles = 0;
  std::string where;  ///< FILE:LINE:COL of the `thermal` entry
};

/// Whether a component's energy is dissipated on the die (heats it): all but DRAM, DRAM
/// background and the host's side.
bool on_die(Component c);

struct EnergyTable {
  std::string file;  ///< where it was read from ("<builtin npu_45nm>" for the default)
  std::string name, version, technology;
  double voltage = 0;
  double frequency_mhz = 0;
  std::vector<PricedAction> actions;  ///< file order
  /// DVFS points in file order; always holds the table's own point (named "nominal" unless a
  /// listed point has its frequency and voltage).
  std::vector<OperatingPoint> points;
  std::optional<DramTiming> dram_timing;
  std::optional<ThermalParams> thermal;

  /// The point named `point_name`, if any.
  const OperatingPoint* point(std::string_view point_name) const;
};

/// The one counter a run supplies beyond the design's PMU: host-driver CSR accesses.
inline constexpr std::string_view kHostCsrAccess = "host.csr_access";
/// The schema version this bud reads (energy_table.proto's `schema`).
inline constexpr uint32_t kEnergySchema = 1;

/// Parses and checks a table. `known` lists the counters a run supplies (the design's counters
/// and kHostCsrAccess); every priced counter must be one of them and appear once; energies are
/// finite, >= 0 and whole femtojoules. Errors name FILE:LINE:COL.
Result<EnergyTable> parse_energy_table(std::string_view text, std::string_view file,
                                       const std::vector<std::string>& known);
Result<EnergyTable> load_energy_table(const std::string& path,
                                      const std::vector<std::string>& known);
/// The built-in table, power/tables/npu_45nm.textpb.
Result<EnergyTable> default_energy_table(const std::vector<std::string>& known);

}  // namespace bud::power
