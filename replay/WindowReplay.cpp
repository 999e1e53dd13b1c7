#include "replay/WindowReplay.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

namespace bud::replay {

namespace {

// The windows a replay of `plan` passes through, in order: those starting at or after its start.
std::vector<const pb::Window*> windows_from_start(const ReplayPlan& plan) {
  std::vector<const pb::Window*> out;
  for (const auto& w : plan.packet().windows)
    if (w.start_cycle() >= plan.start()) out.push_back(&w);
  return out;
}

// One window's verification, as the worker that ran it left it.
struct WindowRun {
  bool ran = false;           ///< ran to its end, or (tail) to the end of the replay
  bool setup_failed = false;  ///< its emulator, checkpoint or interventions could not be set up
  bool tail = false;          ///< the replay ends in this window's run (kept for conclude())
  Checks checks;
  std::unique_ptr<emu::Emulator> emu;  ///< kept only for a tail
  drive::DriveStop driven;
};

// Halts a window's run once an earlier window is known to end the replay: its result would be
// thrown away.
class Abandon final : public drive::Participant {
 public:
  Abandon(const std::atomic<size_t>& tail, size_t index) : tail_(tail), index_(index) {}
  drive::PauseAction on_pause(uint64_t) override {
    abandoned_ = tail_.load(std::memory_order_relaxed) < index_;
    return abandoned_ ? drive::PauseAction::Halt : drive::PauseAction::Continue;
  }
  bool abandoned() const { return abandoned_; }

 private:
  const std::atomic<size_t>& tail_;
  size_t index_;
  bool abandoned_ = false;
};

void lower_to(std::atomic<size_t>& tail, size_t index) {
  size_t seen = tail.load();
  while (index < seen && !tail.compare_exchange_weak(seen, index)) {
  }
}

// Verifies window `i` of `windows` from its checkpoint; the last window, and a window that
// diverges or in which the run stops, go on to the end of the replay as the serial replay would.
void run_window(const ReplayPlan& plan, const std::vector<const pb::Window*>& windows, size_t i,
                std::atomic<size_t>& tail, WindowRun& r) {
  const uint64_t from = windows[i]->start_cycle();
  const bool last = i + 1 == windows.size();
  std::string error;
  auto emu = plan.make_emulator(error);
  std::optional<std::vector<drive::Intervention>> log;
  if (emu && plan.restore(*emu, from).empty()) log = plan.interventions(from, *emu, error);
  if (!log) {
    r.setup_failed = true;
    lower_to(tail, i);
    return;
  }
  ReplayVerifier verifier(plan, *emu, r.checks);
  drive::InterventionActor actor(*emu, *log);
  Abandon abandon(tail, i);
  drive::Driver driver(*emu);
  driver.add(actor);
  driver.add(verifier);
  driver.add(abandon);
  const uint64_t k = plan.digest_interval();
  r.driven = driver.run_until(last ? plan.limit() : windows[i]->end_cycle(), k);
  if (abandon.abandoned()) return;
  r.tail = last || r.checks.divergence || emu->state() != emu::RunState::Ready;
  if (r.tail && !last) {
    lower_to(tail, i);
    r.driven = driver.run_until(plan.limit(), k);
  }
  r.ran = true;
  if (r.tail) r.emu = std::move(emu);
}

}  // namespace

bool window_parallel(const ReplayPlan& plan) {
  if (!plan.same_revision()) return false;
  const auto windows = windows_from_start(plan);
  if (windows.size() < 2 || windows.front()->start_cycle() != plan.start()) return false;
  const Packet& p = plan.packet();
  for (size_t i = 0; i < windows.size(); ++i) {
    const uint64_t from = windows[i]->start_cycle();
    const auto cp = p.checkpoint_at_or_before(from);
    if (!cp || p.checkpoints[*cp].cycle() != from) return false;
    // The serial replay pauses at multiples of the digest interval: a window must end at one
    // for its run to check exactly what the serial replay checks there.
    if (i + 1 < windows.size() && (windows[i]->end_cycle() % plan.digest_interval() != 0 ||
                                   windows[i]->end_cycle() != windows[i + 1]->start_cycle()))
      return false;
  }
  return true;
}

ReplayOutcome replay_windows(const ReplayPlan& plan, unsigned jobs, ReplayOutcome o) {
  const ReplayOutcome planned = o;  // for the serial replay, should one be needed
  const auto windows = windows_from_start(plan);
  std::vector<WindowRun> runs(windows.size());
  // The lowest window known to end the replay; windows after it are not started, or abandoned.
  std::atomic<size_t> tail{windows.size()};
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < windows.size(); i = next++) {
      if (i > tail.load()) continue;
      run_window(plan, windows, i, tail, runs[i]);
    }
  };
  const unsigned threads = std::max(1u, std::min<unsigned>(jobs, windows.size()));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();

  // In window order, as the serial replay met them: counts add up to the window that ends it.
  for (auto& r : runs) {
    if (r.setup_failed) return replay_serial(plan, planned);
    if (!r.ran) break;  // unreachable: every window before the tail runs
    o.digests_checked += r.checks.digests;
    o.windows_checked += r.checks.windows;
    if (!r.tail) continue;
    o.start_cycle = plan.start();
    o.divergence = r.checks.divergence;
    plan.conclude(*r.emu, r.driven, o);
    return o;
  }
  return replay_serial(plan, planned);
}

}  // namespace bud::replay
