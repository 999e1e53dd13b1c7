// One NPU serving a request stream (docs/serving.md): a bounded queue with admission control,
// micro-batching, and batch service times measured on the RTL. A discrete-event replay of the
// arrivals against those service times: deterministic, integer cycles.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bud::load {

/// What serving a batch costs, in NPU cycles.
struct ServiceTimes {
  /// NPU cycles of a batch of b requests at index b - 1 (from RTL runs); its size is the largest
  /// batch the server forms.
  std::vector<uint64_t> batch_cycles;
  uint64_t host_per_batch = 0;    ///< driver work, doorbell and interrupt per batch
  uint64_t host_per_request = 0;  ///< input and output copies per request
  /// Cycles from the start of a batch to its completion.
  uint64_t batch(uint32_t b) const {
    return host_per_batch + host_per_request * b + batch_cycles[b - 1];
  }
};

struct ServerPolicy {
  enum class Admission : uint8_t { Drop, Delay };
  uint32_t max_batch = 1;       ///< <= ServiceTimes::batch_cycles.size()
  uint64_t window_cycles = 0;   ///< micro-batching: wait up to this long for a full batch
  uint32_t queue_bound = 64;    ///< requests waiting in the queue
  Admission admission = Admission::Drop;  ///< a request arriving at a full queue
  std::string validate(const ServiceTimes& service) const;
};

struct RequestOutcome {
  uint64_t arrival = 0;
  uint64_t start = 0;  ///< its batch started
  uint64_t done = 0;   ///< its batch completed
  uint32_t batch = 0;  ///< its batch's size (0: dropped)
  bool dropped = false;
  uint64_t latency() const { return done - arrival; }
};

struct ServeResult {
  std::vector<RequestOutcome> requests;  ///< in arrival order
  std::vector<uint64_t> batches_by_size;  ///< index b - 1: batches of b requests
  uint64_t busy_cycles = 0;   ///< serving a batch
  uint64_t end_cycle = 0;     ///< the last completion (or arrival)
  uint64_t completed = 0, dropped = 0;
};

/// Serves `arrivals` (non-decreasing cycles). A batch starts when the NPU is free and either
/// max_batch requests wait or the oldest waiting one has waited window_cycles; it takes every
/// waiting request up to max_batch. A request that finds queue_bound requests waiting is
/// dropped, or (Delay) waits outside the queue, first come first served, for a place.
ServeResult serve(const std::vector<uint64_t>& arrivals, const ServiceTimes& service,
                  const ServerPolicy& policy);

}  // namespace bud::load
