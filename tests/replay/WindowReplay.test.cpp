// Window-parallel replay (`bud replay P -j N`): the same outcome as the serial replay, field by
// field, for clean packets, recorded symptoms and divergences injected at several windows (a
// recorded digest or a stage total changed), whatever the number of jobs.
#include "replay/WindowReplay.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "ReplayTestSupport.h"
#include "replay/ReplayPlan.h"
#include "replay/Replayer.h"

using namespace bud;
using namespace bud::replay;

namespace {

using test::small_intervals;

// Everything of an outcome that a user or a report sees, but the run report's own fields
// (its cycles and digests are compared instead).
void require_same(const ReplayOutcome& serial, const ReplayOutcome& par) {
  CHECK(verdict_name(par.verdict) == std::string(verdict_name(serial.verdict)));
  CHECK(par.message == serial.message);
  CHECK(par.notes == serial.notes);
  CHECK(par.start_cycle == serial.start_cycle);
  CHECK(par.end_cycle == serial.end_cycle);
  CHECK(par.digests_checked == serial.digests_checked);
  CHECK(par.windows_checked == serial.windows_checked);
  CHECK(par.full_run == serial.full_run);
  REQUIRE(par.divergence.has_value() == serial.divergence.has_value());
  if (serial.divergence) CHECK(par.divergence->describe() == serial.divergence->describe());
  CHECK(par.replay_symptom.has_value() == serial.replay_symptom.has_value());
  if (serial.replay_symptom)
    CHECK(par.replay_symptom->SerializeAsString() == serial.replay_symptom->SerializeAsString());
  CHECK(par.report.cycles == serial.report.cycles);
  CHECK(par.report.state_digest == serial.report.state_digest);
  CHECK(par.report.output_digest == serial.report.output_digest);
}

// Replays `path` serially and with 2, 3 and 8 window jobs; returns the serial outcome.
ReplayOutcome compare_jobs(const std::string& path, ReplayOptions options = {}) {
  std::string error;
  const auto p = read_packet(path, error);
  INFO(error);
  REQUIRE(p);
  {
    ReplayOutcome o;
    o.recorded_revision = p->header.model_revision();
    const auto plan = ReplayPlan::make(*p, options, o);
    REQUIRE(plan);
    REQUIRE(window_parallel(*plan));  // else -j would quietly replay serially
  }
  options.window_jobs = 1;
  const auto serial = bud::replay::replay(*p, options);
  for (unsigned jobs : {2u, 3u, 8u}) {
    INFO("jobs " << jobs << ", serial: " << serial.message);
    options.window_jobs = jobs;
    require_same(serial, bud::replay::replay(*p, options));
  }
  return serial;
}

}  // namespace

TEST_CASE("window-parallel replay: a clean packet and a recorded symptom as serially",
          "[replay][windows]") {
  const auto dir = test::temp_dir("windows_clean");
  SECTION("clean run, from the start and from --at") {
    run::RunOptions o;
    o.workload = "mlp";
    const auto path = (dir / "clean.bpk").string();
    test::record(path, o, small_intervals());
    const auto serial = compare_jobs(path);
    CHECK(serial.verdict == Verdict::Passed);
    CHECK(serial.windows_checked > 4);
    ReplayOptions at;
    at.at = 3000;
    const auto late = compare_jobs(path, at);
    CHECK(late.start_cycle == 2048);
  }
  SECTION("result mismatch from an injected DRAM bit flip reproduces") {
    RecordConfig fine;
    fine.digest_interval = 64;
    fine.checkpoint_interval = 256;
    const auto path = (dir / "mismatch.bpk").string();
    test::record(path, test::memflip_run(), fine);
    const auto serial = compare_jobs(path);
    CHECK(serial.verdict == Verdict::Reproduced);
    REQUIRE(serial.replay_symptom);
    CHECK(serial.replay_symptom->kind() == pb::Symptom::RESULT_MISMATCH);
  }
  SECTION("hang from a starved queue reproduces") {
    const auto path = (dir / "hang.bpk").string();
    test::record(path, test::starved_queue_run(), small_intervals());
    CHECK(compare_jobs(path).verdict == Verdict::Reproduced);
  }
}

TEST_CASE("window-parallel replay: injected divergences give the serial first window",
          "[replay][windows][diverge]") {
  const auto dir = test::temp_dir("windows_diverge");
  run::RunOptions o;
  o.workload = "mlp";
  const auto base = (dir / "base.bpk").string();
  test::record(base, o, small_intervals());
  std::string error;
  const auto p = read_packet(base, error);
  REQUIRE(p);
  const auto n = static_cast<uint32_t>(p->windows.size());
  REQUIRE(n >= 6);
  // Divergences in the first, an early, a middle, the next-to-last and the last window; and
  // two at once (the earlier one is reported).
  for (const std::vector<uint32_t>& at :
       std::vector<std::vector<uint32_t>>{{0}, {2}, {n / 2}, {n - 2}, {n - 1}, {n - 2, 1}}) {
    for (const bool stage : {false, true}) {
      const std::string name = "w" + std::to_string(at.front()) + "_" + std::to_string(at.size()) +
                               (stage ? "_stage" : "_digest");
      INFO(name);
      const auto path = (dir / (name + ".bpk")).string();
      test::PacketEdits edits;
      edits.window = [&](pb::Window& w) {
        if (std::find(at.begin(), at.end(), w.index()) == at.end()) return;
        if (stage)
          w.mutable_stages(2)->set_count(w.stages(2).count() + 1);
        else
          w.mutable_digests(0)->set_digest(w.digests(0).digest() ^ 1);
      };
      test::rewrite_packet(base, path, edits);
      const auto serial = compare_jobs(path);
      CHECK(serial.verdict == Verdict::Diverged);
      REQUIRE(serial.divergence);
      CHECK(serial.divergence->window == *std::min_element(at.begin(), at.end()));
      if (stage) CHECK_FALSE(serial.divergence->stages.empty());
    }
  }
}

TEST_CASE("bud replay P -j 2 prints what -j 1 prints", "[replay][windows][cli]") {
  const auto dir = test::temp_dir("windows_cli");
  run::RunOptions o;
  o.workload = "mlp";
  const auto path = (dir / "p.bpk").string();
  test::record(path, o, small_intervals());
  const auto q = [](const std::filesystem::path& f) { return "'" + f.string() + "'"; };
  CHECK(test::shell(test::bud_exe() + " replay " + q(path) + " >" + q(dir / "j1.txt")) == 0);
  CHECK(test::shell(test::bud_exe() + " replay -j 2 " + q(path) + " >" + q(dir / "j2.txt")) == 0);
  const auto j1 = test::slurp((dir / "j1.txt").string());
  CHECK(j1.find(": passed: ") != std::string::npos);
  CHECK(test::slurp((dir / "j2.txt").string()) == j1);
}
