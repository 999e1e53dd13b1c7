// Minimization: the failure shrinks while the symptom and the first failing stage stay; the
// compute_bound accumulator fault shrinks by at least 10x in cycles; the minimized packet replays
// deterministically (bud replay exits 1, reproduced, with the same output every time); a passing
// packet has nothing to minimize.
#include "BisectTestSupport.h"
#include "debugger/bisect/Minimizer.h"

using namespace bud;

namespace {

debugger::MinimizeInput input_of(const std::string& workload, const std::string& fault) {
  auto text = replay::workload_text(workload);
  REQUIRE(text);
  debugger::MinimizeInput in;
  in.workload_text = *text;
  in.options = test::options_with(workload, {fault});
  return in;
}

/// The minimized run bisected on its own, with the options it ran with.
std::pair<run::RunOptions, debugger::BisectReport> bisect_minimized(
    const debugger::MinimizeResult& r) {
  replay::RunSpec spec;
  spec.workload_text = r.minimized.workload_text;
  spec.options = r.minimized.options;
  auto prepared = replay::prepare_spec(spec, true);
  INFO(r.minimized.workload_text);
  REQUIRE(prepared);
  return {spec.options, debugger::bisect_run(*prepared, spec.options, {})};
}

}  // namespace

TEST_CASE("minimize keeps the stage and symptom and shrinks compute_bound at least 10x",
          "[bisect][minimize]") {
  const auto in = input_of("compute_bound", "flip:compute.accum[3][5]@200001");
  uint32_t progress_calls = 0;
  debugger::MinimizeOptions mo;
  mo.progress = [&](uint32_t, uint32_t) { ++progress_calls; };
  const auto r = debugger::minimize(in, mo);
  INFO(r.text() << r.error);
  REQUIRE(r.ok);
  CHECK(r.first_failing_stage == debugger::Rung::Gemm);
  CHECK(r.cycles_before == 274534);
  CHECK(r.cycles_after * 10 <= r.cycles_before);
  WARN("compute_bound accumulator fault: " << r.cycles_before << " -> " << r.cycles_after
                                           << " cycles, " << r.commands_before << " -> "
                                           << r.commands_after << " commands");
  CHECK(r.commands_after < r.commands_before);
  CHECK(r.accepted == r.steps.size());
  CHECK(r.candidates >= r.accepted);
  CHECK(progress_calls == r.candidates);

  // The minimized run, bisected on its own, fails the same way and as long as reported.
  const auto [options, b] = bisect_minimized(r);
  INFO(b.text());
  CHECK(b.verdict == debugger::BisectVerdict::Fail);
  CHECK(test::stage_of(b) == "gemm");
  CHECK(b.run_cycles == r.cycles_after);
  REQUIRE(b.first_divergence_cycle);
  REQUIRE(options.faults.size() == 1);
  CHECK(*b.first_divergence_cycle >= options.faults[0].cycle);
}

TEST_CASE("minimize keeps a hang a hang and a post failure in post", "[bisect][minimize]") {
  for (const char* fault : {"flip:compute.shift[1]@800", "stuck:tokens[0][0]=0@100"}) {
    DYNAMIC_SECTION(fault) {
      const auto before = test::bisect_live(test::options_with("gemm_small", {fault}));
      REQUIRE(before.verdict == debugger::BisectVerdict::Fail);
      debugger::MinimizeOptions mo;
      mo.max_candidates = 40;
      const auto r = debugger::minimize(input_of("gemm_small", fault), mo);
      INFO(r.text() << r.error);
      REQUIRE(r.ok);
      CHECK(r.first_failing_stage == before.first_failing_stage);
      CHECK(r.cycles_after <= r.cycles_before);
      CHECK(r.candidates <= 40);
      const auto after = bisect_minimized(r).second;
      INFO(after.text());
      CHECK(after.first_failing_stage == before.first_failing_stage);
      // Same symptom: a hang stays a hang, a wrong result stays a finished run.
      CHECK((after.failure == debugger::FailureKind::Hang) ==
            (before.failure == debugger::FailureKind::Hang));
    }
  }
}

// A POST fault pinned to a cycle used to land on other work once a reduction removed commands
// before it, so conv and mlp shrank only 1.1x. The fault now follows its command: the minimized
// run is several times smaller and still fails in POST, on the command the fault moved with.
TEST_CASE("a fault pinned to a cycle follows its command through minimize",
          "[bisect][minimize][anchor]") {
  struct Case {
    const char* workload;
    const char* fault;  ///< 2 cycles into a POST (tests/bench/minimize_bench.sh finds these)
    double at_least;    ///< cycles shrink at least this much
  };
  for (const Case& c : {Case{"mlp", "flip:compute.shift[1]@11122", 2.0},
                        Case{"conv", "flip:compute.shift[1]@18429", 2.0}}) {
    DYNAMIC_SECTION(c.workload) {
      debugger::MinimizeOptions mo;
      mo.max_candidates = 60;
      const auto r = debugger::minimize(input_of(c.workload, c.fault), mo);
      INFO(r.text() << r.error);
      REQUIRE(r.ok);
      CHECK(r.first_failing_stage == debugger::Rung::Post);
      REQUIRE(r.anchors.size() == 1);
      CHECK(test::contains(r.anchors[0], "follows command"));
      CHECK(test::contains(r.anchors[0], "POST"));
      CHECK(static_cast<double>(r.cycles_before) >= c.at_least * static_cast<double>(r.cycles_after));
      CHECK(r.commands_after < r.commands_before);
      // The minimized run fails in POST, no earlier than its (moved) fault.
      const auto [options, after] = bisect_minimized(r);
      INFO(after.text());
      CHECK(test::stage_of(after) == "post");
      REQUIRE(after.first_divergence_cycle);
      REQUIRE(options.faults.size() == 1);
      CHECK(*after.first_divergence_cycle >= options.faults[0].cycle);
    }
  }
}

