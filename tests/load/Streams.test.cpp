#include <catch2/catch.hpp>

#include "load/Arrivals.h"
#include "load/Server.h"
#include "load/Sweep.h"
#include "load/streams/StreamServer.h"
#include "load/streams/StreamSpec.h"
#include "load/streams/StreamSweep.h"

using namespace bud::load;

namespace {

/// A service with fixed batch costs at 1 GHz, every batch size passed (no RTL run).
Service fixed_service(std::vector<uint64_t> batch_cycles) {
  Service s;
  s.workload = "fixed";
  s.frequency_mhz = 1000;
  s.times.batch_cycles = std::move(batch_cycles);
  s.times.host_per_batch = 500;
  s.times.host_per_request = 100;
  s.runs.resize(s.times.batch_cycles.size());
  for (size_t b = 0; b < s.runs.size(); ++b) {
    s.runs[b].batch = static_cast<uint32_t>(b + 1);
    s.runs[b].passed = true;
  }
  return s;
}

StreamSpec stream(std::string name, double share, uint32_t rank, double sla_us = 0) {
  StreamSpec s;
  s.name = std::move(name);
  s.share = share;
  s.priority = s.weight = rank;
  s.sla_p99_us = sla_us;
  return s;
}

StreamSweepSpec two_streams(QueuePolicy policy, uint32_t hi_rank, uint32_t lo_rank,
                            std::vector<double> loads) {
  StreamSweepSpec spec;
  spec.arrivals.count = 20000;
  spec.arrivals.seed = 3;
  spec.policy.max_batch = 1;
  spec.policy.queue_bound = 32;
  spec.queue_policy = policy;
  spec.streams = {stream("hi", 1, hi_rank, 100), stream("lo", 1, lo_rank, 100)};
  spec.loads = std::move(loads);
  return spec;
}

}  // namespace

TEST_CASE("strict priority serves the high stream first and starves the low one first",
          "[load][streams]") {
  const Service svc = fixed_service({10000});
  const std::vector<const Service*> services{&svc, &svc};
  StreamSweepSpec spec = two_streams(QueuePolicy::Strict, 2, 1, {0.9, 1.3});
  REQUIRE(spec.validate(services).empty());
  const StreamSweepResult r = sweep_streams(services, spec);
  REQUIRE(r.points.size() == 2);
  const StreamPoint& hi = r.points[0].streams[0];
  const StreamPoint& lo = r.points[0].streams[1];
  // At 90% of capacity the high stream sees at most one low batch ahead of it (non-preemptive)
  // and its own queue at 45% load; the low stream waits behind both.
  CHECK(hi.latency.p99 * 2 < lo.latency.p99);
  CHECK(hi.latency.p50 < lo.latency.p50);
  // Overloaded (130%): the high stream (65% of capacity) is still served; the low one fills its
  // queue and is rejected.
  const StreamPoint& hi_over = r.points[1].streams[0];
  const StreamPoint& lo_over = r.points[1].streams[1];
  CHECK(hi_over.dropped == 0);
  CHECK(lo_over.rejected_fraction > 0.3);
  CHECK(hi_over.latency.p99 < lo_over.latency.p99);
  // The same load under FIFO treats both alike: no stream is starved.
  spec.queue_policy = QueuePolicy::Fifo;
  const StreamSweepResult f = sweep_streams(services, spec);
  CHECK(f.points[1].streams[0].dropped > 0);
  CHECK(f.points[1].streams[1].rejected_fraction < lo_over.rejected_fraction / 2);
  // Swapping the priorities swaps who is starved.
  spec = two_streams(QueuePolicy::Strict, 1, 2, {1.3});
  const StreamSweepResult s = sweep_streams(services, spec);
  CHECK(s.points[0].streams[0].rejected_fraction > 0.3);
  CHECK(s.points[0].streams[1].dropped == 0);
}

