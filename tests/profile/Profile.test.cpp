// The profile's figures: per layer and type, top-down (integer slots, exact partition, exactly
// 100%), the bottleneck ranking, and the scenarios whose dominant class is known.
#include "profile/Profile.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "emu/workload/Builtins.h"
#include "profile/Roofline.h"
#include "tests/profile/ProfileTestSupport.h"

using namespace bud;
using namespace bud::profile;

namespace {

struct Built {
  profile_test::Profiled run;
  Profile profile;
};

Built build(const run::RunOptions& o) {
  Built b{profile_test::profiled(o), {}};
  b.profile = build_profile(*b.run.run.attribution, b.run.prepared.program, b.run.run.report);
  return b;
}

Built build(const std::string& workload) {
  run::RunOptions o;
  o.workload = workload;
  return build(o);
}

void check_partition(const TopDown& t) {
  uint64_t sum = 0;
  for (auto v : t.sub) sum += v;
  CHECK(sum == t.slots);
  uint64_t tops = 0;
  for (int c = 0; c < kNumTopClasses; ++c) tops += t.top(static_cast<TopClass>(c));
  CHECK(tops == t.slots);
  if (t.slots > 0) {
    uint32_t bp = 0;
    for (auto v : t.basis_points()) bp += v;
    CHECK(bp == 10000);
  }
}

double share(const TopDown& t, TopClass c) {
  return t.slots ? static_cast<double>(t.top(c)) / static_cast<double>(t.slots) : 0;
}

TopClass dominant_loss(const TopDown& t) {
  TopClass best = TopClass::ComputeHazard;
  for (int c = 1; c < kNumTopClasses; ++c)
    if (t.top(static_cast<TopClass>(c)) > t.top(best)) best = static_cast<TopClass>(c);
  return best;
}

void check_profile(const Built& b) {
  const Profile& p = b.profile;
  const run::RunReport& r = b.run.run.report;
  const auto& prog = b.run.prepared.program;
  REQUIRE(p.layers.size() == prog.layers.size());
  // Whole model: every MAC slot of the run, exactly once.
  CHECK(p.model.topdown.slots == uint64_t{p.array_macs} * r.counter("cycles"));
  CHECK(p.model.macs_useful == r.counter("macs_useful"));
  CHECK(p.model.macs_issued == r.counter("macs_issued"));
  CHECK(p.model.dram_rd_bytes == r.counter("dram_rd_bytes"));
  CHECK(p.model.dram_wr_bytes == r.counter("dram_wr_bytes"));
  check_partition(p.model.topdown);
  check_partition(p.tail.topdown);
  CHECK(p.model.topdown.sub[static_cast<size_t>(SubClass::Useful)] == r.counter("macs_useful"));
  // A BF16 iteration issues M/2 MACs and leaves M/2 slots to the precision class.
  CHECK(p.model.topdown.top(TopClass::Precision) == r.counter("macs_issued_bf16"));
  CHECK(p.model.macs_issued_bf16 == r.counter("macs_issued_bf16"));
  TopDown sum = p.tail.topdown;
  uint64_t useful = 0, spans = 0;
  for (size_t i = 0; i < p.layers.size(); ++i) {
    const auto& l = p.layers[i];
    INFO(l.name);
    check_partition(l.topdown);
    CHECK(l.topdown.slots == uint64_t{p.array_macs} * l.engine_cycles(isa::Engine::Gemm));
    CHECK(l.macs_useful == prog.layers[i].useful_macs);
    CHECK(l.cycles == l.last_retire - l.first_dispatch + 1);
    CHECK(l.cycles > 0);
    if (i > 0) CHECK(l.first_dispatch > p.layers[i - 1].last_retire);  // SYNC between layers
    // % of peak: of the layer's precision's peak (BF16: half the array's MACs per cycle).
    const double peak = l.precision == "bf16" ? p.array_macs / 2 : p.array_macs;
    CHECK(l.peak_fraction ==
          Approx(static_cast<double>(l.macs_useful) / (static_cast<double>(l.cycles) * peak)));
    CHECK(l.topdown.top(TopClass::Precision) == (l.precision == "bf16" ? l.macs_issued : 0));
    CHECK(l.intensity ==
          Approx(static_cast<double>(l.macs_useful) / (l.dram_rd_bytes + l.dram_wr_bytes)));
    CHECK(l.peak_fraction <= 1.0);
    sum += l.topdown;
    useful += l.macs_useful;
    spans += l.cycles;
  }
  CHECK(sum.slots == p.model.topdown.slots);
  CHECK(sum.sub == p.model.topdown.sub);
  // Per engine: every engine-cycle of every scope in exactly one class; the model's are the
  // run's cycles for each engine, and the layers' and tail's add up to it.
  auto check_engines = [&](const ScopeMetrics& m) {
    for (int e = 0; e < isa::kNumEngines; ++e) {
      INFO(m.name << " engine " << isa::kEngineNames[e]);
      CHECK(m.engine_topdown[e].slots == m.engine_cycles(static_cast<isa::Engine>(e)));
      check_partition(m.engine_topdown[e]);
    }
  };
  check_engines(p.model);
  check_engines(p.tail);
  for (const auto& t : p.types) check_engines(t);
  for (int e = 0; e < isa::kNumEngines; ++e) {
    INFO("engine " << isa::kEngineNames[e]);
    CHECK(p.model.engine_topdown[e].slots == r.counter("cycles"));
    TopDown engine_sum = p.tail.engine_topdown[e];
    for (const auto& l : p.layers) {
      check_engines(l);
      engine_sum += l.engine_topdown[e];
    }
    CHECK(engine_sum.sub == p.model.engine_topdown[e].sub);
  }
  // Exact against the PMU: gemm's useful cycles issue MACs, load's and store's bank conflicts.
  const auto& gemm = p.model.engine_topdown[static_cast<int>(isa::Engine::Gemm)];
  // (M MACs per int8 issue cycle, M/2 per BF16 one)
  CHECK(gemm.sub[static_cast<size_t>(SubClass::Useful)] * p.array_macs ==
        r.counter("macs_issued") + r.counter("macs_issued_bf16"));
  CHECK(p.model.bank_conflicts_load == r.counter("bank_conflicts_inp") +
                                           r.counter("bank_conflicts_wgt") +
                                           r.counter("bank_conflicts_acc"));
  CHECK(p.model.bank_conflicts_store == r.counter("bank_conflicts_out"));
  CHECK(spans <= p.cycles);
  // Types add up to the layers.
  uint64_t type_macs = 0, type_cycles = 0;
  double type_model_fraction = 0;
  for (const auto& t : p.types) {
    type_macs += t.macs_useful;
    type_cycles += t.cycles;
    type_model_fraction += t.model_mac_fraction;
    check_partition(t.topdown);
  }
  CHECK(type_macs == useful);
  CHECK(type_cycles == spans);
  CHECK(type_model_fraction == Approx(1.0));
  // Ranking: every layer once, by lost cycles, each with its rule and evidence.
  REQUIRE(p.ranking.size() == p.layers.size());
  for (size_t i = 0; i < p.ranking.size(); ++i) {
    const auto& rk = p.ranking[i];
    const auto& l = p.layers[rk.layer];
    CHECK(rk.lost_cycles ==
          (l.topdown.slots - l.topdown.sub[static_cast<size_t>(SubClass::Useful)]) / p.array_macs);
    if (i > 0) CHECK(p.ranking[i - 1].lost_cycles >= rk.lost_cycles);
    CHECK_FALSE(rk.rule.empty());
    if (rk.lost_cycles > 0) {
      CHECK(rk.dominant == dominant_loss(l.topdown));
      CHECK(parent_of(rk.dominant_sub) == rk.dominant);
      CHECK_FALSE(rk.evidence.empty());
    }
  }
}

}  // namespace