TEST_CASE("bud minimize writes a packet that replays deterministically",
          "[bisect][minimize][cli]") {
  const auto dir = test::temp_dir("minimize_cli");
  const std::string big = (dir / "cb.bpk").string(), small = (dir / "min.bpk").string();
  auto r = test::bud(
      "run compute_bound --fault 'flip:compute.accum[3][5]@200001' --record " + test::q(big), dir);
  REQUIRE(r.status == 1);
  r = test::bud("minimize --json " + test::q(big) + " -o " + test::q(small), dir);
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  CHECK(test::json_field(r.out, "ok") == "true");
  CHECK(test::json_string(r.out, "first_failing_stage") == "gemm");
  CHECK(test::json_string(r.out, "replay") == "reproduced");
  CHECK(test::json_field(r.out, "cycles_before") == "274534");
  const uint64_t after = std::stoull(test::json_field(r.out, "cycles_after").value_or("0"));
  CHECK(after > 0);
  CHECK(after * 10 <= 274534);
  const uint64_t bytes_before = std::stoull(test::json_field(r.out, "bytes_before").value_or("0"));
  const uint64_t bytes_after = std::stoull(test::json_field(r.out, "bytes_after").value_or("0"));
  CHECK(bytes_after < bytes_before);

  // Replays deterministically: exit 1 (reproduced), the same output every time.
  const auto r1 = test::bud("replay " + test::q(small), dir);
  const auto r2 = test::bud("replay " + test::q(small), dir);
  INFO(r1.out << r1.err);
  CHECK(r1.status == 1);
  CHECK(test::contains(r1.out, "reproduced"));
  CHECK(r2.status == 1);
  CHECK(r1.out == r2.out);
  // ... and bisects to the same stage.
  const auto b = test::bud("bisect --json " + test::q(small), dir);
  CHECK(b.status == 1);
  CHECK(test::json_string(b.out, "first_failing_stage") == "gemm");
  CHECK(test::json_field(b.out, "run_cycles") == std::to_string(after));
}

TEST_CASE("bud minimize of a passing packet exits 1 and says why", "[bisect][minimize][cli]") {
  const auto dir = test::temp_dir("minimize_pass");
  const std::string ok = (dir / "ok.bpk").string(), out = (dir / "out.bpk").string();
  test::record(ok, test::options_with("gemm_small"));
  const auto r = test::bud("minimize " + test::q(ok) + " -o " + test::q(out), dir);
  CHECK(r.status == 1);
  CHECK(test::contains(r.err, "does not fail"));
  CHECK(r.err.find('\n') == r.err.size() - 1);  // one line
  CHECK_FALSE(std::filesystem::exists(out));
}

TEST_CASE("minimize halves the passes of a repeated workload first", "[bisect][minimize][repeat]") {
  // An input byte flipped in DRAM before the first pass: every pass reads it, so the failure
  // persists to the results whatever the number of passes (a transient fault in an early pass
  // would be overwritten by the later passes).
  debugger::MinimizeInput in = input_of("conv", "memflip:dram:0x10100[3]@10");
  in.workload_text += "\nrepeat: 4\n";
  debugger::MinimizeOptions mo;
  mo.max_candidates = 1;
  const auto r = debugger::minimize(in, mo);
  INFO(r.text() << r.error);
  REQUIRE(r.ok);
  REQUIRE(r.steps.size() == 1);
  CHECK(r.steps[0].rfind("halve the passes 4 -> 2 (", 0) == 0);
  CHECK(r.commands_after * 2 == r.commands_before);
  CHECK(r.cycles_after * 3 < r.cycles_before * 2);
  CHECK(r.first_failing_stage == debugger::Rung::Load);
}

TEST_CASE("cycle-pinned faults of a one-layer program follow their element into the reduction",
          "[bisect][minimize][anchor]") {
  // Field trial 3: a bf16 gemm_small accumulator flip and an OUT scratchpad flip did not shrink
  // (1.0x): with fewer rows the fault's cycle, kept at its offset from when the engine took the
  // command, fell after the command's work. Re-addressed by the transaction it corrupts (the ACC
  // entry being accumulated, the OUT entry POST wrote), both shrink at least 3x.
  struct Case {
    const char* fault;
    debugger::Rung stage;
  };
  for (const Case c : {Case{"flip:compute.accum[3][20]@900", debugger::Rung::Gemm},
                       Case{"memflip:out:0x2d1[6]@1280", debugger::Rung::Store}}) {
    DYNAMIC_SECTION(c.fault) {
      auto in = input_of("gemm_small", c.fault);
      in.options.precision = "bf16";
      const auto r = debugger::minimize(in, {});
      INFO(r.text() << r.error);
      REQUIRE(r.ok);
      CHECK(r.first_failing_stage == c.stage);
      CHECK(r.cycles_after * 3 <= r.cycles_before);
      REQUIRE(r.anchors.size() == 1);
      CHECK(test::contains(r.anchors[0], "; element "));
      const auto [options, b] = bisect_minimized(r);
      INFO(b.text());
      CHECK(b.verdict == debugger::BisectVerdict::Fail);
      CHECK(b.first_failing_stage == c.stage);
      // A scratchpad flip moves with its entry: its address is an entry of the reduced POST.
      if (c.stage == debugger::Rung::Store) CHECK(options.faults[0].addr != 0x2d1);
    }
  }
}
