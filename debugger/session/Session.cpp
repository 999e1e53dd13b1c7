#include "debugger/session/Session.h"

#include <algorithm>

#include "debugger/session/StageCheck.h"

namespace bud::debugger {

std::string ProgramInfo::layer_of(uint32_t cmd_id) const {
  if (cmd_id >= commands.size()) return {};
  const uint32_t layer = commands[cmd_id].layer;
  return layer < layer_names.size() ? layer_names[layer] : std::string();
}

const char* stop_kind_name(StopKind k) {
  switch (k) {
    case StopKind::Breakpoint:
      return "breakpoint";
    case StopKind::Watchpoint:
      return "watchpoint";
    case StopKind::Trigger:
      return "trigger";
    case StopKind::Mismatch:
      return "mismatch";
    case StopKind::Step:
      return "step";
    case StopKind::Until:
      return "until";
    case StopKind::Limit:
      return "limit";
    case StopKind::Finish:
      return "finish";
    case StopKind::Goto:
      return "goto";
    case StopKind::ReverseStep:
      return "reverse-step";
    case StopKind::Restore:
      return "restore";
    case StopKind::Finished:
      return "finished";
    case StopKind::Hang:
      return "hang";
    case StopKind::Assertion:
      return "assertion";
    case StopKind::Error:
      return "error";
    case StopKind::CycleLimit:
      return "cycle_limit";
    case StopKind::Interrupted:
      return "interrupted";
  }
  return "?";
}

StopKind stop_kind_of(emu::RunState s) {
  switch (s) {
    case emu::RunState::Finished:
      return StopKind::Finished;
    case emu::RunState::Hang:
      return StopKind::Hang;
    case emu::RunState::Assertion:
      return StopKind::Assertion;
    case emu::RunState::CycleLimit:
      return StopKind::CycleLimit;
    case emu::RunState::Ready:
    case emu::RunState::Error:
      break;
  }
  return StopKind::Error;
}

bool StopInfo::has(StopKind kind) const {
  for (const auto& r : reasons)
    if (r.kind == kind) return true;
  return false;
}

std::string StopInfo::describe() const {
  std::string s = "stopped at cycle " + std::to_string(cycle);
  if (reasons.empty()) return s;
  s += ": ";
  for (size_t i = 0; i < reasons.size(); ++i) {
    const auto& r = reasons[i];
    if (i) s += "; ";
    s += stop_kind_name(r.kind);
    if (r.id) s += " " + std::to_string(r.id);
    if (!r.detail.empty()) s += " (" + r.detail + ")";
  }
  return s;
}

std::atomic<bool>& Session::interrupt_flag() {
  static std::atomic<bool> flag{false};
  return flag;
}

Session::Session(std::unique_ptr<emu::Emulator> emu, ProgramInfo program, SessionConfig config)
    : emu_(std::move(emu)),
      program_(std::move(program)),
      config_(config),
      timeline_(*emu_, config.timeline),
      breakpoints_(*emu_),
      prev_counters_(emu_->describe().counters.size(), 0),
      last_counters_(prev_counters_.size(), 0) {
  timeline_.reset();
  snapshot_counters();
  furthest_ = emu_->cycle();
}

void Session::snapshot_counters() {
  prev_counters_ = last_counters_;
  for (size_t i = 0; i < last_counters_.size(); ++i)
    last_counters_[i] = emu_->counter(static_cast<int>(i));
}

void Session::note_progress() {
  furthest_ = std::max(furthest_, emu_->cycle());
  if (emu_->state() != emu::RunState::Ready) end_cycle_ = emu_->cycle();
}

void Session::add_hook(SessionHook* hook) {
  if (std::find(hooks_.begin(), hooks_.end(), hook) == hooks_.end()) hooks_.push_back(hook);
}

void Session::remove_hook(SessionHook* hook) { std::erase(hooks_, hook); }

void Session::set_stage_check(StageCheck* check) {
  if (stage_check_) remove_hook(stage_check_);
  stage_check_ = check;
  if (check) add_hook(check);
}

void Session::collect_breakpoint_hits(std::vector<StopReason>& out) const {
  for (const auto& h : breakpoints_.hits()) {
    bool watch = false;
    for (const auto& b : breakpoints_.list())
      if (b.id == h.id) watch = b.kind == BreakKind::WatchSignal || b.kind == BreakKind::WatchMemory;
    out.push_back({watch ? StopKind::Watchpoint : StopKind::Breakpoint, h.id, h.detail});
  }
}

namespace {

// A session hook as a participant: at every pause it performs what it found and may add stop
// reasons (only halts do), which stop the run there.
class HookParticipant final : public drive::Participant {
 public:
  HookParticipant(SessionHook& h, std::vector<StopReason>& reasons) : h_(h), reasons_(reasons) {}
  emu::CycleHook* cycle_hook() override { return &h_; }
  emu::TxnObserver* txn_observer() override { return &h_; }
  void on_start(uint64_t) override {
    if (!armed_) h_.arm();
    armed_ = true;
  }
  std::optional<uint64_t> settle() override { return h_.settle(); }
  drive::PauseAction on_pause(uint64_t) override {
    const size_t before = reasons_.size();
    h_.stop_reasons(reasons_);
    return reasons_.size() > before ? drive::PauseAction::Halt : drive::PauseAction::Continue;
  }

