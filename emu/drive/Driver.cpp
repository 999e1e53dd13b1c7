#include "emu/drive/Driver.h"

#include <algorithm>

namespace bud::drive {

bool Driver::Fanout::after_cycle(uint64_t cycle) {
  bool stop = false;
  for (auto* h : hooks) stop |= h->after_cycle(cycle);
  return stop;
}

void Driver::Fanout::on_txn(const emu::StageTxn& t) {
  for (auto* o : observers) o->on_txn(t);
}

Driver::~Driver() { uninstall(); }

void Driver::add(Participant& p) {
  if (std::find(participants_.begin(), participants_.end(), &p) == participants_.end())
    participants_.push_back(&p);
}

void Driver::remove(Participant& p) { std::erase(participants_, &p); }

void Driver::install() {
  // One participant per slot is installed as it is: no fan-out call per cycle.
  emu_.set_cycle_hook(fanout_.hooks.size() == 1 ? fanout_.hooks[0]
                      : fanout_.hooks.empty()   ? nullptr
                                                : &fanout_);
  emu_.set_txn_observer(fanout_.observers.size() == 1 ? fanout_.observers[0]
                        : fanout_.observers.empty()   ? nullptr
                                                      : &fanout_);
  installed_ = true;
}

void Driver::uninstall() {
  if (!installed_) return;
  emu_.set_cycle_hook(nullptr);
  emu_.set_txn_observer(nullptr);
  installed_ = false;
}

DriveStop Driver::run_until(uint64_t target, uint64_t max_chunk) {
  DriveStop stop;
  if (max_chunk == 0) max_chunk = 1;
  fanout_.hooks.clear();
  fanout_.observers.clear();
  for (auto* p : participants_) {
    if (auto* h = p->cycle_hook()) fanout_.hooks.push_back(h);
    if (auto* o = p->txn_observer()) fanout_.observers.push_back(o);
  }
  for (auto* p : participants_) p->on_start(emu_.cycle());
  install();
  while (true) {
    const uint64_t now = emu_.cycle();
    if (emu_.state() != emu::RunState::Ready) break;
    if (now >= target) {
      stop.reached_target = true;
      break;
    }
    uint64_t next = std::min(target, now + std::min(max_chunk, target - now));
    for (auto* p : participants_) {
      const uint64_t want = p->next_pause(now);
      if (want > now) next = std::min(next, want);
    }
    const auto r = emu_.step(next - now);
    driven_ += emu_.cycle() - now;
    stop.rewound_to.reset();

    // Asynchronous participants catch up; the earliest cycle one must return to wins.
    std::optional<uint64_t> back;
    for (auto* p : participants_)
      if (auto c = p->settle(); c && *c < emu_.cycle() && (!back || *c < *back)) back = c;
    if (back) {
      uninstall();
      std::string error = rewinder_ ? rewinder_->rewind_to(*back)
                                    : "no way back to cycle " + std::to_string(*back);
      if (error.empty() && emu_.cycle() != *back)
        error = "the re-execution ended at cycle " + std::to_string(emu_.cycle()) +
                " before cycle " + std::to_string(*back);
      install();
      if (!error.empty()) {
        stop.failed = true;
        stop.detail = "cannot return to cycle " + std::to_string(*back) + ": " + error;
        break;
      }
      stop.rewound_to = back;
      for (auto* p : participants_) p->on_rewind(*back);
    }

    for (auto* p : participants_) {
      const auto a = p->on_pause(emu_.cycle());
      if (a == PauseAction::Continue) continue;
      (a == PauseAction::Halt ? stop.halted : stop.failed) = true;
      if (auto d = p->stop_detail(); !d.empty())
        stop.detail += (stop.detail.empty() ? "" : "; ") + d;
    }
    // A participant may have driven the emulator itself at its pause (a nested driver, e.g. a
    // checker re-executing a window): the slots are ours again.
    install();
    if (stop.halted || stop.failed) break;
    if (emu_.cycle() == now && !back && !r.hook_stop) break;  // no progress possible
  }
  uninstall();
  stop.cycle = emu_.cycle();
  stop.state = emu_.state();
  if (stop.state != emu::RunState::Ready) stop.message = emu_.step(0).message;
  return stop;
}

DriveStop advance(emu::Emulator& emu, uint64_t target, std::initializer_list<Participant*> with) {
  Driver driver(emu);
  for (auto* p : with)
    if (p) driver.add(*p);
  return driver.run_until(target);
}

}  // namespace bud::drive
