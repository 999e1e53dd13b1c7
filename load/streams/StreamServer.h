// Several request streams served by one NPU (docs/serving.md, "Several streams"): a bounded
// queue per stream with its own admission control, batches that only merge requests of one
// stream, and a queue policy that picks whose batch starts when the NPU is free: first come
// first served, strict priority or weighted fair. A discrete-event replay in integer cycles, as
// load::serve is for one stream (and, for one stream, the same outcomes cycle for cycle).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "load/Server.h"

namespace bud::load {

/// Which stream's batch starts when the NPU can start one (non-preemptive: a running batch
/// always completes). Among the streams *eligible* at that cycle (a full batch waits, or the
/// oldest waiting request has waited out the window):
/// - Fifo: the stream whose oldest waiting request arrived first;
/// - Strict: the highest priority; equal priorities by Fifo;
/// - Weighted: the least NPU time received so far divided by its weight (start-time fair
///   queueing: a stream that was idle resumes at the current virtual time, so it cannot bank
///   credit while idle); equal by Fifo.
/// Remaining ties go to the stream listed first.
enum class QueuePolicy : uint8_t { Fifo, Strict, Weighted };
/// "fifo", "strict", "weighted".
const char* queue_policy_name(QueuePolicy policy);
/// The policy named `name` (as queue_policy_name renders it), or none.
std::optional<QueuePolicy> parse_queue_policy(std::string_view name);

/// One stream's input to serve_streams.
struct StreamQueue {
  const ServiceTimes* service = nullptr;  ///< its workload's batch costs (outlives the call)
  std::vector<uint64_t> arrivals;         ///< non-decreasing cycles
  uint32_t priority = 1;                  ///< Strict: higher is served first
  uint32_t weight = 1;                    ///< Weighted: its share of the NPU's time, >= 1
};

struct StreamsResult {
  /// Per stream, in input order: its requests (in arrival order), its batches by size, the NPU
  /// cycles its batches took, its last completion (or arrival), completed and dropped.
  std::vector<ServeResult> streams;
  uint64_t busy_cycles = 0;  ///< all streams' batches
  uint64_t end_cycle = 0;    ///< the last completion (or arrival) of any stream
};

/// Serves every stream on one NPU. `policy` applies to each stream's queue on its own:
/// max_batch and window_cycles per batch, queue_bound and admission per stream queue (a request
/// that finds its stream's queue full is dropped or waits outside it, first come first served).
/// No thermal model. Deterministic: ties broken by stream order, integer cycles throughout.
StreamsResult serve_streams(const std::vector<StreamQueue>& streams, const ServerPolicy& policy,
                            QueuePolicy queue_policy);

}  // namespace bud::load
