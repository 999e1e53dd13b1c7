// bud corpus merge: shard results files combined into one report; missing, duplicated and
// mismatched shards named; and a sharded replay of the build's corpus merged equals the
// unsharded replay.
#include "replay/CorpusMerge.h"

#include <catch2/catch.hpp>
#include <regex>
#include <string>

#include "ReplayTestSupport.h"

using namespace bud;
using namespace bud::replay;

namespace {

// Shard `index` of `total` of a corpus of `packets` made-up packets (p000.bpk, ...): packet i
// passes, or reproduces when i % 3 == 0.
ShardResults fake_shard(uint32_t index, uint32_t total, uint64_t packets) {
  ShardResults r;
  r.shard = {index, total};
  r.source = "--shard";
  r.result.total_packets = packets;
  for (uint64_t i = index; i < packets; i += total) {
    ReplayOutcome o;
    o.packet = "corpus/p" + std::to_string(100 + i).substr(1) + ".bpk";
    o.verdict = i % 3 == 0 ? Verdict::Reproduced : Verdict::Passed;
    o.message = i % 3 == 0 ? "symptom reproduced: hang at cycle 7: x" : "no symptom";
    r.result.outcomes.push_back(o);
    r.result.corpus_index.push_back(i);
    r.result.seconds.push_back(0.5);
  }
  return r;
}

std::string write_shard(const std::filesystem::path& dir, const ShardResults& r,
                        const std::string& name = "") {
  const auto path = dir / ((name.empty() ? r.shard.file_stem() : name) + ".json");
  REQUIRE(write_file_atomically(path.string(), r.to_json().dump(1)).empty());
  return path.string();
}

std::optional<MergedCorpus> merge_dir(const std::filesystem::path& dir, std::string& error,
                                      uint32_t expected = 0) {
  auto paths = shard_result_files({dir.string()}, expected > 0, error);
  if (!paths) return std::nullopt;
  auto files = read_shard_files(*paths, error);
  if (!files) return std::nullopt;
  return merge_shards(*files, expected, error);
}

}  // namespace

TEST_CASE("merge: shard results round-trip and combine in corpus order", "[replay][merge]") {
  const auto dir = test::temp_dir("merge_ok");
  for (uint32_t s = 0; s < 3; ++s) write_shard(dir, fake_shard(s, 3, 10));
  std::string error;
  auto m = merge_dir(dir, error);
  INFO(error);
  REQUIRE(m);
  CHECK(m->missing.empty());
  REQUIRE(m->result.outcomes.size() == 10);
  for (size_t i = 0; i < 10; ++i) CHECK(m->result.corpus_index[i] == i);
  CHECK(m->result.outcomes[3].packet == "corpus/p03.bpk");
  CHECK(m->result.outcomes[3].verdict == Verdict::Reproduced);
  CHECK(m->exit_code() == 1);
  const auto summary = m->summary_json();
  CHECK(summary["verdicts"]["reproduced"] == 4);
  CHECK(summary["verdicts"]["passed"] == 6);
  const auto xml = m->junit();
  CHECK(xml.find("tests=\"10\" failures=\"4\" errors=\"0\"") != std::string::npos);
}

TEST_CASE("merge: a missing shard is named and is an error test case", "[replay][merge]") {
  const auto dir = test::temp_dir("merge_missing");
  write_shard(dir, fake_shard(0, 4, 10));
  write_shard(dir, fake_shard(2, 4, 10));
  write_shard(dir, fake_shard(3, 4, 10));
  std::string error;
  auto m = merge_dir(dir, error);
  REQUIRE(m);
  REQUIRE(m->missing.size() == 1);
  CHECK(m->missing[0].text() == "1/4");
  CHECK(m->exit_code() == kExitInconsistent);
  const auto xml = m->junit();
  CHECK(xml.find("name=\"shard-0001-of-0004\"") != std::string::npos);
  CHECK(xml.find("type=\"missing-shard\"") != std::string::npos);
  // No results at all, but the merge was told to expect 2 shards: both missing.
  const auto empty = test::temp_dir("merge_none");
  auto none = merge_dir(empty / "results", error, 2);
  INFO(error);
  REQUIRE(none);
  CHECK(none->missing.size() == 2);
  // Without --expect-shards an empty directory is bad input.
  CHECK_FALSE(merge_dir(empty, error));
  CHECK(error.find("no shard results") != std::string::npos);
}

