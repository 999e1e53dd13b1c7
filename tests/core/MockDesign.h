// The mock design under the name "mock" in the design registry (emu/run/Designs.h), so tests run
// the code above emu/ (sessions, record/replay, bisect) on it exactly as on the NPU: through
// make_emulator and the Emulator interface, with a built-in workload's host job as its program.
#pragma once

#include "emu/run/RunJob.h"

namespace bud::test {

/// Registers "mock" (idempotent). Its LFSR seed is the config's verilator_seed.
void use_mock_design();

/// Recording intervals for a short mock run: digest points every 64 cycles, checkpoints every
/// 256 (`Config` is replay::RecordConfig; a template so this header needs no replay library).
template <class Config>
Config mock_intervals() {
  Config c;
  c.digest_interval = 64;
  c.checkpoint_interval = 256;
  return c;
}

/// Run options for `workload` on the mock design.
run::RunOptions mock_options(const std::string& workload = "gemm_small");

}  // namespace bud::test