TEST_CASE("per-layer figures and top-down add up on every built-in", "[profile][topdown]") {
  for (const auto& w : workload::list_builtins()) {
    SECTION(w.name) { check_profile(build(w.name)); }
  }
}

TEST_CASE("top-down partitions every slot under other memory configurations",
          "[profile][topdown]") {
  run::RunOptions o;
  o.workload = "mlp";
  o.emulator.dram.base_latency = 150;
  o.emulator.dram.bytes_per_cycle = 4;
  o.emulator.dram.bursty = true;
  check_profile(build(o));
  o.emulator.dram = {};
  o.emulator.dram.max_outstanding = 1;
  o.emulator.dram.reorder = false;
  check_profile(build(o));
}

TEST_CASE("compute_bound keeps the array useful at least 90% of its slots", "[profile][scenario]") {
  const auto b = build("compute_bound");
  check_profile(b);
  CHECK(share(b.profile.model.topdown, TopClass::Useful) >= 0.90);
  CHECK(share(b.profile.layers[0].topdown, TopClass::Useful) >= 0.90);
}

TEST_CASE("a BF16 layer's unusable half of the array is the precision class",
          "[profile][scenario][bf16]") {
  run::RunOptions o;
  o.workload = "compute_bound";
  o.precision = "bf16";
  const auto b = build(o);
  check_profile(b);
  const auto& t = b.profile.model.topdown;
  CHECK(t.top(TopClass::Precision) == b.run.run.report.counter("macs_issued_bf16"));
  CHECK(t.top(TopClass::Precision) > 0);
  // The array is busy issuing BF16 MACs: half its slots useful, the other half precision.
  CHECK(share(t, TopClass::Useful) >= 0.45);
  CHECK(share(t, TopClass::Precision) >= 0.45);
  CHECK(dominant_loss(t) == TopClass::Precision);
  REQUIRE_FALSE(b.profile.ranking.empty());
  CHECK(b.profile.ranking[0].rule.rfind("T5e", 0) == 0);
  // Against its own (BF16) peak the layer is as busy as int8 is against int8's.
  CHECK(b.profile.layers[0].peak_fraction >= 0.90);
  // Mixed (auto): fc1 stays int8 and keeps no precision slots, fc2 falls back to BF16.
  o.workload = std::string(BUD_SOURCE_DIR) + "/examples/precision/needs_bf16.textpb";
  o.precision = "auto";
  const auto m = build(o);
  check_profile(m);
  CHECK(m.profile.layers[0].topdown.top(TopClass::Precision) == 0);
  CHECK(m.profile.layers[1].topdown.top(TopClass::Precision) > 0);
}

