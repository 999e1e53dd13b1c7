// Serving from RTL-measured batch costs (load/Service, load/Sweep): the measured costs are the
// RTL runs' own cycles and priced counters, and the sweep's figures follow from them exactly.
#include <catch2/catch.hpp>

#include "emu/run/Designs.h"
#include "load/Plan.h"
#include "load/Service.h"
#include "load/Sweep.h"
#include "power/EnergyAccount.h"
#include "tests/load/LoadTestSupport.h"

using namespace bud;

namespace {

power::EnergyTable table() { return test::builtin_table(); }

run::RunOptions options(const char* workload) {
  run::RunOptions o;
  o.workload = workload;
  return o;
}

/// A sweep of `requests` per load point at `loads`, batches up to `max_batch`, queue 16, and an
/// SLA every point meets.
load::SweepSpec loose_spec(uint32_t requests, uint32_t max_batch, std::vector<double> loads) {
  load::SweepSpec spec;
  spec.arrivals.count = requests;
  spec.policy.max_batch = max_batch;
  spec.policy.queue_bound = 16;
  spec.loads = std::move(loads);
  spec.sla_p99_us = 1e9;
  return spec;
}

}  // namespace

TEST_CASE("batch costs are the RTL runs' cycles and priced counters", "[load][service]") {
  const auto t = table();
  auto s = load::measure_service(options("gemm_small"), 3, t);
  REQUIRE(s);
  REQUIRE(s->runs.size() == 3);
  for (uint32_t b = 1; b <= 3; ++b) {
    const auto& r = s->runs[b - 1];
    INFO("batch " << b);
    CHECK(r.passed);
    // The same submission run directly: workload `repeat: b`.
    auto p = run::prepare(options("gemm_small"));
    REQUIRE(p);
    auto w = p->workload;
    w.repeat = b;
    auto q = run::prepare_workload(std::move(w), options("gemm_small"));
    REQUIRE(q);
    const auto report = run::execute(*q, options("gemm_small"));
    REQUIRE(report.passed);
    CHECK(r.npu_cycles == report.cycles);
    CHECK(s->times.batch_cycles[b - 1] == report.cycles + report.host_cycles);
    auto acc = power::account(t, report.counter_names, report.counters);
    REQUIRE(acc);
    CHECK(r.energy_fj == acc->total_fj);
    CHECK(r.useful_macs == report.counter("macs_useful"));
  }
  // More inferences per submission cost more in total, and less per inference (one host
  // round trip, the pipeline kept full between passes).
  CHECK(s->runs[1].npu_cycles > s->runs[0].npu_cycles);
  CHECK(s->times.batch(3) / 3 < s->times.batch(1));
  CHECK(s->times.host_per_batch == workload::kHostSyncCycles);
  CHECK(s->request_bytes_in > 0);
  CHECK(s->idle_fj_per_cycle > 0);
  // Deterministic.
  auto again = load::measure_service(options("gemm_small"), 3, t);
  REQUIRE(again);
  CHECK(again->times.batch_cycles == s->times.batch_cycles);
}

TEST_CASE("bad serving input is refused with a reason", "[load][service]") {
  const auto t = table();
  CHECK_FALSE(load::measure_service(options("gemm_small"), 0, t));
  auto missing = load::measure_service(options("no_such_workload"), 1, t);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().find("no_such_workload") != std::string::npos);
}

