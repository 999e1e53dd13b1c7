// Shared by the power tests.
#pragma once

#include <string>
#include <vector>

#include "emu/isa/Isa.h"
#include "power/EnergyTable.h"

namespace bud::power::test {

/// The counters a run of the NPU supplies: the PMU's, by index, and the host's CSR accesses.
inline std::vector<std::string> npu_counters() {
  std::vector<std::string> names;
  for (int i = 0; i < isa::kNumCounters; ++i) names.push_back(isa::counter_name(i));
  names.emplace_back(kHostCsrAccess);
  return names;
}

}  // namespace bud::power::test
