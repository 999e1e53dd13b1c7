#include "load/Server.h"

#include <algorithm>
#include <deque>
#include <optional>

namespace bud::load {

namespace {

__extension__ using u128 = unsigned __int128;

/// The serving timeline's heat: the die's energy integrated cycle by cycle (exactly, in fJ) and
/// the thermal model stepped at every multiple of the window.
class Heat {
 public:
  explicit Heat(const ServingThermal& t) : t_(t), state_(emu::thermal_start(t.config)) {
    state_.temp_mc = state_.peak_mc = t.start_mc;
  }

  /// The NPU idles (or is held) from now to `until`.
  void idle_until(uint64_t until) {
    while (now_ < until) {
      const uint64_t end = std::min(until, next_window());
      const uint64_t n = end - now_;
      energy_ += n * (state_.clamped ? t_.clamped_die_fj_per_cycle : t_.idle_die_fj_per_cycle);
      if (state_.clamped) clamped_ += n;
      advance(end);
    }
  }

  /// Runs a batch of `cycles` service cycles and `fj` on-die energy from now; returns when it
  /// completes (later than now + cycles by the cycles the clamp held it).
  uint64_t run(uint64_t cycles, uint64_t fj) {
    uint64_t done = 0;  // service cycles done
    auto spent = [&](uint64_t d) {  // energy of the first d service cycles (exact at the end)
      return cycles ? static_cast<uint64_t>(static_cast<u128>(fj) * d / cycles) : 0;
    };
    if (cycles == 0) energy_ += fj;
    while (done < cycles) {
      const uint64_t end = next_window();
      if (state_.clamped) {
        energy_ += (end - now_) * t_.clamped_die_fj_per_cycle;
        clamped_ += end - now_;
        advance(end);
        continue;
      }
      const uint64_t n = std::min(end - now_, cycles - done);
      energy_ += spent(done + n) - spent(done);
      done += n;
      advance(now_ + n);
    }
    return now_;
  }

  void finish(ServeResult& r) {
    if (state_.clamped) spans_.back().second = now_;  // still held at the end
    r.clamp_spans = std::move(spans_);
    r.clamp_events = state_.clamp_events;
    r.clamped_cycles = clamped_;
    r.peak_mc = state_.peak_mc;
    r.end_mc = state_.temp_mc;
  }

 private:
  uint64_t next_window() const { return (now_ / t_.config.window_cycles + 1) * t_.config.window_cycles; }
  void advance(uint64_t to) {
    now_ = to;
    if (now_ % t_.config.window_cycles != 0) return;
    const bool was = state_.clamped;
    emu::thermal_window(t_.config, state_, energy_);
    // The clamp engages and releases only at window boundaries.
    if (!was && state_.clamped) spans_.emplace_back(now_, now_);
    if (was && !state_.clamped) spans_.back().second = now_;
  }