TEST_CASE("weighted 3:1 shares the saturated NPU 3:1", "[load][streams]") {
  // Different workloads (batch costs): the shares are of NPU time, not of requests.
  const Service a = fixed_service({10000, 14000});
  const Service b = fixed_service({4000, 6000});
  const std::vector<const Service*> services{&a, &b};
  StreamSweepSpec spec = two_streams(QueuePolicy::Weighted, 3, 1, {3.0});
  spec.policy.max_batch = 2;
  spec.policy.admission = ServerPolicy::Admission::Drop;
  REQUIRE(spec.validate(services).empty());
  const StreamSweepResult r = sweep_streams(services, spec);
  const auto& p = r.points[0];
  // Both queues stay backlogged: the share of busy cycles follows the weights (the tail of the
  // run, after one stream's arrivals end, is the only deviation).
  CHECK(p.streams[0].service_share == Approx(0.75).margin(0.02));
  CHECK(p.streams[1].service_share == Approx(0.25).margin(0.02));
  CHECK(p.streams[0].dropped > 0);
  CHECK(p.streams[1].dropped > 0);
  // 1:1 splits it evenly.
  spec.streams[0].weight = 1;
  const StreamSweepResult even = sweep_streams(services, spec);
  CHECK(even.points[0].streams[0].service_share == Approx(0.5).margin(0.02));
}

TEST_CASE("a stream back from idle gets no banked credit under weighted", "[load][streams]") {
  ServiceTimes t;
  t.batch_cycles = {100};
  ServerPolicy p;
  p.queue_bound = 1000;
  // Stream 0 busy from 0; stream 1 arrives late. Start-time fair queueing lets it resume at the
  // current virtual time: it alternates with stream 0 instead of taking every slot.
  std::vector<uint64_t> a0, a1;
  for (uint64_t i = 0; i < 100; ++i) a0.push_back(0);
  for (uint64_t i = 0; i < 10; ++i) a1.push_back(5000);
  const StreamsResult r = serve_streams({{&t, a0, 1, 1}, {&t, a1, 1, 1}}, p, QueuePolicy::Weighted);
  // By 5000 stream 0 has run 50 batches. Then they alternate: stream 1's 10 finish by 7000.
  CHECK(r.streams[1].requests.back().done == 5000 + 20 * 100);
  CHECK(r.streams[0].completed == 100);
}

TEST_CASE("one stream through serve_streams is load::serve, cycle for cycle", "[load][streams]") {
  ServiceTimes t;
  t.batch_cycles = {3000, 4500, 5800, 7000};
  t.host_per_batch = 700;
  t.host_per_request = 90;
  ArrivalSpec a;
  a.rate_per_s = 400000;  // above the capacity of one-request batches: queues and drops
  a.count = 5000;
  a.seed = 11;
  for (auto kind :
       {ArrivalSpec::Kind::Poisson, ArrivalSpec::Kind::Bursty, ArrivalSpec::Kind::Diurnal}) {
    a.kind = kind;
    const auto times = arrivals(a);
    for (auto admission : {ServerPolicy::Admission::Drop, ServerPolicy::Admission::Delay}) {
      for (auto qp : {QueuePolicy::Fifo, QueuePolicy::Strict, QueuePolicy::Weighted}) {
        ServerPolicy p;
        p.max_batch = 4;
        p.window_cycles = 2000;
        p.queue_bound = 8;
        p.admission = admission;
        const ServeResult old = serve(times, t, p);
        const StreamsResult now = serve_streams({{&t, times, 1, 1}}, p, qp);
        const ServeResult& n = now.streams[0];
        REQUIRE(n.requests.size() == old.requests.size());
        size_t differ = 0;
        for (size_t i = 0; i < old.requests.size(); ++i) {
          const auto &x = old.requests[i], &y = n.requests[i];
          differ += x.arrival != y.arrival || x.start != y.start || x.done != y.done ||
                    x.batch != y.batch || x.dropped != y.dropped;
        }
        CHECK(differ == 0);
        CHECK(n.batches_by_size == old.batches_by_size);
        CHECK(n.completed == old.completed);
        CHECK(n.dropped == old.dropped);
        CHECK(n.busy_cycles == old.busy_cycles);
        CHECK(n.end_cycle == old.end_cycle);
        CHECK(now.end_cycle == old.end_cycle);
        if (admission == ServerPolicy::Admission::Drop) CHECK(old.dropped > 0);
      }
    }
  }
}

