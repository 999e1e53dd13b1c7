// Cost: bisecting a failing run of 3.3M cycles (tests/replay/data/long_gemm.textpb, a fault in
// layer fc7) re-simulates a small fraction of the run: the recorded windows are checked against
// the golden prefix digests without simulating, and only the first divergent window is
// re-executed from its checkpoint. The bound is 2x the run; the design gives at most one
// checkpoint interval (plus the waveform window).
#include "BisectTestSupport.h"

using namespace bud;

TEST_CASE("bisecting a 3M-cycle failure re-simulates far less than the run", "[bisect][cost]") {
  const auto dir = test::temp_dir("cost");
  const std::string path = (dir / "long.bpk").string();
  const auto options = test::options_with(test::data_file("replay/data/long_gemm.textpb"),
                                          {"flip:compute.accum[3][5]@2000001"});
  const replay::RecordConfig config;  // the defaults a user gets
  const auto out = test::record(path, options, config);
  REQUIRE_FALSE(out.report.passed);
  REQUIRE(out.report.cycles > 1'000'000);
  const auto packet = test::read(path);

  // Without a waveform: the recorded windows locate the divergence, one window is re-executed.
  const auto r = debugger::bisect_packet(packet, {});
  INFO(r.text());
  REQUIRE(r.verdict == debugger::BisectVerdict::Fail);
  CHECK(test::stage_of(r) == "gemm");
  CHECK(r.layer == "fc7");
  REQUIRE(r.first_divergence_cycle);
  CHECK(*r.first_divergence_cycle >= 2'000'001);
  CHECK(r.run_cycles == out.report.cycles);
  CHECK(r.windows_checked == packet.windows.size());
  const double ratio =
      static_cast<double>(r.resimulated_cycles) / static_cast<double>(r.run_cycles);
  WARN("long_gemm (" << r.run_cycles << " cycles): bisect re-simulated " << r.resimulated_cycles
                     << " cycles = " << ratio << " of the run");
  CHECK(ratio < 2.0);
  CHECK(r.resimulated_cycles <= config.checkpoint_interval);

  // With --wave the window around the divergence is re-executed once more from the checkpoint
  // before it: at most a second checkpoint interval plus the waveform window.
  debugger::BisectOptions o;
  o.wave_file = (dir / "long.fst").string();
  const auto w = debugger::bisect_packet(packet, o);
  CHECK(w.first_divergence_cycle == r.first_divergence_cycle);
  CHECK(w.wave_file == o.wave_file);
  const double wave_ratio =
      static_cast<double>(w.resimulated_cycles) / static_cast<double>(w.run_cycles);
  WARN("with --wave: re-simulated " << w.resimulated_cycles << " cycles = " << wave_ratio);
  CHECK(wave_ratio < 2.0);
  CHECK(w.resimulated_cycles <= 2 * config.checkpoint_interval + 2 * o.wave_radius + 1);

  // Without a packet the whole run is simulated once (ratio 1), and the answer is the same.
  const auto live = test::bisect_live(options);
  CHECK(live.first_failing_stage == r.first_failing_stage);
  CHECK(live.first_divergence_cycle == r.first_divergence_cycle);
  CHECK(live.resimulated_cycles == live.run_cycles);
}

// A weight flip that goes wrong inside a gemm command spanning a checkpoint: the window before
// the checkpoint looks clean (the open command is witnessed only by its sum), the re-execution
// from the checkpoint finds the command closing wrong and goes back one checkpoint, and stops as
// soon as the divergence is pinned: about one interval plus the rest of that command, not the
// run (12,288 of 13,161 cycles before).
TEST_CASE("a divergence inside a command caught at a checkpoint costs about one interval",
          "[bisect][cost]") {
  const auto dir = test::temp_dir("cost_mid");
  const std::string path = (dir / "mlp.bpk").string();
  replay::RecordConfig config;
  config.digest_interval = 1024;
  config.checkpoint_interval = 4096;
  const auto out =
      test::record(path, test::options_with("mlp", {"memflip:wgt:0x10[2]@1500"}), config);
  REQUIRE_FALSE(out.report.passed);
  const auto r = debugger::bisect_packet(test::read(path), {});
  INFO(r.text());
  REQUIRE(r.verdict == debugger::BisectVerdict::Fail);
  CHECK(test::stage_of(r) == "gemm");
  REQUIRE(r.first_divergence_cycle);
  CHECK(*r.first_divergence_cycle > 1500);
  CHECK(*r.first_divergence_cycle < config.checkpoint_interval);
  // The same answer as checking the whole run from reset.
  const auto live = test::bisect_live(test::options_with("mlp", {"memflip:wgt:0x10[2]@1500"}));
  CHECK(live.first_divergence_cycle == r.first_divergence_cycle);
  CHECK(live.command_index == r.command_index);
  CHECK(r.resimulated_cycles < 2 * config.checkpoint_interval);
  CHECK(r.resimulated_cycles < r.run_cycles / 2);
}
