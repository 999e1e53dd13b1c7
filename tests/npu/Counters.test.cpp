// PMU counters after a whole run, checked for completeness (every engine's seven cycle classes
// account for every counted cycle) and against independent sources: the emulator's cycle count,
// the program's command list, the golden model, the lowering and the DRAM model's statistics.
#include <catch2/catch.hpp>
#include <string>

#include "tests/npu/NpuTestSupport.h"

namespace {

using bud::isa::CycleClass;
using bud::isa::Engine;
using bud::isa::Opcode;
using C = bud::isa::Counter;

uint64_t count_opcode(const bud::workload::Program& p, Opcode op) {
  uint64_t n = 0;
  for (const auto& c : p.commands) n += c.opcode == op ? 1 : 0;
  return n;
}

/// Harness cycles in [first, last] at which the NPU's throttle input is high.
uint64_t throttled_cycles(const bud::emu::ThrottleConfig& t, uint64_t first, uint64_t last) {
  uint64_t n = 0;
  if (t.period == 0) return 0;
  for (uint64_t c = first; c <= last; ++c) n += (c % t.period) < t.on_cycles ? 1 : 0;
  return n;
}

void check_counters(const std::string& name, const bud::test::TimingCase& tc) {
  const auto& p = bud::test::prepared(name);
  const auto o = bud::test::options_for(name, std::nullopt, tc.npu);
  const auto live = bud::test::run_live(p, o);
  const auto& r = live.report;
  const auto& emu = *live.emu;
  INFO(name << " timing " << tc.name << ": " << bud::test::failures_text(r));
  REQUIRE(r.passed);
  auto cnt = [&](C c) { return bud::test::counter(r, c); };
  // The report's counters are the emulator's live counters at the end.
  for (int i = 0; i < bud::isa::kNumCounters; ++i) CHECK(r.counters[i] == emu.counter(i));

  // `cycles` vs the emulator's cycle count. The PMU is enabled from reset and never stops, but
  // the host's very first CSR access (HostDriver setup: PMU_CTRL = enable|clear) is driven in
  // harness cycle 0 and clears every counter at the first rising edge. Every later edge, up to
  // and including the one after the host acknowledged the interrupt, is counted. So exactly one
  // cycle (cycle 0) precedes the clear: cycles == emulator cycles - 1.
  const uint64_t cycles = cnt(C::Cycles);
  CHECK(cycles == emu.cycle() - 1);
  CHECK(cycles == r.cycles - 1);

  // Completeness: exactly one class per engine per counted cycle.
  for (int e = 0; e < bud::isa::kNumEngines; ++e) {
    uint64_t sum = 0;
    for (int k = 0; k < bud::isa::kNumClasses; ++k)
      sum +=
          r.counters[bud::isa::class_counter(static_cast<Engine>(e), static_cast<CycleClass>(k))];
    INFO("engine " << bud::isa::engine_name(static_cast<Engine>(e)));
    CHECK(sum == cycles);
  }

  // Throttled class: every engine is throttled exactly in the counted cycles (1..end-1) in which
  // the harness raised `throttle`, and never when throttling is off.
  const uint64_t thr = throttled_cycles(tc.npu.throttle, 1, emu.cycle() - 1);
  if (tc.npu.throttle.period == 0)
    REQUIRE(thr == 0);
  else
    REQUIRE(thr > 0);
  for (int e = 0; e < bud::isa::kNumEngines; ++e) {
    INFO("engine " << bud::isa::engine_name(static_cast<Engine>(e)));
    CHECK(r.counters[bud::isa::class_counter(static_cast<Engine>(e), CycleClass::Throttled)] ==
          thr);
  }

  // Retired commands per opcode equal the program's.
  CHECK(cnt(C::RetiredLoad) == count_opcode(p.program, Opcode::Load));
  CHECK(cnt(C::RetiredGemm) == count_opcode(p.program, Opcode::Gemm));
  CHECK(cnt(C::RetiredPost) == count_opcode(p.program, Opcode::Post));
  CHECK(cnt(C::RetiredStore) == count_opcode(p.program, Opcode::Store));
  CHECK(cnt(C::RetiredSync) == count_opcode(p.program, Opcode::Sync));
  CHECK(cnt(C::RetiredEnd) == 1);
  CHECK(count_opcode(p.program, Opcode::End) == 1);

  // MACs and saturations against the golden model and the lowering.
  const auto g = bud::test::golden_run(p);
  CHECK(cnt(C::RetiredLoad) == g.retired[0]);
  CHECK(cnt(C::RetiredGemm) == g.retired[1]);
  CHECK(cnt(C::RetiredPost) == g.retired[2]);
  CHECK(cnt(C::RetiredStore) == g.retired[3]);
  CHECK(cnt(C::MacsUseful) == g.macs_useful);
  CHECK(cnt(C::MacsUseful) == p.program.useful_macs);
  CHECK(cnt(C::MacsIssued) == 64 * g.gemm_iterations);
  CHECK(g.gemm_iterations == p.program.gemm_iterations);
  CHECK(cnt(C::MacsUseful) <= cnt(C::MacsIssued));
  CHECK(cnt(C::Saturations) == g.saturations);
  CHECK(cnt(C::Saturations) == p.golden_saturations);

  // DRAM traffic against the memory model (every request of the run completed by the end, and
  // the host writes the ring and image through the backdoor, which the model does not count).
  const auto& st = emu.dram().stats();
  CHECK(emu.dram().outstanding() == 0);
  CHECK(cnt(C::DramRdBytes) == st.bytes_read);
  CHECK(cnt(C::DramWrBytes) == st.bytes_written);
  CHECK(cnt(C::DramRdReqs) == st.read_requests);
  CHECK(cnt(C::DramWrReqs) == st.write_requests);
  CHECK(cnt(C::DramRdBytes) > 0);
  CHECK(cnt(C::DramWrBytes) > 0);
  // Every store transaction is one DRAM write request.
  CHECK(cnt(C::DramWrReqs) == r.rtl_digests[static_cast<int>(bud::emu::Stage::Store)].count);
}

}  // namespace

TEST_CASE("PMU counters are complete and agree with the golden model and DRAM model",
          "[npu][counters]") {
  auto cases = bud::test::timing_cases();
  for (const auto& name : bud::test::builtin_names()) {
    for (const auto& tc : cases) {
      // compute_bound is the slowest; three timings suffice for it.
      if (name == "compute_bound" && tc.name != "default" && tc.name != "throttle_1_of_3" &&
          tc.name != "bursty")
        continue;
      DYNAMIC_SECTION(name << " " << tc.name) { check_counters(name, tc); }
    }
  }
}

TEST_CASE("throttle with a different duty cycle is counted exactly", "[npu][counters]") {
  bud::test::TimingCase tc{"throttle_3_of_7", {}};
  tc.npu.throttle.period = 7;
  tc.npu.throttle.on_cycles = 3;
  check_counters("mlp", tc);
}