TEST_CASE("a load sweep's figures follow from the batch costs", "[load][sweep]") {
  const auto t = table();
  auto s = load::measure_service(options("gemm_small"), 2, t);
  REQUIRE(s);
  load::SweepSpec spec;
  spec.arrivals.count = 1500;
  spec.arrivals.seed = 3;
  spec.policy.max_batch = 2;
  spec.policy.queue_bound = 16;
  spec.loads = {0.1, 0.5, 0.9, 1.5};
  spec.sla_p99_us = 1e9;  // everything that drops nothing meets it
  REQUIRE(spec.validate(*s).empty());
  const auto r = load::sweep(*s, spec);
  REQUIRE(r.points.size() == 4);
  CHECK(r.capacity_rps ==
        Approx(2 * s->frequency_mhz * 1e6 / static_cast<double>(s->times.batch(2))));
  for (const auto& p : r.points) {
    INFO("load " << p.load);
    CHECK(p.completed + p.dropped == 1500);
    // Energy: each batch's RTL energy, each request's copies, the idle rest of the time.
    uint64_t fj = 0, npu = 0;
    for (uint32_t b = 1; b <= 2; ++b) {
      fj += p.batches_by_size[b - 1] * s->batch_fj(b);
      npu += p.batches_by_size[b - 1] * s->runs[b - 1].npu_cycles;
    }
    fj += p.completed * s->request_copy_fj + (p.end_cycle - npu) * s->idle_fj_per_cycle;
    CHECK(p.energy_fj == fj);
    CHECK(p.latency.p50 <= p.latency.p95);
    CHECK(p.latency.p95 <= p.latency.p99);
  }
  // Queueing: the tail grows with load; the idle share of energy shrinks.
  CHECK(r.points[2].latency.p99 > r.points[0].latency.p99);
  CHECK(r.points[2].joules_per_request < r.points[0].joules_per_request);
  // Past capacity the bounded queue drops requests: that point misses any SLA.
  CHECK(r.points[3].dropped > 0);
  CHECK_FALSE(r.points[3].meets_sla);
  // At or above capacity there is no steady state: the point is saturated, not a finite p99.
  CHECK(r.points[3].saturated);
  CHECK_FALSE(r.points[2].saturated);
  // The sustained point is the fastest one that meets the SLA.
  REQUIRE(r.sustained);
  for (const auto& p : r.points)
    if (p.meets_sla) CHECK(p.served_rps <= r.points[*r.sustained].served_rps);
  // Deterministic for a seed; another seed gives another stream.
  const auto again = load::sweep(*s, spec);
  CHECK(again.points[2].latency.p99 == r.points[2].latency.p99);
  spec.arrivals.seed = 4;
  CHECK(load::sweep(*s, spec).points[2].latency.p99 != r.points[2].latency.p99);
  // An SLA below the service time itself: no point meets it.
  spec.sla_p99_us = 0.001;
  CHECK_FALSE(load::sweep(*s, spec).sustained);
}

TEST_CASE("the intervention plan tries one policy change at a time, ranked by perf/W at the SLA",
          "[load][sweep]") {
  const auto t = table();
  auto s = load::measure_service(options("gemm_small"), 4, t);
  REQUIRE(s);
  load::SweepSpec spec;
  spec.arrivals.count = 800;
  spec.policy.max_batch = 2;
  spec.policy.queue_bound = 16;
  spec.loads = {0.2, 0.5, 0.8};
  spec.sla_p99_us = 1e9;
  const auto plan = load::sweep_interventions(*s, spec, {10});
  // baseline (max batch 2), max batch 1 and 4 (2 is the baseline), window 10 us.
  REQUIRE(plan.size() == 4);
  int baselines = 0;
  for (size_t i = 0; i < plan.size(); ++i) {
    INFO(plan[i].name);
    if (plan[i].name == "baseline") {
      ++baselines;
      CHECK(plan[i].policy.max_batch == 2);
    }
    CHECK(plan[i].result.sustained);
    if (i > 0) CHECK(plan[i - 1].requests_per_joule >= plan[i].requests_per_joule);
    // Each entry is its own whole sweep: its sustained point is the sweep's.
    load::SweepSpec one = spec;
    one.policy = plan[i].policy;
    const auto again = load::sweep(*s, one);
    REQUIRE(again.sustained);
    CHECK(again.points[*again.sustained].requests_per_joule == plan[i].requests_per_joule);
  }
  CHECK(baselines == 1);
}

