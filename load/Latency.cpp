#include "load/Latency.h"

#include <boost/accumulators/accumulators.hpp>
#include <boost/accumulators/statistics/count.hpp>
#include <boost/accumulators/statistics/max.hpp>
#include <boost/accumulators/statistics/mean.hpp>
#include <boost/accumulators/statistics/stats.hpp>
#include <boost/accumulators/statistics/tail_quantile.hpp>
#include <cmath>

namespace bud::load {

namespace acc = boost::accumulators;

LatencySummary summarize(const std::vector<uint64_t>& latencies) {
  LatencySummary s;
  if (latencies.empty()) return s;
  using Set = acc::accumulator_set<
      double, acc::stats<acc::tag::count, acc::tag::mean, acc::tag::max,
                         acc::tag::tail_quantile<acc::left>>>;
  // A tail holding every sample makes each quantile an exact order statistic.
  Set set(acc::tag::tail<acc::left>::cache_size = latencies.size() + 1);
  for (uint64_t l : latencies) set(static_cast<double>(l));
  s.count = acc::count(set);
  s.mean = acc::mean(set);
  s.max = static_cast<uint64_t>(acc::max(set));
  auto q = [&](double p) {
    const double v = acc::quantile(set, acc::quantile_probability = p);
    // Boost returns NaN when ceil(q n) = n (it wants an index below the cache size): the order
    // statistic asked for is then the largest sample.
    return std::isnan(v) ? s.max : static_cast<uint64_t>(v);
  };
  s.p50 = q(0.50);
  s.p95 = q(0.95);
  s.p99 = q(0.99);
  s.p999 = q(0.999);
  return s;
}

}  // namespace bud::load
