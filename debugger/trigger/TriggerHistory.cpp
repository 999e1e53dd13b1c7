#include "debugger/trigger/TriggerHistory.h"

#include <algorithm>

#include "debugger/session/Session.h"

namespace bud::debugger {

std::string Reexecutor::advance(emu::Emulator& e, uint64_t target, drive::Participant* with) {
  static const std::vector<Intervention> kNone;
  drive::Driver driver(e);
  drive::InterventionActor actor(e, session_ ? session_->interventions() : kNone);
  driver.add(actor);
  if (with) driver.add(*with);
  const uint64_t from = e.cycle();
  const auto s = driver.run_until(target, UINT64_MAX);
  cycles_ += e.cycle() - from;
  return s.failed ? s.detail : std::string();
}

void TriggerHistory::plan(const emu::Emulator& emu, uint64_t interval, size_t keep) {
  const bool was_planned = interval_ != 0;
  interval_ = interval;
  keep_ = keep;
  ring_.reserve(keep_ + 1);
  const uint64_t now = emu.cycle();
  if (!was_planned || ring_.empty()) take(emu, now);
  next_ = (now / interval_ + 1) * interval_;
}

void TriggerHistory::disable() {
  interval_ = 0;
  keep_ = 0;
  next_ = UINT64_MAX;
  ring_.clear();
}

void TriggerHistory::reschedule(uint64_t cycle) {
  if (interval_) next_ = (cycle / interval_ + 1) * interval_;
}

void TriggerHistory::take(const emu::Emulator& emu, uint64_t cycle) {
  reschedule(cycle);
  for (const auto& s : ring_)
    if (s.cycle == cycle) return;  // taken before a rewind: the same state
  Snapshot* slot = nullptr;
  if (ring_.size() < keep_) {
    ring_.push_back({cycle, std::make_shared<std::vector<uint8_t>>()});
    slot = &ring_.back();
  } else {
    slot = &*std::min_element(ring_.begin(), ring_.end(), [](const Snapshot& a, const Snapshot& b) {
      return a.cycle < b.cycle;
    });
    // A capture still holds the oldest snapshot: give the ring a new buffer.
    if (slot->state.use_count() > 1) slot->state = std::make_shared<std::vector<uint8_t>>();
  }
  slot->cycle = cycle;
  slot->state->clear();
  emu.save(*slot->state);
}

const TriggerHistory::Snapshot* TriggerHistory::at_or_before(uint64_t cycle) const {
  const Snapshot* best = nullptr;
  for (const auto& s : ring_)
    if (s.cycle <= cycle && (!best || s.cycle > best->cycle)) best = &s;
  return best;
}

const TriggerHistory::Snapshot* TriggerHistory::oldest() const {
  const Snapshot* best = nullptr;
  for (const auto& s : ring_)
    if (!best || s.cycle < best->cycle) best = &s;
  return best;
}

size_t TriggerHistory::bytes() const {
  size_t n = 0;
  for (const auto& s : ring_) n += s.state ? s.state->capacity() : 0;
  return n;
}

}  // namespace bud::debugger
