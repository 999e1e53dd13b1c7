#include "emu/drive/Intervention.h"

#include <algorithm>

namespace bud::drive {

bool Intervention::apply(emu::Emulator& emu) const {
  switch (kind) {
    case Kind::Deposit: return emu.deposit_signal(signal, element, value);
    case Kind::Force: return emu.force_signal(signal, element, value);
    case Kind::Release: emu.release_signal(signal, element); return true;
    case Kind::MemoryWrite: return emu.write_memory(memory, offset, bytes);
  }
  return false;
}

const char* Intervention::kind_name(Kind k) {
  switch (k) {
    case Kind::Deposit: return "deposit";
    case Kind::Force: return "force";
    case Kind::Release: return "release";
    case Kind::MemoryWrite: return "memory-write";
  }
  return "?";
}

bool InterventionActor::apply_due(uint64_t cycle) {
  while (next_ < log_.size() && log_[next_].cycle == cycle) {
    if (!log_[next_].apply(emu_)) {
      error_ = "could not re-apply a " + std::string(Intervention::kind_name(log_[next_].kind)) +
               " at cycle " + std::to_string(cycle);
      return false;
    }
    ++next_;
  }
  return true;
}

void InterventionActor::on_rewind(uint64_t cycle) {
  next_ = std::lower_bound(log_.begin(), log_.end(), cycle,
                           [](const Intervention& i, uint64_t c) { return i.cycle < c; }) -
          log_.begin();
}

void InterventionActor::on_start(uint64_t cycle) {
  error_.clear();
  on_rewind(cycle);
  apply_due(cycle);
}

uint64_t InterventionActor::next_pause(uint64_t now) const {
  // on_start/on_pause applied everything at or before `now`.
  return next_ < log_.size() && log_[next_].cycle > now ? log_[next_].cycle : UINT64_MAX;
}

PauseAction InterventionActor::on_pause(uint64_t cycle) {
  if (!error_.empty()) return PauseAction::Fail;  // refused at the start
  return apply_due(cycle) ? PauseAction::Continue : PauseAction::Fail;
}

}  // namespace bud::drive
