// Determinism: a run is a function of (workload, data seed, memory config and seed). Same inputs
// give bit-identical state; another memory seed changes the timing but not a single transaction
// or output byte; another data seed changes the outputs.
#include <catch2/catch.hpp>
#include <string>

#include "tests/npu/NpuTestSupport.h"

namespace {

bud::emu::NpuConfig jittery(uint64_t mem_seed) {
  bud::emu::NpuConfig c;
  c.dram.base_latency = 30;
  c.dram.jitter = 60;
  c.dram.bursty = true;
  c.dram.seed = mem_seed;
  return c;
}

}  // namespace

TEST_CASE("same seeds give bit-identical runs", "[npu][determinism]") {
  for (const std::string name : {"gemm_small", "mlp", "conv"}) {
    DYNAMIC_SECTION(name) {
      const auto& p = bud::test::prepared(name);
      const auto o = bud::test::options_for(name, std::nullopt, jittery(5));
      const auto a = bud::run::execute(p, o);
      const auto b = bud::run::execute(p, o);
      INFO(bud::test::failures_text(a));
      REQUIRE(a.passed);
      REQUIRE(b.passed);
      CHECK(a.cycles == b.cycles);
      CHECK(a.state_digest == b.state_digest);
      CHECK(a.output_digest == b.output_digest);
      CHECK(a.counters == b.counters);
      CHECK(a.rtl_digests == b.rtl_digests);
    }
  }
}

TEST_CASE("another memory seed changes timing but not results", "[npu][determinism]") {
  for (const std::string name : {"gemm_small", "mlp", "mem_bound"}) {
    DYNAMIC_SECTION(name) {
      const auto& p = bud::test::prepared(name);
      const auto a = bud::run::execute(p, bud::test::options_for(name, std::nullopt, jittery(5)));
      const auto b = bud::run::execute(p, bud::test::options_for(name, std::nullopt, jittery(6)));
      INFO(bud::test::failures_text(a) << bud::test::failures_text(b));
      REQUIRE(a.passed);
      REQUIRE(b.passed);
      CHECK(a.output_digest == b.output_digest);
      CHECK(a.rtl_digests == b.rtl_digests);
      // The memory seed must actually matter (jitter and bursts draw from it).
      CHECK((a.cycles != b.cycles || a.counters != b.counters));
      CHECK(a.state_digest != b.state_digest);  // the memory model's state differs
    }
  }
}

TEST_CASE("another data seed changes the outputs", "[npu][determinism]") {
  const auto& p1 = bud::test::prepared("mlp", 1);
  const auto& p2 = bud::test::prepared("mlp", 2);
  const auto a = bud::run::execute(p1, bud::test::options_for("mlp", 1));
  const auto b = bud::run::execute(p2, bud::test::options_for("mlp", 2));
  INFO(bud::test::failures_text(a) << bud::test::failures_text(b));
  REQUIRE(a.passed);
  REQUIRE(b.passed);
  CHECK(a.seed == 1);
  CHECK(b.seed == 2);
  CHECK(a.output_digest != b.output_digest);
  CHECK(a.rtl_digests[static_cast<int>(bud::emu::Stage::Store)] !=
        b.rtl_digests[static_cast<int>(bud::emu::Stage::Store)]);
  CHECK(a.rtl_digests[static_cast<int>(bud::emu::Stage::Load)] !=
        b.rtl_digests[static_cast<int>(bud::emu::Stage::Load)]);
}

// Known bug: NpuEmulator::digest() hashes the Verilated model's serialisation, which begins with
// VerilatedContext::Serialized written as raw bytes, padding included. The padding is never
// initialised, so two emulators in the same state digest differently whenever their contexts
// land on heap memory with different leftovers (run twice in a row they usually reuse the same
// block, which hides it). save() has the same bytes, so restore() copies them and a restored
// emulator does match. Fix: hash the model without the context block, or zero it.
TEST_CASE("two emulators loaded with the same job have equal digests",
          "[npu][determinism]") {
  const auto& p = bud::test::prepared("gemm_small");
  bud::test::Fleet fleet;
  auto& a = fleet.make(p.job);
  auto& b = fleet.make(p.job);
  CHECK(a.digest() == b.digest());
  a.step(200);
  b.step(200);
  CHECK(a.digest() == b.digest());
  // Everything the digest is meant to cover does agree.
  CHECK(a.dram().digest() == b.dram().digest());
  for (int s = 0; s < bud::emu::kNumStages; ++s)
    CHECK(a.stage_digest(bud::emu::Stage(s)) == b.stage_digest(bud::emu::Stage(s)));
}
