// The thermal model over the serving timeline (docs/serving.md, "Thermal clamp under load"): no
// clamp below the trip point, a clamp that stretches batches by exactly the cycles it held them,
// and, for a server busy without pause, the clamped share the lumped RC model predicts.
#include <catch2/catch.hpp>
#include <cmath>

#include "load/Latency.h"
#include "load/Server.h"

using namespace bud;

namespace {

// 1 GHz, tau = R x C = 1e6 m°C/W x 1 nJ/°C = 1 us, windows of 10 cycles; ambient 0 °C.
load::ServingThermal thermal(int64_t trip_mc, int64_t hysteresis_mc) {
  load::ServingThermal t;
  t.config.enabled = true;
  t.config.window_cycles = 10;
  t.config.frequency_khz = 1'000'000;
  t.config.ambient_mc = 0;
  t.config.trip_mc = trip_mc;
  t.config.hysteresis_mc = hysteresis_mc;
  t.config.r_mc_per_w = 1'000'000;
  t.config.c_nj_per_c = 1;
  REQUIRE(t.config.validate().empty());
  t.start_mc = 0;
  // A batch of 1: 10,000 cycles (10 us) at 20 mW: 2e-7 J; its steady state is 20 °C.
  t.batch_die_fj = {200'000'000};
  t.idle_die_fj_per_cycle = 0;
  t.clamped_die_fj_per_cycle = 0;
  return t;
}

load::ServiceTimes times() {
  load::ServiceTimes s;
  s.batch_cycles = {10'000};
  return s;
}

load::ServerPolicy policy() {
  load::ServerPolicy p;
  p.max_batch = 1;
  p.queue_bound = 64;
  return p;
}

}  // namespace

TEST_CASE("below the trip point the thermal model changes nothing", "[load][thermal]") {
  const std::vector<uint64_t> arrivals = {0, 5'000, 30'000, 31'000, 90'000};
  const auto cold = load::serve(arrivals, times(), policy());
  const auto t = thermal(30'000, 5'000);  // 30 °C: above the 20 °C steady state
  const auto hot = load::serve(arrivals, times(), policy(), &t);
  REQUIRE(hot.requests.size() == cold.requests.size());
  for (size_t i = 0; i < arrivals.size(); ++i) CHECK(hot.requests[i].done == cold.requests[i].done);
  CHECK(hot.clamp_events == 0);
  CHECK(hot.clamped_cycles == 0);
  CHECK(hot.peak_mc > 15'000);  // heated towards 20 °C
  CHECK(hot.peak_mc < 20'000);
}

TEST_CASE("the clamp holds batches and the busy server's clamped share follows the RC model",
          "[load][thermal]") {
  // 50 requests at once: the server is busy without pause for 50 batches (500 us >> tau).
  const std::vector<uint64_t> arrivals(50, 0);
  const auto t = thermal(10'000, 2'000);  // trip 10 °C, release below 8 °C
  const auto r = load::serve(arrivals, times(), policy(), &t);
  REQUIRE(r.completed == 50);
  CHECK(r.clamp_events > 10);
  // Each batch took its 10,000 service cycles plus the cycles the clamp held it; back to back,
  // so the clamp's cycles are the whole stretch.
  uint64_t stretch = 0;
  for (const auto& o : r.requests) {
    CHECK(o.done - o.start >= 10'000);
    stretch += o.done - o.start - 10'000;
  }
  CHECK(stretch == r.clamped_cycles);
  CHECK(r.end_cycle == 50 * 10'000 + r.clamped_cycles);
  // Heating from 8 to 10 °C towards 20 takes tau ln(12/10), cooling from 10 to 8 towards 0
  // tau ln(10/8): clamped about 55% of the time (windows of 10 ns blur each edge by one window).
  const double heat = std::log(12.0 / 10.0), cool = std::log(10.0 / 8.0);
  const double predicted = cool / (heat + cool);
  const double clamped = static_cast<double>(r.clamped_cycles) / static_cast<double>(r.end_cycle);
  CHECK(clamped == Approx(predicted).margin(0.06));
  // The temperature stays within a window's rise of the trip point.
  CHECK(r.peak_mc >= 10'000);
  CHECK(r.peak_mc < 10'500);
  // Deterministic.
  const auto again = load::serve(arrivals, times(), policy(), &t);
  CHECK(again.clamped_cycles == r.clamped_cycles);
  CHECK(again.end_mc == r.end_mc);
}

TEST_CASE("an idle server cools: a batch after a pause starts cold and is held less",
          "[load][thermal]") {
  const auto t = thermal(10'000, 2'000);
  std::vector<uint64_t> packed(20, 0), spaced;
  for (uint64_t i = 0; i < 20; ++i) spaced.push_back(i * 40'000);  // >= 10 us idle between
  const auto p = load::serve(packed, times(), policy(), &t);
  const auto s = load::serve(spaced, times(), policy(), &t);
  REQUIRE(s.completed == 20);
  // Every 10 us batch still heats past the trip point (tau is 1 us)...
  CHECK(s.clamp_events >= 20);
  // ...but after a pause it starts at ambient: about tau ln 2 of it runs before the first clamp,
  // so it is held for fewer cycles than a batch that starts hot.
  auto stretch = [](const load::ServeResult& r, size_t i) {
    return r.requests[i].done - r.requests[i].start - 10'000;
  };
  uint64_t packed_total = 0, spaced_total = 0;
  for (size_t i = 1; i < 20; ++i) {
    packed_total += stretch(p, i);
    spaced_total += stretch(s, i);
    CHECK(s.requests[i].start == spaced[i]);  // the pause is longer than the stretched batch
  }
  CHECK(spaced_total < packed_total);
}

TEST_CASE("requests overlapping a clamp carry the tail, without a clamp all are clear",
          "[load][thermal][tail]") {
  // Batches of 1 us at 20 mW (steady state 20 °C, tau 1 us): a lone batch from ambient reaches
  // 20 (1 - 1/e) = 12.6 °C, below the 15 °C trip; a burst served back to back heats past it.
  auto t = thermal(15'000, 2'000);
  t.batch_die_fj = {20'000'000};
  load::ServiceTimes s;
  s.batch_cycles = {1'000};
  std::vector<uint64_t> arrivals;
  for (uint64_t i = 0; i < 40; ++i) arrivals.push_back(i * 20'000);  // lone, cooled between
  for (int i = 0; i < 30; ++i) arrivals.push_back(800'000);          // a burst of 30
  for (uint64_t i = 1; i <= 40; ++i) arrivals.push_back(900'000 + i * 20'000);
  const auto r = load::serve(arrivals, s, policy(), &t);
  REQUIRE(r.completed == arrivals.size());
  REQUIRE(r.clamp_events > 0);
  REQUIRE(r.clamp_spans.size() == r.clamp_events);
  uint64_t spanned = 0;
  for (size_t i = 0; i < r.clamp_spans.size(); ++i) {
    CHECK(r.clamp_spans[i].first < r.clamp_spans[i].second);
    if (i > 0) CHECK(r.clamp_spans[i - 1].second <= r.clamp_spans[i].first);
    CHECK(r.clamp_spans[i].first >= 800'000);  // no lone request clamps
    spanned += r.clamp_spans[i].second - r.clamp_spans[i].first;
  }
  // The NPU was busy through every clamp (the burst's queue never emptied): held all of it.
  CHECK(spanned == r.clamped_cycles);
  const auto split = load::split_by_clamp(r);
  CHECK(split.overlapping.size() + split.clear.size() == r.completed);
  CHECK(split.overlapping.size() >= 25);  // most of the burst waited through a clamp
  CHECK(split.clear.size() >= 80);        // every lone request
  const auto over = load::summarize(split.overlapping), clear = load::summarize(split.clear);
  CHECK(over.p99 > 10 * clear.p99);
  CHECK(clear.p99 == 1'000);  // a lone request: its service time, never held
  // An oracle: overlap recomputed by brute force over the spans.
  size_t brute = 0;
  for (const auto& o : r.requests) {
    bool hit = false;
    for (const auto& sp : r.clamp_spans) hit |= sp.first < o.done && o.arrival < sp.second;
    brute += hit;
  }
  CHECK(brute == split.overlapping.size());
  // Without the thermal model there are no spans and every request is clear.
  const auto cold = load::serve(arrivals, s, policy());
  CHECK(cold.clamp_spans.empty());
  CHECK(load::split_by_clamp(cold).overlapping.empty());
  CHECK(load::split_by_clamp(cold).clear.size() == cold.completed);
}