TEST_CASE("mem_bound is dominated by memory", "[profile][scenario]") {
  const auto b = build("mem_bound");
  CHECK(dominant_loss(b.profile.model.topdown) == TopClass::Memory);
  CHECK(share(b.profile.model.topdown, TopClass::Memory) > 0.5);
  REQUIRE_FALSE(b.profile.ranking.empty());
  CHECK(b.profile.ranking[0].dominant == TopClass::Memory);
  CHECK(b.profile.ranking[0].rule.rfind("T3", 0) == 0);
}

TEST_CASE("a throttled run is dominated by the throttled class", "[profile][scenario]") {
  run::RunOptions o;
  o.workload = "mlp";
  o.emulator.throttle.period = 4;
  o.emulator.throttle.on_cycles = 3;
  const auto b = build(o);
  check_profile(b);
  const auto& t = b.profile.model.topdown;
  CHECK(t.top(TopClass::Throttled) ==
        uint64_t{b.profile.array_macs} * b.run.run.report.counter("gemm.throttled"));
  for (int c = 0; c < kNumTopClasses; ++c)
    if (static_cast<TopClass>(c) != TopClass::Throttled)
      CHECK(t.top(static_cast<TopClass>(c)) < t.top(TopClass::Throttled));
  for (const auto& rk : b.profile.ranking) {
    CHECK(rk.dominant == TopClass::Throttled);
    CHECK(rk.rule.rfind("T1", 0) == 0);
  }
}

