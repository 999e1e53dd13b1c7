// The serving core against queueing theory: batch size 1, no window, Poisson arrivals and a fixed
// service time D is the M/D/1 queue, whose waiting-time distribution is known exactly. The
// simulated sojourn-time p50 and p99 (load::serve, load::summarize) must match it within 2%.
#include <boost/multiprecision/cpp_bin_float.hpp>
#include <catch2/catch.hpp>
#include <climits>
#include <cmath>
#include <cstdio>

#include "load/Arrivals.h"
#include "load/Latency.h"
#include "load/Server.h"

using namespace bud::load;

namespace {

// The sum alternates and its terms reach about exp(2 rho t / D) before they cancel: 50 decimal
// digits keep it exact to well below 1e-12 for t / D up to 60 at rho 0.9 (p99 is near 22).
using Big = boost::multiprecision::cpp_bin_float_50;

/// M/D/1 with D = 1 and arrival rate rho (Erlang 1909; e.g. Franx 2001):
/// P(W <= t) = (1 - rho) sum_{k=0}^{floor t} [rho (k - t)]^k / k! exp(-rho (k - t)).
double md1_wait_cdf(double rho, double t) {
  if (t < 0) return 0;
  Big sum = 0, fact = 1;
  const Big lambda = rho, tt = t;
  for (long k = 0; k <= static_cast<long>(std::floor(t)); ++k) {
    if (k > 0) fact *= k;
    const Big x = lambda * (Big(k) - tt);
    sum += boost::multiprecision::pow(x, k) / fact * boost::multiprecision::exp(-x);
  }
  return static_cast<double>((1 - lambda) * sum);
}

/// The smallest t (in units of D) with P(W <= t) >= q, by bisection (the CDF is non-decreasing,
/// with an atom of 1 - rho at 0).
double md1_wait_quantile(double rho, double q) {
  if (md1_wait_cdf(rho, 0) >= q) return 0;
  double lo = 0, hi = 60;
  for (int i = 0; i < 60; ++i) {
    const double mid = (lo + hi) / 2;
    (md1_wait_cdf(rho, mid) >= q ? hi : lo) = mid;
  }
  return hi;
}

}  // namespace

TEST_CASE("the M/D/1 reference reproduces the atom at zero and the Pollaczek-Khinchine mean",
          "[load][theory]") {
  for (double rho : {0.3, 0.6, 0.9}) {
    CHECK(md1_wait_cdf(rho, 0) == Approx(1 - rho).epsilon(1e-12));
    // E[W] = integral of P(W > t); the tail past 60 D is below 1e-5 even at rho 0.9.
    double mean = 0;
    const double dt = 0.02;
    for (double t = 0; t < 60; t += dt) mean += (1 - md1_wait_cdf(rho, t + dt / 2)) * dt;
    CHECK(mean == Approx(rho / (2 * (1 - rho))).epsilon(1e-3));
  }
}

TEST_CASE("batch 1 with Poisson arrivals and a fixed service time is the M/D/1 queue",
          "[load][theory]") {
  // D = 10,000 cycles at 1 GHz (10 us): arrivals truncated to whole cycles move a sojourn time
  // by under 1e-4 of D.
  constexpr uint64_t kD = 10000;
  ServiceTimes times;
  times.batch_cycles = {kD};
  ServerPolicy policy;
  policy.max_batch = 1;
  policy.window_cycles = 0;
  policy.queue_bound = UINT32_MAX;  // no admission limit: the queue of the theory
  policy.admission = ServerPolicy::Admission::Delay;
  REQUIRE(policy.validate(times).empty());
  std::printf("M/D/1 sojourn time, D = %llu cycles: exact vs simulated (1,000,000 requests)\n"
              "  %4s %10s %10s %10s %10s %8s %8s\n",
              static_cast<unsigned long long>(kD), "rho", "exact p50", "sim p50", "exact p99",
              "sim p99", "err p50", "err p99");
  for (double rho : {0.3, 0.6, 0.9}) {
    ArrivalSpec a;
    a.frequency_mhz = 1000;
    a.rate_per_s = rho * a.frequency_mhz * 1e6 / static_cast<double>(kD);
    a.count = 1000000;
    a.seed = 17;
    REQUIRE(a.validate().empty());
    const ServeResult r = serve(arrivals(a), times, policy);
    REQUIRE(r.completed == a.count);
    std::vector<uint64_t> sojourn;
    sojourn.reserve(r.requests.size());
    for (const auto& o : r.requests) sojourn.push_back(o.latency());
    const LatencySummary s = summarize(sojourn);
    // Sojourn = wait + D.
    const double exact50 = (1 + md1_wait_quantile(rho, 0.50)) * kD;
    const double exact99 = (1 + md1_wait_quantile(rho, 0.99)) * kD;
    const double err50 = static_cast<double>(s.p50) / exact50 - 1;
    const double err99 = static_cast<double>(s.p99) / exact99 - 1;
    std::printf("  %4.1f %10.0f %10llu %10.0f %10llu %+7.2f%% %+7.2f%%\n", rho, exact50,
                static_cast<unsigned long long>(s.p50), exact99,
                static_cast<unsigned long long>(s.p99), 100 * err50, 100 * err99);
    CAPTURE(rho, exact50, s.p50, exact99, s.p99);
    CHECK(std::abs(err50) < 0.02);
    CHECK(std::abs(err99) < 0.02);
    // The mean sojourn time against Pollaczek-Khinchine: D (1 + rho / (2 (1 - rho))).
    CHECK(s.mean == Approx(kD * (1 + rho / (2 * (1 - rho)))).epsilon(0.02));
  }
}