TEST_CASE("merge: duplicated and mismatched shards are one error naming the files",
          "[replay][merge]") {
  std::string error;
  SECTION("the same shard twice") {
    const auto dir = test::temp_dir("merge_dup");
    write_shard(dir, fake_shard(0, 2, 6));
    write_shard(dir, fake_shard(1, 2, 6));
    write_shard(dir, fake_shard(1, 2, 6), "shard-0001-of-0002-requeued");
    CHECK_FALSE(merge_dir(dir, error));
    CHECK(error.find("shard 1/2 twice") != std::string::npos);
    CHECK(error.find("requeued") != std::string::npos);
  }
  SECTION("different shard counts") {
    const auto dir = test::temp_dir("merge_totals");
    write_shard(dir, fake_shard(0, 2, 6));
    write_shard(dir, fake_shard(1, 3, 6));
    CHECK_FALSE(merge_dir(dir, error));
    CHECK(error.find("different shard counts") != std::string::npos);
    CHECK_FALSE(merge_dir(dir, error, 2));
    CHECK(error.find("--expect-shards") != std::string::npos);
  }
  SECTION("different corpora") {
    const auto dir = test::temp_dir("merge_corpora");
    write_shard(dir, fake_shard(0, 2, 6));
    write_shard(dir, fake_shard(1, 2, 7));
    CHECK_FALSE(merge_dir(dir, error));
    CHECK(error.find("different corpora") != std::string::npos);
  }
  SECTION("a shard short of packets") {
    const auto dir = test::temp_dir("merge_short");
    write_shard(dir, fake_shard(0, 2, 6));
    auto s = fake_shard(1, 2, 6);
    s.result.outcomes.pop_back();
    s.result.corpus_index.pop_back();
    s.result.seconds.pop_back();
    write_shard(dir, s);
    CHECK_FALSE(merge_dir(dir, error));
    CHECK(error.find("holds 2 packets") != std::string::npos);
  }
  SECTION("a file that is not shard results") {
    const auto dir = test::temp_dir("merge_bad");
    std::ofstream(dir / "shard-0000-of-0001.json") << "{\"format\": \"something\"}";
    CHECK_FALSE(merge_dir(dir, error));
    CHECK(error.find("shard-0000-of-0001.json: format must be") != std::string::npos);
    std::ofstream(dir / "shard-0000-of-0001.json") << "not json";
    CHECK_FALSE(merge_dir(dir, error));
    CHECK(error.find("not JSON") != std::string::npos);
  }
}

TEST_CASE("bud replay --results per shard, then bud corpus merge, equals the whole replay",
          "[replay][merge][cli]") {
  const auto dir = test::temp_dir("merge_cli");
  const std::string corpus = BUD_REPLAY_CORPUS;
  const auto q = [](const std::filesystem::path& f) { return "'" + f.string() + "'"; };
  using test::shell;
  const auto bud = test::bud_exe();
  CHECK(shell(bud + " replay " + q(corpus) + " --junit " + q(dir / "whole.xml") + " >/dev/null") ==
        1);
  // Shard 0 from --shard, shard 1 from Slurm's variables, shard 2 from GitLab's.
  CHECK(shell(bud + " replay " + q(corpus) + " --shard 0/3 --results " + q(dir / "res") +
              " >/dev/null") == 1);
  CHECK(shell("SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=3 " + bud + " replay " + q(corpus) +
              " --results " + q(dir / "res") + " >/dev/null") == 1);
  // Missing shard first: exit 4 naming it, report still written.
  CHECK(shell(bud + " corpus merge " + q(dir / "m1") + " " + q(dir / "res") + " 2>" +
              q(dir / "m1.err") + " >/dev/null") == kExitInconsistent);
  CHECK(test::slurp((dir / "m1.err").string()).find("2/3") != std::string::npos);
  CHECK(shell("CI_NODE_INDEX=3 CI_NODE_TOTAL=3 " + bud + " replay " + q(corpus) + " --results " +
              q(dir / "res") + " >/dev/null") == 1);
  CHECK(std::filesystem::exists(dir / "res" / "shard-0002-of-0003.xml"));
  CHECK(shell(bud + " corpus merge " + q(dir / "m") + " " + q(dir / "res") + " --json >" +
              q(dir / "m.json")) == 1);
  const auto j = test::slurp((dir / "m.json").string());
  CHECK(j.find("\"total_packets\":4") != std::string::npos);
  CHECK(j.find("\"reproduced\":3") != std::string::npos);
  // The merged report lists the same test cases with the same verdicts as the whole replay.
  const auto strip_times = [](const std::string& x) {
    return std::regex_replace(x, std::regex("time=\"[0-9.]+\""), "time=\"T\"");
  };
  CHECK(strip_times(test::slurp((dir / "m" / "replay.xml").string())) ==
        strip_times(test::slurp((dir / "whole.xml").string())));
  // A malformed variable is one error naming it, exit 2.
  CHECK(shell("CI_NODE_INDEX=x CI_NODE_TOTAL=3 " + bud + " replay " + q(corpus) + " --json >" +
              q(dir / "bad.json") + " 2>/dev/null") == 2);
  CHECK(test::slurp((dir / "bad.json").string()).find("CI_NODE_INDEX='x'") != std::string::npos);
}
