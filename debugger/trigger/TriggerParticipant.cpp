#include "debugger/trigger/TriggerParticipant.h"

namespace bud::debugger {

void TriggerParticipant::on_start(uint64_t) { engine_.arm(); }

drive::PauseAction TriggerParticipant::on_pause(uint64_t) {
  engine_.service(nullptr);
  return engine_.halt_requested() ? drive::PauseAction::Halt : drive::PauseAction::Continue;
}

DriveResult drive(emu::Emulator& emu, TriggerEngine& engine, uint64_t max_cycles,
                  const std::function<void(uint64_t)>& progress, uint64_t progress_interval) {
  if (progress_interval == 0) progress_interval = uint64_t{1} << 20;
  drive::Driver driver(emu);
  TriggerParticipant triggers(engine);
  driver.add(triggers);
  driver.set_rewinder(&triggers);
  drive::ProgressParticipant shown(progress, progress_interval);
  if (progress) driver.add(shown);
  const auto s = driver.run_until(max_cycles, progress_interval);
  DriveResult r;
  r.halted = s.halted;
  if (s.failed) r.error = s.detail;
  r.cycle = emu.cycle();
  return r;
}

}  // namespace bud::debugger
