// Latency distributions of served requests (docs/serving.md): count, mean, max and the p50, p95,
// p99 and p99.9 order statistics, computed with Boost.Accumulators.
#pragma once

#include <cstdint>
#include <vector>

namespace bud::load {

struct LatencySummary {
  uint64_t count = 0;
  double mean = 0;
  uint64_t p50 = 0, p95 = 0, p99 = 0, p999 = 0, max = 0;  ///< cycles (p999: p99.9)
};

/// The summary of `latencies` (cycles). A quantile q of n samples is the nearest-rank order
/// statistic X(ceil(q n)), the ceil(q n)-th smallest (Boost's left tail_quantile over a tail
/// cache holding every sample: exact, not an estimate; p99 of 1000 samples is the 990th
/// smallest). Empty: all zero.
LatencySummary summarize(const std::vector<uint64_t>& latencies);

}  // namespace bud::load