 private:
  SessionHook& h_;
  std::vector<StopReason>& reasons_;
  bool armed_ = false;
};

// Progress on a terminal and Ctrl-C, every `chunk` cycles of a run (never per cycle).
class PaceParticipant final : public drive::Participant {
 public:
  PaceParticipant(const std::function<void(uint64_t)>& progress, uint64_t chunk)
      : progress_(progress), chunk_(std::max<uint64_t>(1, chunk)) {}
  uint64_t next_pause(uint64_t now) const override { return (now / chunk_ + 1) * chunk_; }
  drive::PauseAction on_pause(uint64_t cycle) override {
    if (progress_) progress_(cycle);
    return interrupted_ = Session::interrupt_flag().exchange(false),
           interrupted_ ? drive::PauseAction::Halt : drive::PauseAction::Continue;
  }
  bool interrupted() const { return interrupted_; }

 private:
  const std::function<void(uint64_t)>& progress_;
  uint64_t chunk_;
  bool interrupted_ = false;
};

}  // namespace

StopInfo Session::run(uint64_t cycles, bool use_breakpoints, StopKind limit_kind) {
  StopInfo stop;
  auto& emu = *emu_;
  if (emu.state() != emu::RunState::Ready) {
    stop.cycle = emu.cycle();
    stop.reasons.push_back({stop_kind_of(emu.state()), 0,
                            "the program is not running any more; use goto or reverse-step"});
    return stop;
  }
  // One driver: breakpoints, the active hooks (triggers, the golden-model check), automatic
  // checkpoints, progress and Ctrl-C take part; the timeline is the way back to a hit that an
  // asynchronous hook found late.
  drive::Driver driver(emu);
  BreakpointParticipant breakpoints(breakpoints_);
  const bool with_breakpoints = use_breakpoints && breakpoints_.any_enabled();
  if (with_breakpoints) driver.add(breakpoints);
  std::vector<StopReason> hook_reasons;
  std::vector<HookParticipant> hooks;
  hooks.reserve(hooks_.size());
  for (auto* h : hooks_)
    if (h->active()) hooks.emplace_back(*h, hook_reasons);
  for (auto& h : hooks) driver.add(h);
  driver.add(timeline_);
  PaceParticipant pace(progress_, config_.chunk);
  driver.add(pace);
  // Interventions ahead of the current cycle (an adopted packet's) happen as the run reaches
  // them; those at the current cycle are applied already, and applying one again changes nothing.
  drive::InterventionActor actor(emu, interventions_);
  if (!interventions_.empty() && interventions_.back().cycle > emu.cycle()) driver.add(actor);
  timeline_.set_log(&interventions_);
  driver.set_rewinder(&timeline_);
  interrupt_flag().store(false);
  const uint64_t start = emu.cycle();
  const uint64_t target = cycles > UINT64_MAX - start ? UINT64_MAX : start + cycles;
  const auto d = driver.run_until(target, config_.chunk);
  timeline_.set_log(nullptr);
  if (d.failed) stop.reasons.push_back({StopKind::Error, 0, d.detail});
  if (with_breakpoints) collect_breakpoint_hits(stop.reasons);
  for (auto& r : hook_reasons) stop.reasons.push_back(std::move(r));
  if (d.state != emu::RunState::Ready)
    stop.reasons.push_back({stop_kind_of(d.state), 0, d.message});
  if (stop.reasons.empty()) {
    if (emu.cycle() >= target)
      stop.reasons.push_back({limit_kind, 0, ""});
    else if (pace.interrupted())
      stop.reasons.push_back({StopKind::Interrupted, 0, "Ctrl-C"});
  }
  stop.cycle = emu.cycle();
  note_progress();
  return stop;
}

std::string Session::goto_cycle(uint64_t cycle) {
  if (end_cycle_ && cycle > *end_cycle_)
    return "cycle " + std::to_string(cycle) + " is past the end of the run (it finished at cycle " +
           std::to_string(*end_cycle_) + ")";
  auto e = timeline_.seek(cycle, interventions_);
  note_progress();
  return e;
}

std::string Session::advance_to(uint64_t cycle) {
  if (cycle < emu_->cycle()) return "cannot advance backwards";
  auto e = timeline_.run_to(cycle, interventions_).error;
  note_progress();
  return e;
}

std::optional<StopInfo> Session::reverse_continue(std::string& error) {
  const uint64_t now = emu_->cycle();
  if (!breakpoints_.any_enabled()) {
    error = "no breakpoints or watchpoints are enabled";
    return std::nullopt;
  }
  std::vector<uint8_t> undo;
  emu_->save(undo);
  // The scan re-runs hits the user already saw: keep the hit counts as they are.
  std::vector<uint64_t> hits_before;
  for (const auto& b : breakpoints_.list()) hits_before.push_back(b.hits);
  auto restore_hits = [&] {
    for (size_t i = 0; i < hits_before.size() && i < breakpoints_.list().size(); ++i)
      breakpoints_.set_hits(breakpoints_.list()[i].id, hits_before[i]);
  };
  // Scan checkpoint windows backwards; in each, re-execute to `now` (or the window's end) with
  // breakpoints and remember the last hit strictly before `now`.
  auto starts = timeline_.checkpoint_cycles_before(now);
  uint64_t window_end = now;
  for (auto it = starts.rbegin(); it != starts.rend(); ++it) {
    std::string e;
    auto from = timeline_.restore_at_or_before(*it, e);
    if (!from) {
      error = e;
      break;
    }
    // Re-apply changes up to `from` is not needed: checkpoints include them.
    std::optional<StopInfo> last;
    breakpoints_.arm();
    BreakpointParticipant watch(breakpoints_);
    // Re-execute the window (re-applying interventions) and keep the last hit before `now`.
    while (emu_->cycle() < window_end) {
      const auto ran = timeline_.run_to(window_end, interventions_, &watch);
      if (!ran.error.empty() || !ran.halted) break;
      if (emu_->cycle() >= now) break;
      StopInfo s;
      s.cycle = emu_->cycle();
      collect_breakpoint_hits(s.reasons);
      last = s;
      breakpoints_.arm();  // keep scanning; hits() restarts
    }
    if (last) {
      // Land exactly on the hit.
      if (auto e2 = timeline_.seek(last->cycle, interventions_); !e2.empty()) {
        error = e2;
        break;
      }
      restore_hits();
      return last;
    }
    window_end = *it;
  }
  std::string ignored;
  emu_->restore(undo, ignored);
  restore_hits();
  if (error.empty()) error = "no breakpoint or watchpoint fired before cycle " + std::to_string(now);
  return std::nullopt;
}

std::string Session::adopt_interventions(std::vector<Intervention> log) {
  interventions_ = std::move(log);
  for (const auto& i : interventions_)
    if (i.cycle == emu_->cycle() && !i.apply(*emu_))
      return std::string("cannot apply the recorded ") + Intervention::kind_name(i.kind) +
             " at cycle " + std::to_string(i.cycle);
  return {};
}

bool Session::record(Intervention i) {
  if (!i.apply(*emu_)) return false;
  const uint64_t now = emu_->cycle();
  // Changing the past forks a new future: what was recorded after now no longer happens.
  if (furthest_ > now) {
    timeline_.truncate_after(now);
    std::erase_if(interventions_, [&](const Intervention& x) { return x.cycle > now; });
    furthest_ = now;
    end_cycle_.reset();
  }
  auto pos = std::upper_bound(interventions_.begin(), interventions_.end(), i.cycle,
                              [](uint64_t c, const Intervention& x) { return c < x.cycle; });
  interventions_.insert(pos, std::move(i));
  return true;
}

bool Session::deposit(emu::SignalId id, uint32_t element, const emu::SignalValue& v) {
  Intervention i;
  i.kind = Intervention::Kind::Deposit;
  i.cycle = emu_->cycle();
  i.signal = id;
  i.element = element;
  i.value = v;
  return record(std::move(i));
}

bool Session::force(emu::SignalId id, uint32_t element, const emu::SignalValue& v) {
  Intervention i;
  i.kind = Intervention::Kind::Force;
  i.cycle = emu_->cycle();
  i.signal = id;
  i.element = element;
  i.value = v;
  return record(std::move(i));
}

void Session::release(emu::SignalId id, uint32_t element) {
  Intervention i;
  i.kind = Intervention::Kind::Release;
  i.cycle = emu_->cycle();
  i.signal = id;
  i.element = element;
  record(std::move(i));
}

bool Session::write_memory(const std::string& memory, uint64_t offset,
                           const std::vector<uint8_t>& bytes) {
  Intervention i;
  i.kind = Intervention::Kind::MemoryWrite;
  i.cycle = emu_->cycle();
  i.memory = memory;
  i.offset = offset;
  i.bytes = bytes;
  return record(std::move(i));
}

}  // namespace bud::debugger
