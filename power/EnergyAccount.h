// The energy of a run (or of one scope of it): its counters priced by an energy table, exactly,
// in whole femtojoules, with the breakdown by action and by component (docs/power.md).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "power/EnergyTable.h"

namespace bud::power {

/// One priced counter of the scope.
struct EnergyLine {
  size_t action = 0;   ///< index into the table's actions
  uint64_t count = 0;  ///< the counter's value in the scope
  uint64_t fj = 0;     ///< count x the action's fJ
};

struct EnergyAccount {
  std::vector<EnergyLine> lines;  ///< in table order
  std::array<uint64_t, kNumComponents> by_component{};
  uint64_t total_fj = 0;
  /// Counters that count actions (see counts_actions()) with a non-zero value that the table
  /// does not price: energy the table leaves out.
  std::vector<std::string> unpriced;

  double joules() const { return static_cast<double>(total_fj) * 1e-15; }
};

/// Whether a counter counts something that costs energy (as opposed to a derived figure such as
/// `macs_useful`, a latency sum, request or conflict counts): those are expected in a table.
bool counts_actions(const std::string& counter);

/// Prices `values` (by `names`, as a design's describe table orders them, plus any extra
/// counters such as kHostCsrAccess) with `table`. A priced counter missing from `names` counts
/// 0. Fails only if a sum would overflow 64 bits of femtojoules (18 kJ).
Result<EnergyAccount> account(const EnergyTable& table, const std::vector<std::string>& names,
                              const std::vector<uint64_t>& values);

/// Figures of an account over `cycles` at the table's frequency.
struct PowerFigures {
  double seconds = 0;        ///< cycles / frequency
  double watts = 0;          ///< joules / seconds
  double tops_per_watt = 0;  ///< 2 x useful MACs per joule / 1e12
  double inferences_per_joule = 0;  ///< 1 / joules (the scope is one inference)
};
PowerFigures figures(const EnergyAccount& a, const EnergyTable& table, uint64_t cycles,
                     uint64_t useful_macs);

}  // namespace bud::power
