#include "load/streams/StreamServer.h"

#include <algorithm>
#include <deque>

namespace bud::load {

namespace {

constexpr uint64_t kNever = UINT64_MAX;

/// One stream's queue while serving: the requests admitted and those waiting outside (Delay).
class Lane {
 public:
  Lane(const StreamQueue& in, ServeResult& out, uint32_t max_batch)
      : in_(in), out_(out), queued_at_(in.arrivals.size(), 0) {
    out_.requests.resize(in.arrivals.size());
    out_.batches_by_size.assign(max_batch, 0);
  }

  const StreamQueue& input() const { return in_; }
  uint64_t next_arrival() const {
    return next_ < in_.arrivals.size() ? in_.arrivals[next_] : kNever;
  }
  /// The arrival cycle of the oldest request waiting in the queue (non-empty).
  uint64_t head_arrival() const { return in_.arrivals[queue_.front()]; }
  /// Weighted: NPU cycles received / weight, the start tag of its next batch.
  double credit = 0;

  /// Admits every arrival up to `now`; a stream that was idle resumes at `virtual_time`.
  void admit(uint64_t now, const ServerPolicy& policy, double virtual_time) {
    while (next_ < in_.arrivals.size() && in_.arrivals[next_] <= now) {
      RequestOutcome& o = out_.requests[next_];
      o.arrival = in_.arrivals[next_];
      if (queue_.empty() && outside_.empty()) credit = std::max(credit, virtual_time);
      if (queue_.size() < policy.queue_bound && outside_.empty()) {
        queued_at_[next_] = o.arrival;
        queue_.push_back(next_);
      } else if (policy.admission == ServerPolicy::Admission::Delay) {
        outside_.push_back(next_);
      } else {
        o.dropped = true;
        ++out_.dropped;
      }
      ++next_;
    }
  }

  /// The first cycle from `ready` (the NPU free) at which this stream's batch may start: at
  /// once with a full batch, else when its oldest request's window runs out; kNever if empty.
  uint64_t eligible(uint64_t ready, const ServerPolicy& policy) const {
    if (queue_.empty()) return kNever;
    if (queue_.size() >= policy.max_batch) return ready;
    return std::max(ready, queued_at_[queue_.front()] + policy.window_cycles);
  }

  /// Serves the next batch from `start`; returns its completion.
  uint64_t serve_batch(uint64_t start, const ServerPolicy& policy) {
    const uint32_t b = static_cast<uint32_t>(std::min<size_t>(queue_.size(), policy.max_batch));
    const uint64_t done = start + in_.service->batch(b);
    for (uint32_t i = 0; i < b; ++i) {
      RequestOutcome& o = out_.requests[queue_.front()];
      o.start = start;
      o.done = done;
      o.batch = b;
      queue_.pop_front();
    }
    while (!outside_.empty() && queue_.size() < policy.queue_bound) {
      queued_at_[outside_.front()] = start;
      queue_.push_back(outside_.front());
      outside_.pop_front();
    }
    out_.completed += b;
    ++out_.batches_by_size[b - 1];
    out_.busy_cycles += done - start;
    out_.end_cycle = std::max(out_.end_cycle, done);
    return done;
  }

 private:
  const StreamQueue& in_;
  ServeResult& out_;
  std::deque<size_t> queue_, outside_;
  std::vector<uint64_t> queued_at_;
  size_t next_ = 0;
};

/// Whether lane `a` goes before lane `b` (both eligible) under `policy`; ties to the earlier
/// index are the caller's (it scans in order and keeps the first best).
bool before(const Lane& a, const Lane& b, QueuePolicy policy) {
  if (policy == QueuePolicy::Strict && a.input().priority != b.input().priority)
    return a.input().priority > b.input().priority;
  if (policy == QueuePolicy::Weighted && a.credit != b.credit) return a.credit < b.credit;
  return a.head_arrival() < b.head_arrival();
}

}  // namespace

const char* queue_policy_name(QueuePolicy policy) {
  switch (policy) {
    case QueuePolicy::Fifo:
      return "fifo";
    case QueuePolicy::Strict:
      return "strict";
    case QueuePolicy::Weighted:
      return "weighted";
  }
  return "?";
}

std::optional<QueuePolicy> parse_queue_policy(std::string_view name) {
  for (QueuePolicy p : {QueuePolicy::Fifo, QueuePolicy::Strict, QueuePolicy::Weighted})
    if (name == queue_policy_name(p)) return p;
  return std::nullopt;
}

StreamsResult serve_streams(const std::vector<StreamQueue>& streams, const ServerPolicy& policy,
                            QueuePolicy queue_policy) {
  StreamsResult r;
  r.streams.resize(streams.size());
  std::vector<Lane> lanes;
  lanes.reserve(streams.size());
  for (size_t i = 0; i < streams.size(); ++i)
    lanes.emplace_back(streams[i], r.streams[i], policy.max_batch);
  uint64_t now = 0;
  uint64_t free_at = 0;     // the NPU is busy until then
  double virtual_time = 0;  // Weighted: the start tag of the batch started last
  for (;;) {
    for (Lane& l : lanes) l.admit(now, policy, virtual_time);
    // The earliest cycle any stream's batch may start, and the next arrival of any stream.
    uint64_t start = kNever, next_arrival = kNever;
    for (const Lane& l : lanes) {
      start = std::min(start, l.eligible(std::max(free_at, now), policy));
      next_arrival = std::min(next_arrival, l.next_arrival());
    }
    if (start == kNever && next_arrival == kNever) break;
    if (start == kNever || next_arrival < start) {
      now = std::max(now, next_arrival);  // an arrival comes first: take it and decide again
      continue;
    }
    now = start;
    Lane* pick = nullptr;
    for (Lane& l : lanes)
      if (l.eligible(std::max(free_at, now), policy) == start &&
          (!pick || before(l, *pick, queue_policy)))
        pick = &l;
    const uint64_t done = pick->serve_batch(start, policy);
    virtual_time = pick->credit;
    pick->credit += static_cast<double>(done - start) / pick->input().weight;
    r.busy_cycles += done - start;
    free_at = done;
  }
  for (size_t i = 0; i < streams.size(); ++i) {
    if (!streams[i].arrivals.empty())
      r.streams[i].end_cycle = std::max(r.streams[i].end_cycle, streams[i].arrivals.back());
    r.end_cycle = std::max(r.end_cycle, r.streams[i].end_cycle);
  }
  return r;
}

}  // namespace bud::load
