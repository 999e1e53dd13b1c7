#include "load/Server.h"

#include <algorithm>
#include <deque>

namespace bud::load {

std::string ServerPolicy::validate(const ServiceTimes& service) const {
  if (service.batch_cycles.empty()) return "no batch service times";
  if (max_batch == 0) return "max batch must be >= 1";
  if (max_batch > service.batch_cycles.size())
    return "max batch " + std::to_string(max_batch) + " has no measured service time (measured up to " +
           std::to_string(service.batch_cycles.size()) + ")";
  if (queue_bound < max_batch) return "queue bound must be >= max batch";
  return {};
}

ServeResult serve(const std::vector<uint64_t>& arrivals, const ServiceTimes& service,
                  const ServerPolicy& policy) {
  ServeResult r;
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
    const uint64_t done = start + service.batch(b);
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
  return r;
}

}  // namespace bud::load