TEST_CASE("tile-size interventions are measured again on the RTL and ranked with the others",
          "[load][sweep][tiles]") {
  const auto t = table();
  const run::RunOptions base_options = options("mlp");
  auto s = load::measure_service(base_options, 2, t);
  REQUIRE(s);
  // mlp's layers are one 32-row tile each: halve and quarter it.
  CHECK(s->tile_rows == 32);
  const auto rows = load::tile_rows_to_try(*s);
  REQUIRE(rows == std::vector<uint32_t>{16, 8});
  const load::SweepSpec spec = loose_spec(400, 2, {0.2, 0.5, 0.8});
  std::vector<load::RunChange> changes;
  for (uint32_t r : rows) changes.push_back(load::tile_rows_change(base_options, t, r));
  const auto plan = load::plan_interventions(*s, spec, 0, {10}, changes);
  REQUIRE(plan);
  // baseline, max batch 1 (2 is the baseline), window 10 us, two tile caps.
  REQUIRE(plan->size() == 5);
  int tiles = 0;
  for (size_t i = 0; i < plan->size(); ++i) {
    const auto& iv = (*plan)[i];
    INFO(iv.name);
    CHECK(iv.failure.empty());
    if (i > 0) CHECK((*plan)[i - 1].requests_per_joule >= iv.requests_per_joule);
    if (iv.knob != load::Knob::TileRows) {
      CHECK(iv.batch1_cycles == s->times.batch_cycles[0]);
      continue;
    }
    ++tiles;
    // Its batch costs are a run of the capped workload on the RTL: one inference's cycles are a
    // separate run's, and differ from the plan's tiles.
    run::RunOptions capped = base_options;
    capped.tiles.max_rows = iv.tiles.max_rows;
    auto prepared = run::prepare(capped);
    REQUIRE(prepared);
    const auto report = run::execute(*prepared, capped);
    CHECK(report.passed);
    CHECK(iv.batch1_cycles == report.cycles + report.host_cycles);
    CHECK(iv.batch1_cycles != s->times.batch_cycles[0]);
    CHECK(iv.name == "tile rows <= " + std::to_string(iv.tiles.max_rows));
  }
  CHECK(tiles == 2);
  // Deterministic: the same plan again, in the same order with the same figures.
  const auto again = load::plan_interventions(*s, spec, 0, {10}, changes);
  REQUIRE(again);
  REQUIRE(again->size() == plan->size());
  for (size_t i = 0; i < plan->size(); ++i) {
    CHECK((*again)[i].name == (*plan)[i].name);
    CHECK((*again)[i].requests_per_joule == (*plan)[i].requests_per_joule);
  }
}

TEST_CASE("output-block caps are interventions, and a change the workload cannot take is a row",
          "[load][sweep][tiles]") {
  const auto t = table();
  const run::RunOptions base_options = options("mlp");
  auto s = load::measure_service(base_options, 1, t);
  REQUIRE(s);
  // mlp's widest layer has 12 output blocks (96 channels of 8) in its one tile.
  CHECK(s->tile_blocks == 12);
  const auto blocks = load::tile_blocks_to_try(*s);
  REQUIRE(blocks == std::vector<uint32_t>{6, 3});
  const load::SweepSpec spec = loose_spec(200, 1, {0.2, 0.8});
  std::vector<load::RunChange> changes = {load::tile_blocks_change(base_options, t, 1)};
  load::RunChange missing;  // a precision file that is not there: the change does not prepare
  missing.knob = load::Knob::Precision;
  missing.name = "precision missing";
  missing.options = base_options;
  missing.options.precision = std::string(BUD_BINARY_DIR) + "/no_such_assignment.prec";
  missing.table = t;
  changes.push_back(missing);
  const auto plan = load::plan_interventions(*s, spec, 0, {}, changes);
  REQUIRE(plan);
  REQUIRE_FALSE(plan->empty());
  const auto& last = plan->back();  // unmeasured entries rank last
  CHECK(last.name == "precision missing");
  CHECK(last.failure.find("could not be prepared") != std::string::npos);
  CHECK(last.failure.find("no_such_assignment.prec") != std::string::npos);
  CHECK_FALSE(last.mismatch);
  bool found = false;
  for (const auto& iv : *plan) {
    if (iv.knob != load::Knob::TileBlocks) continue;
    found = true;
    CHECK(iv.failure.empty());
    CHECK(iv.tiles.max_blocks == 1);
    CHECK(iv.name == "tile blocks <= 1");
    // One inference measured again on the RTL with one output block per tile.
    run::RunOptions capped = base_options;
    capped.tiles.max_blocks = 1;
    auto prepared = run::prepare(capped);
    REQUIRE(prepared);
    const auto report = run::execute(*prepared, capped);
    CHECK(report.passed);
    CHECK(iv.batch1_cycles == report.cycles + report.host_cycles);
    CHECK(iv.batch1_cycles != s->times.batch_cycles[0]);
  }
  CHECK(found);
}
