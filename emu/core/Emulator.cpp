#include "emu/core/Emulator.h"

#include "emu/core/EmulatorConfig.h"
#include "emu/core/Hash.h"

namespace bud::emu {

const char* run_state_name(RunState s) {
  switch (s) {
    case RunState::Ready: return "ready";
    case RunState::Finished: return "finished";
    case RunState::Hang: return "hang";
    case RunState::Assertion: return "assertion";
    case RunState::Error: return "error";
    case RunState::CycleLimit:
      return "cycle_limit";
  }
  return "?";
}

void Emulator::save_segments(StateSegments& out) const {
  out.clear();
  save(out.buffer());
  out.end_owned(0, 0);
}

std::string Emulator::status_report() const {
  std::string r;
  for (const auto& e : engines()) {
    if (!r.empty()) r += "\n";
    r += "  " + e.name + ": state=" + e.state;
    if (e.cmd_id) r += " cmd=#" + std::to_string(*e.cmd_id);
    if (e.queue_depth) r += " queue=" + std::to_string(e.queue_level);
    if (!e.detail.empty()) r += " " + e.detail;
  }
  return r;
}

uint64_t Emulator::memory_digest(std::string_view memory) const {
  for (const auto& m : memories()) {
    if (m.name != memory) continue;
    std::vector<uint8_t> bytes(m.size_bytes);
    if (!read_memory(memory, 0, bytes)) return 0;
    return hash64(bytes);
  }
  return 0;
}

std::string ThrottleConfig::validate() const {
  if (period == 0 && on_cycles == 0) return {};
  if (period == 0 || on_cycles >= period)
    return "throttle: need 0 < ON < PERIOD (got " + std::to_string(on_cycles) + " of " +
           std::to_string(period) + ")";
  return {};
}

}  // namespace bud::emu
