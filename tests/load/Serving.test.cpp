#include <catch2/catch.hpp>
#include <cmath>
#include <numeric>

#include "load/Arrivals.h"
#include "load/Latency.h"
#include "load/Server.h"

using namespace bud::load;

TEST_CASE("Poisson arrivals: frozen by the seed, at the offered rate", "[load][arrivals]") {
  ArrivalSpec s;
  s.rate_per_s = 20000;  // one per 50,000 cycles at 1 GHz
  s.count = 100000;
  s.seed = 7;
  REQUIRE(s.validate().empty());
  const auto a = arrivals(s);
  REQUIRE(a.size() == 100000);
  CHECK(std::is_sorted(a.begin(), a.end()));
  CHECK(a == arrivals(s));
  s.seed = 8;
  CHECK(a != arrivals(s));
  // 100k exponential gaps: the mean is within 1% (its standard error is 0.3%).
  CHECK(static_cast<double>(a.back()) / 100000 == Approx(50000).epsilon(0.01));
}

TEST_CASE("bursty arrivals keep the mean rate but bunch up", "[load][arrivals]") {
  ArrivalSpec s;
  s.kind = ArrivalSpec::Kind::Bursty;
  s.rate_per_s = 20000;
  s.count = 200000;
  s.burst_factor = 4;
  s.burst_fraction = 0.2;
  s.burst_period_us = 1000;
  REQUIRE(s.validate().empty());
  const auto a = arrivals(s);
  CHECK(std::is_sorted(a.begin(), a.end()));
  CHECK(static_cast<double>(a.back()) / 200000 == Approx(50000).epsilon(0.05));
  // Counts per 100 us window: a Poisson stream has variance = mean (dispersion 1); bursts make
  // it much larger.
  auto dispersion = [](const std::vector<uint64_t>& t) {
    std::vector<double> counts(t.back() / 100000 + 1, 0);
    for (uint64_t x : t) counts[x / 100000] += 1;
    const double mean = std::accumulate(counts.begin(), counts.end(), 0.0) / counts.size();
    double var = 0;
    for (double c : counts) var += (c - mean) * (c - mean);
    return var / counts.size() / mean;
  };
  ArrivalSpec p = s;
  p.kind = ArrivalSpec::Kind::Poisson;
  CHECK(dispersion(arrivals(p)) == Approx(1).epsilon(0.15));
  CHECK(dispersion(a) > 3);
  s.burst_fraction = 0.3;  // 4 x 0.3 >= 1: the quiet rate would be negative
  CHECK(!s.validate().empty());
}

TEST_CASE("diurnal arrivals follow the day curve: mean rate and peak/trough ratio",
          "[load][arrivals]") {
  ArrivalSpec s;
  s.kind = ArrivalSpec::Kind::Diurnal;
  s.rate_per_s = 20000;  // one per 50,000 cycles at 1 GHz on average
  s.count = 200000;
  s.diurnal_amplitude = 0.5;
  s.diurnal_period_us = 10000;  // 200 requests per period: 1,000 periods
  REQUIRE(s.validate().empty());
  const auto a = arrivals(s);
  REQUIRE(a.size() == 200000);
  CHECK(std::is_sorted(a.begin(), a.end()));
  CHECK(a == arrivals(s));
  // Whole periods only: the sine averages to 0 over each, so the mean rate is rate_per_s.
  const uint64_t period = 10000000;  // cycles
  const uint64_t periods = a.back() / period;
  double in_whole = 0, peak = 0, trough = 0;
  for (uint64_t t : a) {
    if (t >= periods * period) continue;
    in_whole += 1;
    const uint64_t phase = t % period;  // the peak quarter is centred on P/4, the trough on 3P/4
    if (phase >= period / 8 && phase < 3 * period / 8) peak += 1;
    if (phase >= 5 * period / 8 && phase < 7 * period / 8) trough += 1;
  }
  CHECK(in_whole / static_cast<double>(periods * period) * 1e9 == Approx(20000).epsilon(0.01));
  // Expected mass of a quarter around the peak: P/4 + A P sqrt(2) / (2 pi), and minus around
  // the trough, so the ratio is (1 + c A) / (1 - c A) with c = 2 sqrt(2) / pi (2.64 at A = 0.5).
  // ~70k and ~27k samples: the ratio's standard error is under 1%.
  const double c = 2 * std::sqrt(2.0) / M_PI;
  CHECK(peak / trough == Approx((1 + c * 0.5) / (1 - c * 0.5)).epsilon(0.03));
  s.diurnal_amplitude = 0;  // a flat curve: no modulation
  const auto flat = arrivals(s);
  CHECK(static_cast<double>(flat.back()) / 200000 == Approx(50000).epsilon(0.01));
  s.diurnal_amplitude = 1;
  CHECK(s.validate() == "diurnal amplitude must be in [0, 1)");
  s.diurnal_amplitude = 0.5;
  s.diurnal_period_us = 0;
  CHECK(s.validate() == "diurnal period must be > 0 us");
}

