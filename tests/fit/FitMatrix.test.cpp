// The workload fit matrix (load/fit): the cell's figures are the profiled run's and the RTL's own
// (the batch of 1 is the plain checked run, observed), the load search finds a load meeting the
// SLA whose next step up misses it, and the winners keep the synthetic GEMM apart.
#include "load/fit/FitMatrix.h"

#include <catch2/catch.hpp>

#include "emu/run/Designs.h"
#include "load/fit/FitReport.h"
#include "power/EnergyAccount.h"
#include "tests/load/LoadTestSupport.h"

using namespace bud;

namespace {

power::EnergyTable table() { return test::builtin_table(); }

fit::FitSpec bursty_spec(double sla_us) {
  fit::FitSpec spec;
  spec.serving.arrivals.kind = load::ArrivalSpec::Kind::Bursty;
  spec.serving.arrivals.count = 400;
  spec.serving.policy.max_batch = 1;
  spec.serving.policy.queue_bound = 64;
  spec.serving.loads = {0.1, 0.3, 0.5, 0.7, 0.9};
  spec.serving.sla_p99_us = sla_us;
  spec.refine_steps = 4;
  return spec;
}

/// A service of fixed batch costs (no RTL): 10,000 cycles a request at 1 GHz, 1 uJ each.
load::Service fixed_service() {
  load::Service s;
  s.workload = "fixed";
  s.frequency_mhz = 1000;
  s.times.batch_cycles = {10'000};
  load::BatchRun r;
  r.batch = 1;
  r.npu_cycles = 10'000;
  r.energy_fj = 1'000'000'000;
  r.passed = true;
  s.runs.push_back(r);
  s.idle_fj_per_cycle = 10'000;
  return s;
}

fit::FitCell cell(const std::string& model, const std::string& config, double rpj, uint64_t cycles,
                  bool synthetic = false) {
  fit::FitCell c;
  c.model = c.workload = model;
  c.config = config;
  c.synthetic = synthetic;
  c.passed = true;
  c.cycles = cycles;
  if (rpj > 0) {
    fit::TradePoint t;
    t.requests_per_joule = rpj;
    t.meets_sla = true;
    c.sustained = t;
  }
  return c;
}

}  // namespace

TEST_CASE("model MACs count each GEMM layer's outputs times its reduction", "[fit][macs]") {
  workload::Workload w;
  workload::Layer dense;
  dense.kind = workload::LayerKind::Dense;
  dense.m = 4;
  dense.k = 32;
  dense.n = 16;
  dense.out_shape = {1, 4, 16};
  workload::Layer dw;  // a depthwise 3x3 conv: 9 MACs per output, not 9 x C
  dw.kind = workload::LayerKind::Conv2d;
  dw.in_shape = {8, 8, 16};
  dw.out_shape = {8, 8, 16};
  dw.c_out = 16;
  dw.kh = dw.kw = 3;
  dw.groups = 16;
  workload::Layer add;  // an identity GEMM: no model MACs
  add.kind = workload::LayerKind::Add;
  add.in_shape = add.out_shape = {8, 8, 16};
  w.layers = {dense, dw, add};
  CHECK(fit::model_macs(w) == 4u * 16 * 32 + 8u * 8 * 16 * 9);
}

TEST_CASE("the load search ends on a load that meets the SLA below one that misses",
          "[fit][search]") {
  const auto service = fixed_service();
  // A bursty stream against a 10 us service: p99 grows with load; 200 us is met part way up.
  auto spec = bursty_spec(200);
  fit::FitCell c;
  fit::search_sustained(service, spec.serving, spec.refine_steps, c);
  REQUIRE(c.sustained);
  CHECK(c.sustained->meets_sla);
  CHECK(c.sustained->p99_us <= 200);
  CHECK(c.curve.size() == spec.serving.loads.size() + spec.refine_steps);
  for (size_t i = 1; i < c.curve.size(); ++i) CHECK(c.curve[i - 1].load <= c.curve[i].load);
  // The grid's best meeting point, and the refined point at or above it.
  double grid_best = 0;
  for (double l : spec.serving.loads)
    for (const auto& t : c.curve)
      if (t.load == l && t.meets_sla) grid_best = std::max(grid_best, l);
  CHECK(c.sustained->load >= grid_best);
  // Some tried load above the sustained one misses (the search stopped for a reason).
  bool missed_above = false;
  for (const auto& t : c.curve) missed_above |= t.load > c.sustained->load && !t.meets_sla;
  CHECK(missed_above);
  // An impossible SLA: nothing sustained, and no refinement probes.
  auto tight = bursty_spec(1);
  fit::FitCell none;
  fit::search_sustained(service, tight.serving, tight.refine_steps, none);
  CHECK_FALSE(none.sustained);
  CHECK(none.curve.size() == tight.serving.loads.size());
  // Deterministic.
  fit::FitCell again;
  fit::search_sustained(service, spec.serving, spec.refine_steps, again);
  CHECK(again.sustained->load == c.sustained->load);
  CHECK(again.sustained->requests_per_joule == c.sustained->requests_per_joule);
}

TEST_CASE("the synthetic GEMM's winner is kept apart from the production models'",
          "[fit][winners]") {
  fit::FitMatrix m;
  m.configs = {"npu8", "npu16", "npu32"};
  m.models = {"a", "b"};
  // npu32 wins the GEMM by far; on the models npu16 is best on a, npu8 on b, npu32 misses b.
  m.cells = {cell("a", "npu8", 100, 900),       cell("a", "npu16", 120, 500),
             cell("a", "npu32", 110, 400),      cell("b", "npu8", 50, 900),
             cell("b", "npu16", 48, 600),       cell("b", "npu32", 0, 700),
             cell("g", "npu8", 10, 9000, true), cell("g", "npu16", 30, 3000, true),
             cell("g", "npu32", 90, 1000, true)};
  fit::choose_winners(m);
  REQUIRE(m.model_winners.size() == 2);
  CHECK(m.model_winners[0].config == "npu16");
  CHECK(m.model_winners[1].config == "npu8");
  CHECK(m.gemm_winner.config == "npu32");
  // npu32 meets the SLA on one model only: it cannot win the production models.
  CHECK(m.production_winner.models_meeting == 2);
  // npu8: (100/120 x 1)^(1/2) = 0.913; npu16: (1 x 48/50)^(1/2) = 0.980.
  CHECK(m.production_winner.config == "npu16");
  CHECK(m.production_winner.score == Approx(std::sqrt(48.0 / 50.0)));
  CHECK(m.differ());
  const auto text = fit::fit_text(m, fit::FitConditions{});
  CHECK(text.find("The synthetic GEMM picks npu32 but the production models pick npu16") !=
        std::string::npos);
  const auto j = fit::fit_json(m, fit::FitConditions{});
  CHECK(j["winners"]["differ"] == true);
  CHECK(j["winners"]["gemm"]["config"] == "npu32");
  CHECK(j["winners"]["production"]["config"] == "npu16");
  // Same winner: not reported as differing.
  m.cells[8].sustained->requests_per_joule = 5;
  fit::choose_winners(m);
  CHECK(m.gemm_winner.config == "npu16");
  CHECK_FALSE(m.differ());
}

TEST_CASE("a fit cell's figures are the checked RTL run's, profiled", "[fit][cell]") {
  fit::FitTarget target;
  target.config = "npu8";
  target.table = table();
  auto spec = bursty_spec(1e6);
  spec.serving.policy.max_batch = 2;
  std::vector<std::string> labels;
  auto c = fit::fit_cell("mlp", target, spec, [&](const std::string& l) { labels.push_back(l); });
  REQUIRE(c);
  CHECK(c->passed);
  CHECK(labels ==
        std::vector<std::string>{"mlp on npu8, batch 1 of 2", "mlp on npu8, batch 2 of 2"});
  // The oracle: the same workload run plainly (no profiler) gives the same cycles.
  run::RunOptions o;
  o.workload = "mlp";
  auto p = run::prepare(o);
  REQUIRE(p);
  const auto report = run::execute(*p, o);
  REQUIRE(report.passed);
  CHECK(c->cycles == report.cycles);
  CHECK(c->host_cycles == report.host_cycles);
  CHECK(c->array_macs == 64);
  CHECK(c->model_macs == fit::model_macs(p->workload));
  CHECK(c->model_macs <= report.counter("macs_useful"));
  CHECK(c->flops_fraction ==
        Approx(static_cast<double>(c->model_macs) /
               (static_cast<double>(report.cycles + report.host_cycles) * 64)));
  CHECK(c->flops_fraction > 0);
  CHECK(c->flops_fraction < 1);
  REQUIRE_FALSE(c->types.empty());
  CHECK(c->types.front().kind == "dense");
  for (const auto& t : c->types) {
    CHECK(t.memory_stall_fraction >= 0);
    CHECK(t.memory_stall_fraction <= 1);
  }
  CHECK(c->energy_fj > 0);
  REQUIRE(c->sustained);  // a loose SLA: met
  CHECK(c->sustained->requests_per_joule > 0);
  CHECK(c->capacity_rps > 0);
}
