#include "debugger/bisect/GoldenCheck.h"

#include "debugger/bisect/Bisector.h"
#include "debugger/bisect/DivergenceElement.h"

namespace bud::debugger {

GoldenCheck::GoldenCheck(const run::PreparedRun& prepared, Session& session)
    : prepared_(prepared), session_(session), trace_(GoldenTrace::build(prepared)) {
  // The session may start mid-run (a packet's checkpoint): resync finds what came before.
  resync();
}

bool GoldenCheck::in_sync() const {
  const auto& emu = session_.emu();
  if (emu.cycle() != seen_cycle_) return false;
  for (int s = 0; s < emu::kNumStages; ++s)
    if (emu.stage_digest(static_cast<emu::Stage>(s)) != seen_[s]) return false;
  return true;
}

void GoldenCheck::arm() {
  if (!in_sync()) resync();
}

bool GoldenCheck::after_cycle(uint64_t) { return pending_ && break_; }

void GoldenCheck::on_txn(const emu::StageTxn& t) {
  seen_[static_cast<int>(t.stage)].add(t);
  const size_t before = checker_->divergence_count();
  checker_->on_txn(t);
  if (checker_->divergence_count() != before) pending_ = true;
}

std::optional<uint64_t> GoldenCheck::settle() {
  seen_cycle_ = session_.emu().cycle();
  return std::nullopt;
}

void GoldenCheck::stop_reasons(std::vector<StopReason>& out) {
  // A trigger hit made the session travel back after settle(): the checker saw the future.
  if (!in_sync()) resync();
  if (pending_) {
    pending_ = false;
    const auto& found = checker_->divergences();
    if (break_ && reported_ < found.size()) out.push_back({StopKind::Mismatch, 0, render(found[reported_])});
    reported_ = found.size();
  }
  if (session_.emu().state() == emu::RunState::Finished && !finished_) finish_run(break_ ? &out : nullptr);
}

void GoldenCheck::finish_run(std::vector<StopReason>* out) {
  finished_ = true;
  checker_->finish(session_.emu().cycle());
  const auto& found = checker_->divergences();
  if (out && reported_ < found.size()) out->push_back({StopKind::Mismatch, 0, render(found[reported_])});
  reported_ = found.size();
  result_failures_ = run::check_results(prepared_, session_.emu());
  if (out && !result_failures_.empty() && found.empty())
    out->push_back({StopKind::Mismatch, 0,
                    "result differs from the golden model at cycle " +
                        std::to_string(session_.emu().cycle()) + ": " + result_failures_.front()});
}

void GoldenCheck::resync() {
  auto& emu = session_.emu();
  const uint64_t target = emu.cycle();
  auto digests_now = [&] {
    std::array<emu::StageDigest, emu::kNumStages> d{};
    for (int s = 0; s < emu::kNumStages; ++s) d[s] = emu.stage_digest(static_cast<emu::Stage>(s));
    return d;
  };
  // A checker from here, if everything produced so far is exactly a golden prefix (the checker
  // runs the golden model up to here to settle commands caught mid-way).
  auto start_here = [&] {
    const auto d = digests_now();
    for (int s = 0; s < emu::kNumStages; ++s)
      if (!trace_.digest_consistent(static_cast<emu::Stage>(s), d[s])) return false;
    checker_ = std::make_unique<TxnChecker>(trace_, d);
    seen_ = d;
    return checker_->start_exact();
  };
  result_failures_.clear();
  finished_ = false;
  pending_ = false;
  if (!start_here()) {
    // Something before this cycle differs (or a command is half done with reordered memory
    // traffic): replay from the latest checkpoint that is a clean golden prefix, checking.
    std::vector<uint8_t> undo;
    emu.save(undo);
    auto starts = session_.timeline().checkpoint_cycles_before(target + 1);
    bool found = false;
    for (auto it = starts.rbegin(); it != starts.rend() && !found; ++it) {
      std::string e;
      if (!session_.timeline().restore_at_or_before(*it, e)) continue;
      found = start_here();
    }
    if (!found) {
      // No checkpoint at reset (cannot happen with a Timeline): check from here on.
      std::string ignored;
      emu.restore(undo, ignored);
      const auto d = digests_now();
      checker_ = std::make_unique<TxnChecker>(trace_, d);
      seen_ = d;
    } else {
      // Only the checker watches the re-execution.
      drive::HookParticipant watch(nullptr, this);
      session_.timeline().run_to(target, session_.interventions(), &watch);
    }
  }
  reported_ = checker_->divergence_count();
  pending_ = false;
  seen_cycle_ = emu.cycle();
  if (emu.state() == emu::RunState::Finished) finish_run(nullptr);
}

std::string GoldenCheck::render(const Divergence& d) const { return render_divergence(d, prepared_); }

std::vector<StageCheckStatus> GoldenCheck::status() {
  if (!in_sync()) resync();
  std::vector<StageCheckStatus> v;
  for (int s = 0; s < emu::kNumStages; ++s) {
    StageCheckStatus st;
    st.stage = static_cast<emu::Stage>(s);
    st.checked = seen_[s].count;
    if (auto d = checker_->first_of(static_cast<emu::Stage>(s))) {
      st.diverged = true;
      st.first = render(*d);
    }
    v.push_back(std::move(st));
  }
  StageCheckStatus res;
  res.final = finished_;
  res.diverged = !result_failures_.empty();
  if (res.diverged) res.first = result_failures_.front();
  v.push_back(std::move(res));
  return v;
}

}  // namespace bud::debugger
