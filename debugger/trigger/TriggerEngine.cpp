#include "debugger/trigger/TriggerEngine.h"

#include <algorithm>
#include <thread>

namespace bud::debugger {

namespace {

// Saving a snapshot costs a few milliseconds (state checksum included): every 2^19 cycles keeps
// that near 1% of the run; a capture then re-executes at most this many cycles beyond its window.
constexpr uint64_t kMinHistoryInterval = uint64_t{1} << 19;
// After a barrier hit, evaluate inline for this many cycles (see settle()).
constexpr uint64_t kInlineAfterBarrier = uint64_t{1} << 19;

}  // namespace

TriggerEngine::TriggerEngine(emu::Emulator& emu, TriggerEngineConfig config)
    : emu_(emu),
      config_(std::move(config)),
      evaluator_(emu),
      scratch_(new uint64_t[kMaxFrameSlots]()),
      captures_(config_, rx_),
      actions_(emu, config_, history_, captures_) {}

TriggerEngine::~TriggerEngine() {
  evaluator_.stop();
  detach();
}

void TriggerEngine::layout() {
  layout_ = programs().layout();
  const bool threaded = config_.async && layout_.fits && std::thread::hardware_concurrency() > 1;
  if (!threaded)
    evaluator_.stop();
  else
    evaluator_.start(layout_.stride);
}

std::optional<uint64_t> TriggerEngine::settle() {
  if (!evaluator_.threaded()) {
    active_ = programs().active();
    return std::nullopt;
  }
  auto s = evaluator_.settle(pending_);
  if (s.back) {
    // The run goes back to the hit; the frames after it are produced again. Barrier hits tend
    // to come in runs (a condition that fired once fires again soon): evaluate inline for a
    // while, where a hit costs nothing, instead of going back for each one.
    inline_until_ = *s.back + kInlineAfterBarrier;
    // Transactions seen after the last frame belong to cycles that happen again.
    txn_progress_ = false;
    txn_dispatch_ = 0;
  }
  active_ = s.idle.programs().active();
  return s.back;
}

std::string TriggerEngine::rewind_to(uint64_t back) {
  const TriggerHistory::Snapshot* best = history_.at_or_before(back);
  if (!best)
    return "no history snapshot at or before cycle " + std::to_string(back) +
           " to return to the trigger hit";
  const auto state = best->state;  // restore() may not keep a reference into the history
  std::string error;
  if (emu_.restore(*state, error)) error = rx_.advance(emu_, back);
  txn_progress_ = false;
  txn_dispatch_ = 0;
  history_.reschedule(emu_.cycle());
  return error;
}

std::vector<int> TriggerEngine::add(TriggerProgram program) {
  settle();
  loaded_history_bytes_ += program.history_bytes();
  auto ids = programs().add(std::move(program));
  size_ += ids.size();
  layout();
  active_ = programs().active();
  return ids;
}

bool TriggerEngine::remove(int id) {
  settle();
  service(nullptr);  // pending hits name triggers by index
  if (!programs().remove(id)) return false;
  --size_;
  active_ = programs().active();
  return true;
}

bool TriggerEngine::set_enabled(int id, bool enabled) {
  if (!programs().set_enabled(id, enabled)) return false;
  active_ = programs().active();
  return true;
}

void TriggerEngine::quiesce() { evaluator_.quiesce(pending_); }

std::vector<TriggerStatus> TriggerEngine::status() { return programs().status(); }

void TriggerEngine::attach(Session& session) {
  detach();
  session_ = &session;
  rx_.set_session(&session);
  actions_.set_session(&session);
  session.add_hook(this);
  session.set_triggers(this);
}

void TriggerEngine::detach() {
  if (session_) {
    session_->remove_hook(this);
    if (session_->triggers() == this) session_->set_triggers(nullptr);
  }
  session_ = nullptr;
  rx_.set_session(nullptr);
  actions_.set_session(nullptr);
}

TriggerEnv TriggerEngine::env() const {
  TriggerEnv env;
  env.emu = &emu_;
  if (session_) env.layer_names = &session_->program().layer_names;
  env.limits = config_.limits;
  env.session_history_bytes = loaded_history_bytes_;
  return env;
}

void TriggerEngine::gather_armed() {
  layout_.gather(emu_, scratch_.get(), emu_.cycle(), txn_progress_, txn_dispatch_);
  txn_progress_ = false;
  txn_dispatch_ = 0;
  programs().set_frame(scratch_.get());
}

void TriggerEngine::arm() {
  settle();
  // Conditions read the frame: fill it from the current state for arming.
  gather_armed();
  if (!armed_ || emu_.cycle() != programs().last_cycle()) {
    arm_all();
    return;
  }
  // Same cycle as last seen: keep running windows, arm only what is new or re-enabled.
  if (programs().arm_new()) plan_history();
}

void TriggerEngine::arm_all() {
  const uint64_t now = emu_.cycle();
  if (evaluator_.threaded()) settle();
  inline_until_ = 0;
  gather_armed();
  programs().arm_all(now);
  armed_ = true;
  history_.clear();
  plan_history();
}

void TriggerEngine::plan_history() {
  const HistoryNeeds needs = programs().history_needs();
  // Without a session (whose checkpoints serve), returning to a barrier hit found by the
  // evaluation thread needs snapshots of the run too.
  const bool rewind = needs.hit_cycle && evaluator_.threaded() && !session_;
  if (!needs.captures && !rewind) {
    history_.disable();
    return;
  }
  const uint64_t pmax = needs.max_pre;
  const uint64_t interval = config_.history_interval
                                ? config_.history_interval
                                : std::max(kMinHistoryInterval, (pmax / 2 + 4095) / 4096 * 4096);
  // One more when evaluating asynchronously: the simulation runs up to a ring of frames ahead
  // of the evaluation (FrameRing::kFrames < kMinHistoryInterval), so a hit is handled a little
  // late.
  const size_t keep =
      static_cast<size_t>((pmax + interval - 1) / interval) + 1 + (evaluator_.threaded() ? 1 : 0);
  history_.plan(emu_, interval, keep);
}

void TriggerEngine::on_txn(const emu::StageTxn& txn) {
  txn_progress_ = true;
  txn_dispatch_ |= layout_.dispatch_bits(txn);
}

bool TriggerEngine::after_cycle(uint64_t cycle) {
  if (history_.due(cycle)) history_.take(emu_, cycle);
  if (!evaluator_.threaded() || cycle <= inline_until_) {
    layout_.gather(emu_, scratch_.get(), cycle, txn_progress_, txn_dispatch_);
    txn_progress_ = false;
    txn_dispatch_ = 0;
    CompiledTriggers& p = evaluator_.inline_access().programs();
    p.load_frame(scratch_.get());
    p.evaluate(cycle, pending_);
    return !pending_.empty() || cycle >= captures_.next_due();
  }
  uint64_t* slot = evaluator_.claim(pending_);
  if (!slot) return true;  // the evaluation thread stopped at a barrier hit
  layout_.gather(emu_, slot, cycle, txn_progress_, txn_dispatch_);
  txn_progress_ = false;
  txn_dispatch_ = 0;
  evaluator_.commit();
  return evaluator_.attention() || cycle >= captures_.next_due();
}

void TriggerEngine::service(std::vector<StopReason>* reasons) {
  CompiledTriggers& p = programs();
  for (const auto& ph : pending_) {
    const size_t before = actions_.hits().size();
    actions_.perform(ph, p.trigger_of(ph));
    if (actions_.hits().size() > before && actions_.hits().back().halted && reasons) {
      const auto& h = actions_.hits().back();
      reasons->push_back({StopKind::Trigger, h.trigger_id,
                          h.trigger + ": " + h.condition + " (" + h.state_path + ")"});
    }
  }
  pending_.clear();
  actions_.service_captures(emu_.cycle(), !armed_);
}

void TriggerEngine::finish_run(emu::RunState state, bool mismatch) {
  if (state != emu::RunState::Ready && armed_) {
    const uint64_t cycle = emu_.cycle();
    settle();  // every cycle evaluated; the evaluator is idle from here on
    CompiledTriggers& p = programs();
    if (cycle != p.last_cycle()) {
      // An emulator that does not hook its final cycle: evaluate it now.
      layout_.gather(emu_, scratch_.get(), cycle, txn_progress_, txn_dispatch_);
      txn_progress_ = false;
      txn_dispatch_ = 0;
      p.load_frame(scratch_.get());
      p.set_symptoms(state, mismatch);
      p.evaluate(cycle, pending_);
    } else if (mismatch) {
      // The checks ran after the final cycle was evaluated: evaluate it again (the frame still
      // holds the final cycle), only for the triggers that read `mismatch` (their windows see
      // the final sample twice).
      p.set_symptoms(state, mismatch);
      p.set_only_mismatch(true);
      p.evaluate(cycle, pending_);
      p.set_only_mismatch(false);
    }
    service(nullptr);
    active_ = p.active();
  }
  actions_.service_captures(emu_.cycle(), true);
}

}  // namespace bud::debugger