TEST_CASE("the server batches, waits out its window and serves in order", "[load][serve]") {
  ServiceTimes t;
  t.batch_cycles = {100, 150};
  ServerPolicy p;
  p.max_batch = 2;
  p.window_cycles = 50;
  p.queue_bound = 4;
  REQUIRE(p.validate(t).empty());
  const ServeResult r = serve({0, 10, 20, 1000}, t, p);
  // 0 and 10 fill a batch at 10 (done 160); 20 waits for the NPU (its window ends at 70) and
  // starts alone at 160; 1000 waits out its window alone: 1050 -> 1150.
  REQUIRE(r.requests.size() == 4);
  CHECK(r.requests[0].latency() == 160);
  CHECK(r.requests[1].latency() == 150);
  CHECK(r.requests[2].start == 160);
  CHECK(r.requests[2].latency() == 240);
  CHECK(r.requests[3].start == 1050);
  CHECK(r.requests[3].latency() == 150);
  CHECK(r.batches_by_size == std::vector<uint64_t>{2, 1});
  CHECK(r.busy_cycles == 150 + 100 + 100);
  CHECK(r.completed == 4);
  CHECK(r.end_cycle == 1150);
}

TEST_CASE("admission control drops or delays at a full queue", "[load][serve]") {
  ServiceTimes t;
  t.batch_cycles = {100};
  t.host_per_batch = 5;
  t.host_per_request = 3;
  ServerPolicy p;
  p.max_batch = 1;
  p.queue_bound = 1;
  const ServeResult drop = serve({0, 1, 2}, t, p);
  CHECK(drop.completed == 2);
  CHECK(drop.dropped == 1);
  CHECK(drop.requests[2].dropped);
  CHECK(drop.requests[1].start == 108);  // 100 + 5 + 3 per batch of one
  p.admission = ServerPolicy::Admission::Delay;
  const ServeResult delay = serve({0, 1, 2}, t, p);
  CHECK(delay.completed == 3);
  CHECK(delay.dropped == 0);
  CHECK(delay.requests[2].start == 216);
  CHECK(delay.requests[2].latency() == 322);
  p.max_batch = 2;
  CHECK(p.validate(t).find("no measured service time") != std::string::npos);
}

TEST_CASE("latency summaries are exact order statistics", "[load][latency]") {
  std::vector<uint64_t> l(1000);
  std::iota(l.begin(), l.end(), 1);
  std::reverse(l.begin(), l.end());
  const LatencySummary s = summarize(l);
  CHECK(s.count == 1000);
  CHECK(s.mean == Approx(500.5));
  CHECK(s.p50 == 500);  // the 500th smallest
  CHECK(s.p95 == 950);
  CHECK(s.p99 == 990);
  // 50 samples: ceil(0.99 x 50) = 50, the largest.
  CHECK(summarize(std::vector<uint64_t>(l.end() - 50, l.end())).p99 == 50);
  CHECK(s.max == 1000);
  const LatencySummary one = summarize({42});
  CHECK(one.p50 == 42);
  CHECK(one.p99 == 42);
  CHECK(summarize({}).count == 0);
}
