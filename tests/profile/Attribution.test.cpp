// Exact attribution: every engine's cycle classes, attributed command by command (plus the tail),
// add up to the PMU's totals; every layer's MACs equal what the lowering says it issues.
#include <catch2/catch.hpp>

#include "emu/workload/Builtins.h"
#include "tests/core/MockDesign.h"
#include "tests/profile/ProfileTestSupport.h"

using namespace bud;
using namespace bud::profile;

namespace {

void check_exact(const profile_test::Profiled& p) {
  const Attribution& a = *p.run.attribution;
  const run::RunReport& r = p.run.report;
  // Totals are the PMU's own counters.
  for (int e = 0; e < isa::kNumEngines; ++e) {
    uint64_t engine_cycles = 0;
    for (int c = 0; c < isa::kNumClasses; ++c) {
      const int slot = class_slot(static_cast<isa::Engine>(e), static_cast<isa::CycleClass>(c));
      const std::string name =
          std::string(isa::kEngineNames[e]) + "." + std::string(isa::kClassNames[c]);
      uint64_t sum = 0;
      for (const auto& cmd : a.commands()) sum += cmd.total(slot);
      INFO(name);
      CHECK(a.totals()[slot] == r.counter(name));
      CHECK(sum == r.counter(name));
      engine_cycles += sum;
    }
    CHECK(engine_cycles == r.counter("cycles"));
  }
  // MACs per layer, from the lowering.
  const auto& prog = p.prepared.program;
  uint64_t all_useful = 0, all_issued = 0;
  for (const auto& layer : prog.layers) {
    uint64_t useful = 0, issued = 0;
    for (uint32_t c = layer.first_cmd; c <= layer.last_cmd; ++c) {
      useful += a.commands()[c].total(static_cast<int>(Slot::MacsUseful));
      issued += a.commands()[c].total(static_cast<int>(Slot::MacsIssued));
    }
    INFO(layer.name);
    CHECK(useful == layer.useful_macs);
    CHECK(issued == layer.gemm_iterations * a.array_macs());
    all_useful += useful;
    all_issued += issued;
  }
  CHECK(all_useful == r.counter("macs_useful"));
  CHECK(all_issued == r.counter("macs_issued"));
  uint64_t written = 0;
  for (const auto& cmd : a.commands()) written += cmd.total(static_cast<int>(Slot::DramWrBytes));
  CHECK(written == r.counter("dram_wr_bytes"));
  // Every command was taken and released by its engine, and dispatched by fetch.
  for (size_t i = 0; i + 1 < a.commands().size(); ++i) {
    const auto& cmd = a.commands()[i];
    const auto op = prog.commands[i].opcode;
    INFO("command " << i);
    CHECK(cmd.dispatched != UINT64_MAX);
    if (op == isa::Opcode::Gemm) {
      // Per command, not only per layer: a misaligned edge would move the last iteration of a
      // GEMM to the POST after it.
      const auto& g = prog.commands[i];
      const uint64_t kb = (g.k + 7) / 8, nb = (g.n + 7) / 8;
      CHECK(cmd.total(static_cast<int>(Slot::MacsIssued)) == uint64_t{g.m} * kb * nb * 64);
      CHECK(cmd.total(static_cast<int>(Slot::MacsUseful)) == uint64_t{g.m} * g.k * g.n);
    } else {
      CHECK(cmd.total(static_cast<int>(Slot::MacsIssued)) == 0);
    }
    if (op != isa::Opcode::Sync && op != isa::Opcode::End) {
      CHECK(cmd.taken <= cmd.released);
      CHECK(cmd.released != UINT64_MAX);
      CHECK(cmd.dispatched < cmd.taken);
    }
  }
}

}  // namespace

TEST_CASE("attribution is exact on every built-in", "[profile][attribution]") {
  for (const auto& b : workload::list_builtins()) {
    SECTION(b.name) {
      const auto p = profile_test::profiled(b.name);
      CHECK(p.run.attribution->array_macs() == isa::kArrayMacs);
      check_exact(p);
    }
  }
}

TEST_CASE("attribution is exact under jitter, bursts, reordering and throttling",
          "[profile][attribution]") {
  run::RunOptions o;
  o.workload = "conv";
  o.emulator.dram.jitter = 60;
  o.emulator.dram.bursty = true;
  o.emulator.dram.seed = 9;
  o.emulator.dram.max_outstanding = 3;
  o.emulator.throttle.period = 7;
  o.emulator.throttle.on_cycles = 2;
  const auto p = profile_test::profiled(o);
  CHECK(p.run.report.counter("gemm.throttled") > 0);
  check_exact(p);
}

TEST_CASE("a design that does not run the NPU ISA is refused with a reason",
          "[profile][attribution]") {
  bud::test::use_mock_design();
  const auto o = bud::test::mock_options("gemm_small");
  auto prepared = run::prepare(o);
  REQUIRE(prepared);
  const auto r = run_profiled(*prepared, o);
  CHECK_FALSE(r.attribution);
  CHECK_FALSE(r.bad_input);
  CHECK(r.error.find("does not run the NPU ISA") != std::string::npos);
}
