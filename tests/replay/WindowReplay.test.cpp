// Window-parallel replay (`bud replay P -j N`): the same outcome as the serial replay, field by
// field, for clean packets, recorded symptoms and divergences injected at several windows (a
// recorded digest or a stage total changed), whatever the number of jobs. Window shards across
// machines (`bud replay P --shard I/N --results`, `bud corpus merge`): the serial outcome too.
#include "replay/WindowReplay.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "ReplayTestSupport.h"
#include "replay/CorpusMerge.h"
#include "replay/ReplayPlan.h"
#include "replay/Replayer.h"
#include "replay/ShardResults.h"

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

namespace {

// The outcome `bud corpus merge` gives from window shards of `p` (through their results files'
// JSON, as they cross machines), `shards` of them, each verifying its windows 2 at a time.
std::optional<ReplayOutcome> merged_window_shards(const Packet& p, uint32_t shards,
                                                  std::vector<uint32_t> drop = {}) {
  std::vector<ShardFile> files;
  for (uint32_t i = 0; i < shards; ++i) {
    if (std::find(drop.begin(), drop.end(), i) != drop.end()) continue;
    ShardResults r{{i, shards}, "--shard", "rev", {}, std::nullopt};
    r.result.total_packets = 1;
    r.window_shard = replay_window_shard(p, {}, {i, shards}, 2);
    std::string error;
    auto back = ShardResults::parse(r.to_json().dump(), "shard.json", error);
    INFO(error);
    REQUIRE(back);
    files.push_back({"shard-" + std::to_string(i) + ".json", std::move(*back)});
  }
  std::string error;
  auto m = merge_shards(files, 0, error);
  INFO(error);
  REQUIRE(m);
  if (!drop.empty()) {
    CHECK(m->missing.size() == drop.size());
    CHECK(m->result.outcomes.empty());
    return std::nullopt;
  }
  REQUIRE(m->result.outcomes.size() == 1);
  return m->result.outcomes.front();
}

// A clean mlp packet with small intervals (many windows), recorded into `dir` as base.bpk.
std::string record_clean_mlp(const std::filesystem::path& dir) {
  run::RunOptions o;
  o.workload = "mlp";
  const auto base = (dir / "base.bpk").string();
  test::record(base, o, small_intervals());
  return base;
}

// `base` copied to `path` with the first recorded digest of each window in `at` flipped.
void flip_digests(const std::string& base, const std::string& path, std::vector<uint32_t> at) {
  test::PacketEdits edits;
  edits.window = [at](pb::Window& w) {
    if (std::find(at.begin(), at.end(), w.index()) != at.end())
      w.mutable_digests(0)->set_digest(w.digests(0).digest() ^ 1);
  };
  test::rewrite_packet(base, path, edits);
}

}  // namespace

TEST_CASE("window shards across machines: merged, the serial verdict and first divergent window",
          "[replay][windows][shards]") {
  const auto dir = test::temp_dir("windows_shards");
  const auto base = record_clean_mlp(dir);
  const auto hang = (dir / "hang.bpk").string();
  test::record(hang, test::starved_queue_run(), small_intervals());
  std::string error;
  const auto p = read_packet(base, error);
  REQUIRE(p);
  const auto n = static_cast<uint32_t>(p->windows.size());
  REQUIRE(n >= 6);
  std::vector<std::string> paths{base, hang};
  for (const std::vector<uint32_t>& at :
       std::vector<std::vector<uint32_t>>{{0}, {n / 2}, {n - 1}, {n - 2, 1}}) {
    const auto path = (dir / ("w" + std::to_string(at.front()) + ".bpk")).string();
    flip_digests(base, path, at);
    paths.push_back(path);
  }
  for (const auto& path : paths) {
    const auto packet = read_packet(path, error);
    REQUIRE(packet);
    const auto serial = bud::replay::replay(*packet, {});
    for (uint32_t shards : {1u, 2u, 3u, 5u}) {
      INFO(path << ", " << shards << " shards, serial: " << serial.message);
      const auto merged = merged_window_shards(*packet, shards);
      REQUIRE(merged);
      CHECK(verdict_name(merged->verdict) == std::string(verdict_name(serial.verdict)));
      CHECK(merged->message == serial.message);
      CHECK(merged->start_cycle == serial.start_cycle);
      CHECK(merged->end_cycle == serial.end_cycle);
      CHECK(merged->digests_checked == serial.digests_checked);
      CHECK(merged->windows_checked == serial.windows_checked);
      REQUIRE(merged->divergence.has_value() == serial.divergence.has_value());
      if (serial.divergence) CHECK(merged->divergence->describe() == serial.divergence->describe());
    }
  }
  // A missing shard leaves no outcome: the merge lists it (bud corpus merge exits 4).
  const auto packet = read_packet(paths.back(), error);
  REQUIRE(packet);
  CHECK_FALSE(merged_window_shards(*packet, 3, {1}));
}

TEST_CASE("bud replay P --shard I/N --results, then bud corpus merge, equals bud replay P",
          "[replay][windows][shards][cli]") {
  const auto dir = test::temp_dir("windows_shards_cli");
  const auto base = record_clean_mlp(dir);
  std::string error;
  const auto n = static_cast<uint32_t>(read_packet(base, error)->windows.size());
  const auto path = (dir / "div.bpk").string();
  flip_digests(base, path, {n / 2});
  const auto q = [](const std::filesystem::path& f) { return "'" + f.string() + "'"; };
  const auto bud = test::bud_exe();
  CHECK(test::shell(bud + " replay " + q(path) + " --junit " + q(dir / "whole.xml") +
                    " >/dev/null 2>&1") == 125);
  // Shard 0 from --shard, shard 1 from Slurm's variables, shard 2 from LSF's.
  CHECK(test::shell(bud + " replay " + q(path) + " --shard 0/3 --results " + q(dir / "res") +
                    " >/dev/null") == 0);
  CHECK(test::shell("SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=3 " + bud + " replay " + q(path) +
                    " -j 2 --results " + q(dir / "res") + " >/dev/null") == 0);
  CHECK(test::shell(bud + " corpus merge " + q(dir / "m1") + " " + q(dir / "res") +
                    " >/dev/null 2>&1") == kExitInconsistent);
  CHECK(test::shell("LSB_JOBINDEX=3 LSB_JOBINDEX_END=3 " + bud + " replay " + q(path) +
                    " --results " + q(dir / "res") + " >/dev/null") == 0);
  CHECK(test::shell(bud + " corpus merge " + q(dir / "m") + " " + q(dir / "res") + " --json >" +
                    q(dir / "m.json")) == 1);
  const auto j = test::slurp((dir / "m.json").string());
  CHECK(j.find("\"diverged\":1") != std::string::npos);
  const auto strip_times = [](const std::string& x) {
    return std::regex_replace(x, std::regex("time=\"[0-9.]+\""), "time=\"T\"");
  };
  const auto merged = strip_times(test::slurp((dir / "m" / "replay.xml").string()));
  CHECK(merged.find("window " + std::to_string(n / 2)) != std::string::npos);
  CHECK(merged == strip_times(test::slurp((dir / "whole.xml").string())));
}
