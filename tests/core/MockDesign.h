// The mock design under the name "mock" in the design registry (emu/run/Designs.h), so tests run
// the code above emu/ (sessions, record/replay, bisect) on it exactly as on the NPU: through
// make_emulator and the Emulator interface, with a built-in workload's host job as its program.
#pragma once

#include "emu/run/RunJob.h"

namespace bud::test {

/// Registers "mock" (idempotent). Its LFSR seed is the config's verilator_seed.
void use_mock_design();

/// Run options for `workload` on the mock design.
run::RunOptions mock_options(const std::string& workload = "gemm_small");

}  // namespace bud::test
