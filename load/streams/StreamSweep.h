// A load sweep of several request streams served by one NPU (docs/serving.md, "Several
// streams"): at each offered load every stream's seeded arrivals, at its share of the rate, are
// served together (serve_streams) from each stream's RTL-measured batch costs, and each stream
// reports its own p50/p95/p99/p99.9 latency, rejected fraction and SLA verdict.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "load/Arrivals.h"
#include "load/Latency.h"
#include "load/Service.h"
#include "load/streams/StreamServer.h"
#include "load/streams/StreamSpec.h"

namespace bud::load {

struct StreamSweepSpec {
  /// Kind, seed and shape. Stream i draws round(count x its share) requests (at least 1) from
  /// seed + i at its share of each point's rate (a one-stream sweep: exactly `arrivals`).
  ArrivalSpec arrivals;
  ServerPolicy policy;  ///< per stream queue (serve_streams)
  QueuePolicy queue_policy = QueuePolicy::Fifo;
  std::vector<StreamSpec> streams;  ///< SLAs resolved (sla_p99_us final)
  /// Offered loads as fractions of the mix's capacity: max_batch requests per full batch, the
  /// batch time averaged over the streams by share.
  std::vector<double> loads;
  /// Empty when usable, else why; `services[i]` serves streams[i] (all at one clock).
  std::string validate(const std::vector<const Service*>& services) const;
};

/// One stream at one load point.
struct StreamPoint {
  double offered_rps = 0, served_rps = 0;  ///< served: completed / the point's whole time
  uint64_t arrived = 0, completed = 0, dropped = 0;
  double rejected_fraction = 0;  ///< dropped / arrived
  LatencySummary latency;        ///< cycles, of its completed requests
  std::vector<uint64_t> batches_by_size;
  uint64_t busy_cycles = 0;  ///< NPU cycles of its batches
  double service_share = 0;  ///< its part of all streams' busy cycles
  /// Its p99 meets its SLA with nothing dropped and the point not saturated (false without
  /// an SLA).
  bool meets_sla = false;
};

struct StreamsLoadPoint {
  double load = 0, offered_rps = 0, served_rps = 0;
  uint64_t busy_cycles = 0, end_cycle = 0;
  bool saturated = false;  ///< load >= 1: no steady state (as LoadPoint::saturated)
  /// Every stream with an SLA meets it (and at least one has one).
  bool meets_sla = false;
  std::vector<StreamPoint> streams;  ///< in spec order
};

struct StreamSweepResult {
  double capacity_rps = 0;
  std::vector<StreamsLoadPoint> points;  ///< in spec order
  /// The highest-throughput point at which every stream meets its SLA.
  std::optional<size_t> sustained;
};

/// Serves every load point. Deterministic: the same spec and services give the same result.
StreamSweepResult sweep_streams(const std::vector<const Service*>& services,
                                const StreamSweepSpec& spec);

}  // namespace bud::load
