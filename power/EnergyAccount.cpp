#include "power/EnergyAccount.h"

#include <algorithm>

namespace bud::power {

bool counts_actions(const std::string& c) {
  // Engine-cycle classes ("gemm.active"), data moved, MACs issued, scratchpad accesses, commands
  // retired, cycles (background) and host accesses cost energy; the rest are derived figures.
  if (c.find('.') != std::string::npos) return true;
  return c == "cycles" || c == "macs_issued" || c == "dram_rd_bytes" || c == "dram_wr_bytes" ||
         c.rfind("spad_", 0) == 0 || c.rfind("retired_", 0) == 0;
}

Result<EnergyAccount> account(const EnergyTable& table, const std::vector<std::string>& names,
                              const std::vector<uint64_t>& values) {
  EnergyAccount a;
  std::vector<bool> priced(names.size(), false);
  for (size_t i = 0; i < table.actions.size(); ++i) {
    const PricedAction& p = table.actions[i];
    const auto it = std::find(names.begin(), names.end(), p.counter);
    uint64_t count = 0;
    if (it != names.end()) {
      const size_t k = static_cast<size_t>(it - names.begin());
      priced[k] = true;
      if (k < values.size()) count = values[k];
    }
    EnergyLine line{i, count, 0};
    uint64_t& component = a.by_component[static_cast<size_t>(p.component)];
    if (__builtin_mul_overflow(count, p.fj, &line.fj) ||
        __builtin_add_overflow(component, line.fj, &component) ||
        __builtin_add_overflow(a.total_fj, line.fj, &a.total_fj))
      return Error{p.where + ": the energy of '" + p.counter + "' (" + std::to_string(count) +
                   " counts) overflows 64 bits of femtojoules"};
    a.lines.push_back(line);
  }
  for (size_t k = 0; k < names.size() && k < values.size(); ++k)
    if (!priced[k] && values[k] != 0 && counts_actions(names[k])) a.unpriced.push_back(names[k]);
  return a;
}

PowerFigures figures(const EnergyAccount& a, const EnergyTable& table, uint64_t cycles,
                     uint64_t useful_macs) {
  PowerFigures f;
  f.seconds = static_cast<double>(cycles) / (table.frequency_mhz * 1e6);
  const double j = a.joules();
  if (f.seconds > 0) f.watts = j / f.seconds;
  if (j > 0) {
    f.tops_per_watt = 2.0 * static_cast<double>(useful_macs) / j / 1e12;
    f.inferences_per_joule = 1.0 / j;
  }
  return f;
}

}  // namespace bud::power
