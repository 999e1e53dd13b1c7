#include "tests/core/MockDesign.h"

#include "emu/run/Designs.h"
#include "tests/core/MockEmulator.h"

namespace bud::test {

void use_mock_design() {
  static const bool registered = [] {
    emu::register_design("mock",
                         [](const emu::EmulatorConfig& c) -> std::unique_ptr<emu::Emulator> {
                           emu::MockConfig mc;
                           mc.seed = c.verilator_seed;
                           return std::make_unique<emu::MockEmulator>(mc);
                         });
    return true;
  }();
  (void)registered;
}

run::RunOptions mock_options(const std::string& workload) {
  use_mock_design();
  run::RunOptions o;
  o.workload = workload;
  o.emulator.design = "mock";
  return o;
}

}  // namespace bud::test