TEST_CASE("a lowering without double buffering is dominated by scheduling", "[profile][scenario]") {
  // compute_bound with `single_buffer: true`: the same 32 tiles, each waiting for the previous.
  auto text = workload::builtin_text("compute_bound");
  REQUIRE(text);
  auto w = workload::parse_workload(std::string(*text) + "\nsingle_buffer: true\n", "cb_sb");
  INFO(w.error());
  REQUIRE(w);
  CHECK_FALSE(w->double_buffer);
  run::RunOptions o;
  o.workload = "compute_bound";
  auto prepared = run::prepare_workload(std::move(*w), o);
  REQUIRE(prepared);
  Built single{{std::move(*prepared), {}}, {}};
  single.run.run = run_profiled(single.run.prepared, o);
  REQUIRE(single.run.run.attribution);
  INFO(single.run.run.report.message);
  REQUIRE(single.run.run.report.passed);  // bit-exact as ever
  single.profile = build_profile(*single.run.run.attribution, single.run.prepared.program,
                                 single.run.run.report);
  check_profile(single);
  const auto twice = build("compute_bound");
  CHECK(single.profile.cycles > twice.profile.cycles);
  const auto& t = single.profile.model.topdown;
  CHECK(dominant_loss(t) == TopClass::Scheduling);
  CHECK(share(t, TopClass::Scheduling) > 0.15);  // 19.6%: the array waits for every tile's loads
  CHECK(t.sub[static_cast<size_t>(SubClass::UnderBuffering)] >
        t.top(TopClass::Scheduling) / 2);  // and it is the buffering that made it wait
  CHECK(share(t, TopClass::Scheduling) > share(twice.profile.model.topdown, TopClass::Scheduling));
  REQUIRE_FALSE(single.profile.ranking.empty());
  CHECK(single.profile.ranking[0].rule.rfind("T4c", 0) == 0);
  // The roofline models single buffering (no overlap of a tile's loads with the previous
  // tile's compute): still within 10%.
  const auto r = project(single.run.prepared.workload, single.run.prepared.program, o.emulator,
                         single.profile);
  REQUIRE(r.layers.size() == 1);
  CHECK(std::abs(r.layers[0].error) <= 0.10);
}

TEST_CASE("bank conflicts are the load engine's compute hazard, never the array's",
          "[profile][scenario]") {
  // The scratchpads are banked but GEMM owns the always-granted ports: the MAC slots never
  // lose a bank (docs/profiling.md), the load engine does, and its per-engine top-down counts
  // exactly those cycles as compute hazard. (They are about 0.1% of its cycles: no built-in or
  // memory configuration makes them dominant, so no bank-conflict-dominated scenario exists.)
  const auto b = build("compute_bound");
  const auto& m = b.profile.model;
  CHECK(m.topdown.sub[static_cast<size_t>(SubClass::BankConflict)] == 0);
  CHECK(b.run.run.report.counter("gemm.stall_mem") == 0);
  const auto& load = m.engine_topdown[static_cast<int>(isa::Engine::Load)];
  CHECK(m.bank_conflicts_load > 0);
  CHECK(load.sub[static_cast<size_t>(SubClass::BankConflict)] == m.bank_conflicts_load);
  CHECK(load.top(TopClass::ComputeHazard) == m.bank_conflicts_load);
  CHECK(load.top(TopClass::ComputeHazard) < load.top(TopClass::Scheduling));
}

TEST_CASE("every triage rule is written down in docs/profiling.md", "[profile][ranking]") {
  std::ifstream f(std::string(BUD_SOURCE_DIR) + "/docs/profiling.md");
  std::stringstream doc;
  doc << f.rdbuf();
  const auto names = triage_rule_names();
  CHECK(names.size() >= 15);
  for (const auto& n : names) {
    INFO(n);
    CHECK(doc.str().find("| " + n + " |") != std::string::npos);
  }
}

TEST_CASE("a repeated workload's layers add up their passes", "[profile][repeat]") {
  const std::string path = std::string(BUD_BINARY_DIR) + "/profile_conv3.textpb";
  std::ofstream(path) << workload::builtin_text("conv").value() << "\nrepeat: 3\n";
  run::RunOptions o;
  o.workload = path;
  const Built three = build(o);
  const Built one = build("conv");
  const Profile& p = three.profile;
  const auto& prog = three.run.prepared.program;
  REQUIRE(prog.passes == 3);
  REQUIRE(p.layers.size() == one.profile.layers.size());
  CHECK(p.model.macs_useful == 3 * one.profile.model.macs_useful);
  uint64_t spans = 0;
  for (size_t i = 0; i < p.layers.size(); ++i) {
    const auto& l = p.layers[i];
    const auto& once = one.profile.layers[i];
    INFO(l.name);
    check_partition(l.topdown);
    CHECK(l.macs_useful == 3 * once.macs_useful);
    CHECK(l.dram_rd_bytes == 3 * once.dram_rd_bytes);
    // Three spans of about one pass's length, not one span over the whole run.
    CHECK(l.cycles > 2 * once.cycles);
    CHECK(l.cycles < 4 * once.cycles);
    spans += l.cycles;
  }
  CHECK(spans <= p.cycles);
  CHECK(p.tail.macs_useful == 0);  // every GEMM belongs to a layer in some pass
  std::remove(path.c_str());
}
