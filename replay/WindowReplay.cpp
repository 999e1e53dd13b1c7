#include "replay/WindowReplay.h"

#include <algorithm>
#include <atomic>
#include <map>
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
  // The golden check of a prefix watches every transaction from the start: one run.
  if (!plan.same_revision() || plan.prefix_checked()) return false;
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

namespace {

// Runs windows [first, last) of `windows`, `jobs` at a time, into runs[first..last).
void run_windows(const ReplayPlan& plan, const std::vector<const pb::Window*>& windows,
                 size_t first, size_t last, unsigned jobs, std::vector<WindowRun>& runs) {
  // The lowest window known to end the replay; windows after it are not started, or abandoned.
  std::atomic<size_t> tail{windows.size()};
  std::atomic<size_t> next{first};
  auto worker = [&] {
    for (size_t i = next++; i < last; i = next++) {
      if (i > tail.load()) continue;
      run_window(plan, windows, i, tail, runs[i]);
    }
  };
  const unsigned threads = std::max(1u, std::min<unsigned>(jobs, last - first));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
}

}  // namespace

ReplayOutcome replay_windows(const ReplayPlan& plan, unsigned jobs, ReplayOutcome o) {
  const ReplayOutcome planned = o;  // for the serial replay, should one be needed
  const auto windows = windows_from_start(plan);
  std::vector<WindowRun> runs(windows.size());
  run_windows(plan, windows, 0, windows.size(), jobs, runs);

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
    add_check_counts(o);
    return o;
  }
  return replay_serial(plan, planned);
}

std::pair<size_t, size_t> window_shard_range(size_t windows, const Shard& shard) {
  return {windows * shard.index / shard.total, windows * (shard.index + 1) / shard.total};
}

WindowShardResult replay_window_shard(const Packet& packet, const ReplayOptions& options,
                                      const Shard& shard, unsigned jobs) {
  WindowShardResult out;
  out.packet = packet.name;
  ReplayOutcome o = unreplayed_outcome(packet);
  auto plan = ReplayPlan::make(packet, options, o);
  // A packet that cannot be replayed, or cannot be split into windows, is one unit: the shard
  // that holds window 0 of 1 replays it serially (or says why it cannot).
  if (!plan || !window_parallel(*plan)) {
    out.windows = 1;
    if (const auto [first, last] = window_shard_range(1, shard); first < last)
      out.results.push_back({0, 0, 0, true, true, plan ? replay_serial(*plan, o) : o});
    return out;
  }
  const auto windows = windows_from_start(*plan);
  out.windows = static_cast<uint32_t>(windows.size());
  const auto [first, last] = window_shard_range(windows.size(), shard);
  std::vector<WindowRun> runs(windows.size());
  run_windows(*plan, windows, first, last, jobs, runs);
  for (size_t i = first; i < last; ++i) {
    auto& r = runs[i];
    if (r.setup_failed) {
      // As replay_windows(): the serial replay, the whole replay's outcome.
      out.results.push_back({static_cast<uint32_t>(i), 0, 0, true, true, replay_serial(*plan, o)});
      return out;
    }
    WindowResult w{
        static_cast<uint32_t>(i), r.checks.digests, r.checks.windows, r.tail, false, std::nullopt};
    if (r.tail) {
      ReplayOutcome t = o;
      t.digests_checked = r.checks.digests;
      t.windows_checked = r.checks.windows;
      t.start_cycle = plan->start();
      t.divergence = r.checks.divergence;
      plan->conclude(*r.emu, r.driven, t);
      w.outcome = std::move(t);
    }
    out.results.push_back(std::move(w));
    if (r.tail) break;  // later windows of this shard were abandoned: the replay ends here
  }
  return out;
}

std::optional<ReplayOutcome> merge_window_shards(
    const std::vector<const WindowShardResult*>& shards, std::string& error) {
  if (shards.empty()) {
    error = "no window shards";
    return std::nullopt;
  }
  const uint32_t n = shards.front()->windows;
  std::map<uint32_t, const WindowResult*> by_window;
  for (const auto* s : shards) {
    if (s->windows != n) {
      error = "the shards split the packet into different numbers of windows (" +
              std::to_string(n) + " and " + std::to_string(s->windows) + ")";
      return std::nullopt;
    }
    for (const auto& w : s->results) {
      if (w.index >= n || !by_window.emplace(w.index, &w).second) {
        error = "window " + std::to_string(w.index) + " is reported twice or out of range";
        return std::nullopt;
      }
    }
  }
  // In window order, as the serial replay meets them: counts add up to the window that ends it.
  uint64_t digests = 0, checked = 0;
  for (uint32_t i = 0; i < n; ++i) {
    auto it = by_window.find(i);
    if (it == by_window.end()) {
      error = "window " + std::to_string(i) + " of " + std::to_string(n) +
              " has no result (its shard is missing or incomplete)";
      return std::nullopt;
    }
    const WindowResult& w = *it->second;
    if (!w.tail) {
      digests += w.digests;
      checked += w.windows;
      continue;
    }
    if (!w.outcome) {
      error = "window " + std::to_string(i) + " ends the replay but carries no outcome";
      return std::nullopt;
    }
    ReplayOutcome o = *w.outcome;
    if (!w.whole) {
      o.digests_checked += digests;
      o.windows_checked += checked;
      add_check_counts(o);
    }
    return o;
  }
  error = "no window ends the replay (the last window's shard is missing)";
  return std::nullopt;
}

}  // namespace bud::replay
