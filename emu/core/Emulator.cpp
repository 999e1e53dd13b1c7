#include "emu/core/Emulator.h"

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

}  // namespace bud::emu