TEST_CASE("a one-stream sweep_streams is the single-stream sweep", "[load][streams]") {
  const Service svc = fixed_service({3000, 4500});
  SweepSpec one;
  one.arrivals.count = 3000;
  one.arrivals.seed = 5;
  one.policy.max_batch = 2;
  one.policy.window_cycles = 1000;
  one.policy.queue_bound = 16;
  one.loads = {0.3, 0.8, 1.2};
  StreamSweepSpec many;
  many.arrivals = one.arrivals;
  many.policy = one.policy;
  many.loads = one.loads;
  many.streams = {stream("only", 0.37, 1, 50)};
  REQUIRE(many.validate({&svc}).empty());
  const SweepResult a = sweep(svc, one);
  const StreamSweepResult b = sweep_streams({&svc}, many);
  CHECK(a.capacity_rps == b.capacity_rps);
  REQUIRE(a.points.size() == b.points.size());
  for (size_t i = 0; i < a.points.size(); ++i) {
    const LoadPoint& x = a.points[i];
    const StreamPoint& y = b.points[i].streams[0];
    CHECK(x.offered_rps == y.offered_rps);
    CHECK(x.served_rps == y.served_rps);
    CHECK(x.completed == y.completed);
    CHECK(x.dropped == y.dropped);
    CHECK(x.latency.p50 == y.latency.p50);
    CHECK(x.latency.p95 == y.latency.p95);
    CHECK(x.latency.p99 == y.latency.p99);
    CHECK(x.latency.p999 == y.latency.p999);
    CHECK(x.latency.max == y.latency.max);
    CHECK(x.latency.mean == y.latency.mean);
    CHECK(x.batches_by_size == y.batches_by_size);
    CHECK(y.service_share == 1);
  }
  CHECK(a.points[2].dropped > 0);
}

TEST_CASE("stream specs parse and a bad one names its field", "[load][streams]") {
  auto ok = parse_stream_spec("hi:mlp:0.25:150:3");
  REQUIRE(ok.error.empty());
  CHECK(ok.spec.name == "hi");
  CHECK(ok.spec.workload == "mlp");
  CHECK(ok.spec.share == 0.25);
  CHECK(ok.spec.sla_given);
  CHECK(ok.spec.sla_p99_us == 150);
  CHECK(ok.spec.priority == 3);
  CHECK(ok.spec.weight == 3);
  auto defaults = parse_stream_spec("bulk:gemm_small:2");
  REQUIRE(defaults.error.empty());
  CHECK(!defaults.spec.sla_given);
  CHECK(defaults.spec.priority == 1);
  auto no_sla = parse_stream_spec("b:gemm_small:1::4");
  REQUIRE(no_sla.error.empty());
  CHECK(!no_sla.spec.sla_given);
  CHECK(no_sla.spec.weight == 4);
  CHECK(parse_stream_spec("hi:mlp:abc").field == "SHARE");
  CHECK(parse_stream_spec("hi:mlp:0").field == "SHARE");
  CHECK(parse_stream_spec("hi:mlp").field == "SHARE");
  CHECK(parse_stream_spec("hi").field == "WORKLOAD");
  CHECK(parse_stream_spec("h i:mlp:1").field == "NAME");
  CHECK(parse_stream_spec("hi::1").field == "WORKLOAD");
  CHECK(parse_stream_spec("hi:mlp:1:-5").field == "SLA_US");
  CHECK(parse_stream_spec("hi:mlp:1:5:0").field == "PRIORITY|WEIGHT");
  CHECK(parse_stream_spec("hi:mlp:1:5:1.5").field == "PRIORITY|WEIGHT");
  CHECK(parse_stream_spec("hi:mlp:1:5:2:9").field == "PRIORITY|WEIGHT");
  const auto bad = parse_stream_spec("hi:mlp:abc");
  CHECK(bad.error ==
        "--stream \"hi:mlp:abc\": SHARE \"abc\" must be a number > 0 "
        "(NAME:WORKLOAD:SHARE[:SLA_US[:PRIORITY|WEIGHT]])");
}

TEST_CASE("queue policies render and parse by name", "[load][streams]") {
  for (auto p : {QueuePolicy::Fifo, QueuePolicy::Strict, QueuePolicy::Weighted})
    CHECK(parse_queue_policy(queue_policy_name(p)) == p);
  CHECK(!parse_queue_policy("lifo"));
}
