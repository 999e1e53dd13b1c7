// Fault-free runs: every built-in workload bisects to "pass", from a packet and live, and the
// bud binary exits 0 with nothing localized.
#include "BisectTestSupport.h"

using namespace bud;

TEST_CASE("fault-free runs of every built-in report pass", "[bisect][pass]") {
  const auto dir = test::temp_dir("pass");
  for (const char* w : {"gemm_small", "mlp", "conv", "mem_bound", "compute_bound"}) {
    DYNAMIC_SECTION(w) {
      const auto options = test::options_with(w);
      const std::string path = (dir / (std::string(w) + ".bpk")).string();
      const auto out = test::record(path, options);
      REQUIRE(out.report.passed);
      const auto packet = test::read(path);
      const auto r = debugger::bisect_packet(packet, {});
      INFO(r.text());
      CHECK(r.verdict == debugger::BisectVerdict::Pass);
      CHECK_FALSE(r.persistent);
      CHECK(!r.first_failing_stage);
      CHECK_FALSE(r.first_divergence_cycle);
      CHECK(r.downstream_stages.empty());
      CHECK(r.transients.empty());
      CHECK(r.run_cycles == out.report.cycles);
      // Every recorded window matched the golden prefix digests, so at most the last window
      // was re-executed.
      CHECK(r.windows_checked == packet.windows.size());
      REQUIRE_FALSE(packet.windows.empty());
      CHECK(r.resimulated_cycles <=
            packet.windows.back().end_cycle() - packet.windows.back().start_cycle());

      const auto live = test::bisect_live(options);
      INFO(live.text());
      CHECK(live.verdict == debugger::BisectVerdict::Pass);
      CHECK(live.run_cycles == out.report.cycles);
    }
  }
}

TEST_CASE("bud bisect of a passing packet exits 0 and says pass", "[bisect][pass][cli]") {
  const auto dir = test::temp_dir("pass_cli");
  const std::string path = (dir / "ok.bpk").string();
  test::record(path, test::options_with("gemm_small"));
  const auto text = test::bud("bisect " + test::q(path), dir);
  CHECK(text.status == 0);
  CHECK(test::contains(text.out, "verdict    pass"));
  CHECK_FALSE(test::contains(text.out, "first failing stage"));
  const auto json = test::bud("bisect --json " + test::q(path), dir);
  CHECK(json.status == 0);
  CHECK(test::json_string(json.out, "verdict") == "pass");
  CHECK(test::json_field(json.out, "first_failing_stage") == "null");
  CHECK(test::json_field(json.out, "downstream_stages") == "[]");
}
