// The result rung of bisect: whether a run's final state differs from the golden model's (its
// outputs, every layer output in DRAM), the first wrong byte, and the cycle from which that byte
// stays wrong.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "debugger/bisect/GoldenTrace.h"
#include "emu/drive/Driver.h"
#include "emu/run/RunJob.h"

namespace bud::debugger {

/// Whether the final state differs from the golden model's: outputs or DRAM data region.
bool final_state_failed(const run::PreparedRun& p, const GoldenTrace& trace, emu::Emulator& emu,
                        std::string& detail);

/// The first byte of a layer output in the final DRAM that differs from the golden model's.
std::optional<uint32_t> first_wrong_output_byte(const run::PreparedRun& p, const GoldenTrace& trace,
                                                emu::Emulator& emu);

/// Steps `emu` from where it is to `end` (with `actor`, if any, replaying interventions) and
/// returns the cycle from which DRAM byte `addr` differs from `want` for good: after the last cycle
/// it held `want` (or, if it never did from here, the last cycle it changed). The state at cycle N
/// is the state after N edges.
std::optional<uint64_t> date_wrong_byte(emu::Emulator& emu, uint32_t addr, uint8_t want, uint64_t end,
                                        drive::Participant* actor);

}  // namespace bud::debugger