  const ServingThermal& t_;
  emu::ThermalState state_;
  uint64_t now_ = 0, energy_ = 0, clamped_ = 0;
  std::vector<std::pair<uint64_t, uint64_t>> spans_;
};

}  // namespace

std::string ServerPolicy::validate(const ServiceTimes& service) const {
  if (service.batch_cycles.empty()) return "no batch service times";
  if (max_batch == 0) return "max batch must be >= 1";
  if (max_batch > service.batch_cycles.size())
    return "max batch " + std::to_string(max_batch) + " has no measured service time (measured up to " +
           std::to_string(service.batch_cycles.size()) + ")";
  if (queue_bound < max_batch) return "queue bound must be >= max batch";
  return {};
}

std::vector<uint64_t> completed_latencies(const ServeResult& r) {
  std::vector<uint64_t> latencies;
  latencies.reserve(r.completed);
  for (const auto& o : r.requests)
    if (!o.dropped) latencies.push_back(o.latency());
  return latencies;
}

ClampSplit split_by_clamp(const ServeResult& r) {
  ClampSplit out;
  const auto& spans = r.clamp_spans;
  for (const auto& o : r.requests) {
    if (o.dropped) continue;
    // The first span ending after the arrival; it overlaps when it starts before the request
    // is done (spans are disjoint and in time order, so ends are sorted).
    auto it = std::upper_bound(spans.begin(), spans.end(), o.arrival,
                               [](uint64_t t, const auto& s) { return t < s.second; });
    const bool overlaps = it != spans.end() && it->first < o.done;
    (overlaps ? out.overlapping : out.clear).push_back(o.latency());
  }
  return out;
}

ServeResult serve(const std::vector<uint64_t>& arrivals, const ServiceTimes& service,
                  const ServerPolicy& policy, const ServingThermal* thermal) {
  ServeResult r;
  std::optional<Heat> heat;
  if (thermal) heat.emplace(*thermal);
  r.requests.resize(arrivals.size());
  r.batches_by_size.assign(policy.max_batch, 0);
  std::deque<size_t> queue;    // admitted, waiting: request index
  std::deque<size_t> outside;  // Delay: arrived at a full queue, waiting for a place
  std::vector<uint64_t> queued_at(arrivals.size(), 0);
  size_t next = 0;            // next arrival to process
  uint64_t now = 0;
  uint64_t free_at = 0;       // the NPU is busy until then
  auto admit_outside = [&](uint64_t t) {
    while (!outside.empty() && queue.size() < policy.queue_bound) {
      queued_at[outside.front()] = t;
      queue.push_back(outside.front());
      outside.pop_front();
    }
  };
  for (;;) {
    // Arrivals up to `now` join the queue (or are dropped / wait outside).
    while (next < arrivals.size() && arrivals[next] <= now) {
      RequestOutcome& o = r.requests[next];
      o.arrival = arrivals[next];
      if (queue.size() < policy.queue_bound && outside.empty()) {
        queued_at[next] = arrivals[next];
        queue.push_back(next);
      } else if (policy.admission == ServerPolicy::Admission::Delay) {
        outside.push_back(next);
      } else {
        o.dropped = true;
        ++r.dropped;
      }
      ++next;
    }
    if (queue.empty() && next == arrivals.size()) break;
    // When can a batch start? The NPU must be free; then a full batch starts at once, a partial
    // one when the oldest request's window runs out (the server cannot know whether more come).
    uint64_t start = UINT64_MAX;
    if (!queue.empty()) {
      const uint64_t ready = std::max(free_at, now);
      if (queue.size() >= policy.max_batch)
        start = ready;
      else
        start = std::max(ready, queued_at[queue.front()] + policy.window_cycles);
    }
    const uint64_t next_arrival = next < arrivals.size() ? arrivals[next] : UINT64_MAX;
    if (start == UINT64_MAX || next_arrival < start) {
      now = std::max(now, next_arrival);  // an arrival comes first: take it and decide again
      continue;
    }
    now = start;
    const uint32_t b = static_cast<uint32_t>(std::min<size_t>(queue.size(), policy.max_batch));
    uint64_t done = start + service.batch(b);
    if (heat) {
      heat->idle_until(start);
      done = heat->run(service.batch(b), thermal->batch_die_fj[b - 1]);
    }
    for (uint32_t i = 0; i < b; ++i) {
      RequestOutcome& o = r.requests[queue.front()];
      o.start = start;
      o.done = done;
      o.batch = b;
      queue.pop_front();
    }
    admit_outside(start);
    r.completed += b;
    ++r.batches_by_size[b - 1];
    r.busy_cycles += done - start;
    r.end_cycle = std::max(r.end_cycle, done);
    free_at = done;
  }
  if (!arrivals.empty()) r.end_cycle = std::max(r.end_cycle, arrivals.back());
  if (heat) {
    heat->idle_until(r.end_cycle);
    heat->finish(r);
  }
  return r;
}

}  // namespace bud::load
