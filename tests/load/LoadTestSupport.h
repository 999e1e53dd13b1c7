// Shared by the serving tests (tests/load, tests/fit): the built-in energy table priced for the
// default design's counters.
#pragma once

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "emu/run/Designs.h"
#include "power/EnergyAccount.h"

namespace bud::test {

/// The built-in table (npu_45nm) with the default design's counters and host CSR accesses known.
inline power::EnergyTable builtin_table() {
  std::vector<std::string> known = emu::make_emulator(emu::EmulatorConfig{})->describe().counters;
  known.emplace_back(power::kHostCsrAccess);
  auto t = power::default_energy_table(known);
  REQUIRE(t);
  return *t;
}

}  // namespace bud::test
