// The BF16 datapath on the RTL (docs/isa.md "BF16 GEMM", docs/workloads.md "Precision"): every
// built-in at BF16 and mixed layer by layer matches the golden model and the direct reference bit
// for bit; BF16 GEMMs issue half the int8 MACs per iteration, and the PMU counts them apart.
#include <catch2/catch.hpp>
#include <string>

#include "tests/npu/NpuTestSupport.h"

namespace {

using bud::emu::RunState;

// Layer i runs BF16 when bit i of `mask` is set (the rest int8).
std::string mixed_assignment(const bud::workload::Workload& w, unsigned mask) {
  std::string text;
  for (size_t i = 0; i < w.layers.size(); ++i)
    if (w.layers[i].kind != bud::workload::LayerKind::Host)
      text += w.layers[i].name + ((mask >> i) & 1 ? " bf16\n" : " int8\n");
  return text;
}

bud::run::RunReport run_at(const std::string& name, const std::string& precision,
                           const bud::emu::NpuConfig& npu = {}) {
  auto o = bud::test::options_for(name, std::nullopt, npu);
  o.precision = precision;
  o.precision_origin = "assignment";  // a text, not a file
  auto p = bud::run::prepare(o);
  INFO(p.error());
  REQUIRE(p.ok());
  INFO("lowering: " << (p->lowering_failures.empty() ? "" : p->lowering_failures[0]));
  REQUIRE(p->lowering_failures.empty());
  const auto r = bud::run::execute(*p, o);
  INFO(name << " at " << precision << ": " << bud::test::failures_text(r));
  CHECK(r.state == RunState::Finished);
  CHECK(r.failures.empty());
  CHECK(r.passed);
  for (int s = 0; s < bud::emu::kNumStages; ++s) CHECK(r.rtl_digests[s] == r.golden_digests[s]);
  return r;
}

}  // namespace

TEST_CASE("every built-in runs bit-exactly at BF16 and mixed precision", "[npu][bf16]") {
  for (const auto& name : bud::test::builtin_names()) {
    DYNAMIC_SECTION(name << " bf16") {
      const auto r = run_at(name, "bf16");
      const uint64_t useful = bud::test::counter(r, bud::isa::Counter::MacsUseful);
      CHECK(useful > 0);
      CHECK(bud::test::counter(r, bud::isa::Counter::MacsUsefulBf16) == useful);
      CHECK(bud::test::counter(r, bud::isa::Counter::MacsIssuedBf16) ==
            bud::test::counter(r, bud::isa::Counter::MacsIssued));
    }
    DYNAMIC_SECTION(name << " mixed") {
      const auto& w = bud::test::prepared(name).workload;
      // Alternate layers; a conflict (an add's operands) promotes, and resolve names it.
      const auto r = run_at(name, mixed_assignment(w, 0x5555u));
      CHECK(bud::test::counter(r, bud::isa::Counter::MacsUsefulBf16) <=
            bud::test::counter(r, bud::isa::Counter::MacsUseful));
    }
  }
}

TEST_CASE("a BF16 run is bit-exact under memory-timing stress and throttling", "[npu][bf16]") {
  for (const auto& tc : bud::test::timing_cases()) {
    DYNAMIC_SECTION(tc.name) { run_at("conv", "bf16", tc.npu); }
  }
}

TEST_CASE("a BF16 GEMM issues half the MACs of an int8 one per iteration", "[npu][bf16]") {
  const auto i8 = run_at("compute_bound", "int8");
  const auto b16 = run_at("compute_bound", "bf16");
  using C = bud::isa::Counter;
  // The same useful work...
  CHECK(bud::test::counter(b16, C::MacsUseful) == bud::test::counter(i8, C::MacsUseful));
  CHECK(bud::test::counter(i8, C::MacsUsefulBf16) == 0);
  // ...at R/2 x C per iteration: twice the GEMM iterations, so the GEMM engine is active about
  // twice as long on a compute-bound layer.
  const double cap_i8 = static_cast<double>(bud::test::counter(i8, C::MacsIssued)) / 64.0;
  const double cap_b16 = static_cast<double>(bud::test::counter(b16, C::MacsIssued)) / 32.0;
  CHECK(cap_b16 == Approx(2 * cap_i8).epsilon(0.01));
  CHECK(bud::test::counter(b16, C::Cycles) > bud::test::counter(i8, C::Cycles) * 3 / 2);
}

TEST_CASE("precision files name unknown layers and precisions where they are", "[npu][bf16]") {
  auto o = bud::test::options_for("mlp");
  o.precision = "fc1 bf16\n  nosuch int8\n";
  o.precision_origin = "p.txt";
  auto p = bud::run::prepare(o);
  REQUIRE_FALSE(p.ok());
  CHECK(p.error() == "p.txt:2:3: workload 'mlp' has no layer 'nosuch'");
  o.precision = "# comment\n* fp8\n";
  p = bud::run::prepare(o);
  REQUIRE_FALSE(p.ok());
  CHECK(p.error() == "p.txt:2:3: unknown precision 'fp8' (int8 or bf16)");
  o.precision = "fc1\n";
  p = bud::run::prepare(o);
  REQUIRE_FALSE(p.ok());
  CHECK(p.error() == "p.txt:1:1: expected `LAYER PRECISION` (e.g. `fc1 bf16`)");
}
