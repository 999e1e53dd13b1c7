// End to end through the bud binary, as a user or CI would run it: record, inspect, replay exit
// codes (git bisect run), bad input, kill -9 during recording, byte-identical packets, corpus
// mode with JUnit and sharding.
#include <catch2/catch.hpp>
#include <regex>
#include <string>

#include "ReplayTestSupport.h"
#include "replay/Framing.h"

using namespace bud;
using test::bud_exe;
using test::shell;
using test::slurp;

namespace {

std::string q(const std::filesystem::path& p) { return "'" + p.string() + "'"; }

}  // namespace

TEST_CASE("bud run --record, bud packet inspect and bud replay", "[replay][cli]") {
  const auto dir = test::temp_dir("cli_basic");
  const auto pkt = dir / "mm.bpk";
  CHECK(shell(bud_exe() + " run gemm_small --fault 'memflip:dram:0x10000[3]@10' --record " +
              q(pkt) +
              " --checkpoint-interval 512 --digest-interval 128 --annotate 'first look' >" +
              q(dir / "run.out") + " 2>&1") == 1);
  CHECK(shell(bud_exe() + " packet inspect --json " + q(pkt) + " >" + q(dir / "inspect.json")) ==
        0);
  const auto j = slurp((dir / "inspect.json").string());
  CHECK(j.find("\"symptom\":{\"kind\":\"result-mismatch\",\"cycle\":940") != std::string::npos);
  CHECK(j.find("\"faults\":[\"memflip:dram:0x10000[3]@10\"]") != std::string::npos);
  CHECK(j.find("\"seeds\":{\"workload\":1,\"memory\":1,\"verilator\":1}") != std::string::npos);
  CHECK(j.find("\"text\":\"first look\"") != std::string::npos);
  CHECK(j.find("\"size_by_kind\":{\"header\":{\"records\":1") != std::string::npos);
  CHECK(shell(bud_exe() + " packet inspect " + q(pkt) + " >" + q(dir / "inspect.txt")) == 0);
  CHECK(slurp((dir / "inspect.txt").string()).find("symptom      result-mismatch at cycle 940") !=
        std::string::npos);
  // git bisect run: 1 = the symptom is there.
  CHECK(shell(bud_exe() + " replay " + q(pkt) + " >" + q(dir / "replay.out")) == 1);
  CHECK(slurp((dir / "replay.out").string()).find("reproduced") != std::string::npos);
  CHECK(shell(bud_exe() + " replay --at 700 --json " + q(pkt) + " >" + q(dir / "at.json")) == 1);
  CHECK(slurp((dir / "at.json").string()).find("\"start_cycle\":512") != std::string::npos);
  // A passing recording: 0.
  CHECK(shell(bud_exe() + " run mlp --record " + q(dir / "ok.bpk") + " >/dev/null 2>&1") == 0);
  CHECK(shell(bud_exe() + " replay " + q(dir / "ok.bpk") + " >/dev/null") == 0);
  // Usage errors: 2.
  CHECK(shell(bud_exe() + " replay " + q(pkt) + " --shard 3/2 2>/dev/null") == 2);
  CHECK(shell(bud_exe() + " run mlp --record " + q(dir / "x.bpk") +
              " --checkpoint-interval 1000 --digest-interval 300 2>/dev/null") == 2);
}

TEST_CASE("the same command twice writes byte-identical packets", "[replay][cli]") {
  const auto dir = test::temp_dir("cli_identical");
  for (const char* n : {"a.bpk", "b.bpk"})
    REQUIRE(shell(bud_exe() + " run conv --mem-bursty --mem-seed 5 --record " + q(dir / n) +
                  " --checkpoint-interval 2048 --digest-interval 512 >/dev/null 2>&1") == 0);
  CHECK(test::read_bytes((dir / "a.bpk").string()) == test::read_bytes((dir / "b.bpk").string()));
}

TEST_CASE("bad packets: one clear error with the byte offset, exit 125 (replay) or 2 (inspect)",
          "[replay][cli][bad]") {
  const auto dir = test::temp_dir("cli_bad");
  const auto good = dir / "good.bpk";
  REQUIRE(shell(bud_exe() + " run gemm_small --record " + q(good) + " >/dev/null 2>&1") == 0);
  const auto bytes = test::read_bytes(good.string());
  struct Case {
    std::string name;
    std::vector<uint8_t> bytes;
    std::string expect;
  };
  std::vector<Case> cases;
  cases.push_back({"empty", {}, "empty file (0 bytes)"});
  {
    auto b = bytes;
    b[0] = 'P';
    cases.push_back({"magic", b, "byte 0: not a bud replay packet"});
  }
  {
    auto b = bytes;
    replay::put_u16(b.data() + 8, 9);
    replay::put_u32(b.data() + 12, replay::crc32c({b.data(), 12}));
    cases.push_back(
        {"future", b,
         "byte 8: packet format 9." + std::to_string(replay::kFormatMinor) + " is not readable"});
  }
  {
    auto b = bytes;
    b[bytes.size() / 2] ^= 0x04;
    cases.push_back({"flipped", b, "checksum mismatch"});
  }
  {
    auto b = bytes;
    b.resize(bytes.size() / 2);
    cases.push_back({"truncated", b, "incomplete packet"});
  }
  for (const auto& c : cases) {
    INFO(c.name);
    const auto path = dir / (c.name + ".bpk");
    test::write_bytes(path.string(), c.bytes);
    const auto err = dir / (c.name + ".err");
    CHECK(shell(bud_exe() + " replay " + q(path) + " >/dev/null 2>" + q(err)) == 125);
    const auto msg = slurp(err.string());
    CHECK(msg.find(c.expect) != std::string::npos);
    CHECK(std::count(msg.begin(), msg.end(), '\n') == 1);
    CHECK(msg.find("byte") != std::string::npos);
    if (c.name != "truncated")
      CHECK(shell(bud_exe() + " packet inspect " + q(path) + " >/dev/null 2>/dev/null") == 2);
  }
  CHECK(shell(bud_exe() + " replay " + q(dir / "missing.bpk") + " 2>/dev/null") == 125);
}

TEST_CASE("kill -9 during recording leaves a packet that replays to its last checkpoint",
          "[replay][cli][kill]") {
  const auto dir = test::temp_dir("cli_kill");
  const auto pkt = dir / "killed.bpk";
  // The recorder raises SIGKILL itself at cycle 20000: deterministic, no timing races.
  const int status = shell("BUD_TEST_KILL_AT_CYCLE=20000 " + bud_exe() +
                           " run compute_bound --checkpoint-interval 8192 --digest-interval 1024"
                           " --record " +
                           q(pkt) + " >/dev/null 2>&1");
  CHECK(status == 128 + 9);
  std::string error;
  auto p = replay::read_packet(pkt.string(), error);
  REQUIRE(p);
  CHECK_FALSE(p->complete);
  CHECK_FALSE(p->result);
  REQUIRE(p->checkpoints.size() == 3);  // cycles 0, 8192, 16384
  CHECK(p->last_cycle() == 16384);
  CHECK(shell(bud_exe() + " replay " + q(pkt) + " >/dev/null 2>" + q(dir / "refused.err")) == 125);
  CHECK(slurp((dir / "refused.err").string()).find("--allow-incomplete") != std::string::npos);
  CHECK(shell(bud_exe() + " replay --allow-incomplete --json " + q(pkt) + " >" + q(dir / "r.json") +
              " 2>/dev/null") == 0);
  const auto j = slurp((dir / "r.json").string());
  CHECK(j.find("\"verdict\":\"passed\"") != std::string::npos);
  CHECK(j.find("\"end_cycle\":16384") != std::string::npos);
  CHECK(j.find("\"digests_checked\":16") != std::string::npos);
}

TEST_CASE("corpus mode: the build's corpus replays, JUnit report, shards",
          "[replay][cli][corpus]") {
  const auto dir = test::temp_dir("cli_corpus");
  const std::string corpus = BUD_REPLAY_CORPUS;
  const auto xml = dir / "replay.xml";
  // Known failures still fail: exit 1 like any bad result.
  CHECK(shell(bud_exe() + " replay " + q(corpus) + " --junit " + q(xml) + " -j 2 >" +
              q(dir / "out.txt")) == 1);
  const auto x = slurp(xml.string());
  // Wall time varies: match it as a number (tests/e2e/junit_report.py checks the structure).
  CHECK(std::regex_search(x, std::regex("<testsuite name=\"bud-replay\" tests=\"4\" "
                                        "failures=\"3\" errors=\"0\" skipped=\"0\" "
                                        "time=\"[0-9]+\\.[0-9]{3}\">")));
  CHECK(std::regex_search(x, std::regex("name=\"hang_starved_queue.bpk\" classname=\"bud-replay\" "
                                        "time=\"[0-9.]+\">\\s*<failure type=\"reproduced\" "
                                        "message=\"symptom reproduced: hang")));
  CHECK(std::regex_search(x, std::regex("name=\"mismatch_memflip.bpk\" classname=\"bud-replay\" "
                                        "time=\"[0-9.]+\">\\s*<failure type=\"reproduced\" "
                                        "message=\"symptom reproduced: result-mismatch")));
  CHECK(x.find("verdict: passed") != std::string::npos);
  CHECK(slurp((dir / "out.txt").string()).find("corpus: 4 of 4 packets") != std::string::npos);
  // Bazel sharding: shard 1 of 2 gets packets 1 and 3 (sorted by name).
  const auto status_file = dir / "shard_status";
  CHECK(shell("TEST_SHARD_INDEX=1 TEST_TOTAL_SHARDS=2 TEST_SHARD_STATUS_FILE=" + q(status_file) +
              " " + bud_exe() + " replay " + q(corpus) + " --json >" + q(dir / "shard.json")) == 1);
  const auto s = slurp((dir / "shard.json").string());
  CHECK(s.find("\"shard\":\"1/2\"") != std::string::npos);
  CHECK(s.find("hang_dram_drop.bpk") != std::string::npos);
  CHECK(s.find("mismatch_memflip.bpk") != std::string::npos);
  CHECK(s.find("clean_mlp.bpk") == std::string::npos);
  CHECK(std::filesystem::exists(status_file));
  // --shard overrides; the clean packet alone passes.
  CHECK(shell(bud_exe() + " replay " + q(corpus) + " --shard 0/4 >/dev/null") == 0);
}

TEST_CASE("bud debug --packet and the prompt's record start/stop", "[replay][cli][debug]") {
  const auto dir = test::temp_dir("cli_debug");
  const std::string corpus = BUD_REPLAY_CORPUS;
  std::ofstream(dir / "go.bud") << "info checkpoints\ngoto 2500\ncontinue\n";
  CHECK(shell(bud_exe() + " debug --packet " +
              q(std::filesystem::path(corpus) / "hang_starved_queue.bpk") + " -x " +
              q(dir / "go.bud") + " --batch >" + q(dir / "debug.out") + " 2>&1") == 0);
  const auto out = slurp((dir / "debug.out").string());
  CHECK(out.find("packet@2048") != std::string::npos);
  // A forward goto starts from the packet's latest checkpoint before the target.
  CHECK(out.find("stopped at cycle 2500: goto  (re-executed 452 cycles)") != std::string::npos);
  CHECK(out.find("stopped at cycle 3520: hang") != std::string::npos);
  // Record a range at the prompt, then replay it: the hang at its end reproduces.
  const auto pkt = dir / "prompt.bpk";
  std::ofstream(dir / "rec.bud") << "step 1500\nrecord start " << pkt.string()
                                 << "\ncontinue\nrecord stop\n";
  CHECK(shell(bud_exe() +
              " debug gemm_small --fault 'stuck:tokens[0][0]=0@100' --hang-cycles 3000"
              " -x " +
              q(dir / "rec.bud") + " --batch >" + q(dir / "rec.out") + " 2>&1") == 0);
  CHECK(slurp((dir / "rec.out").string()).find("recorded cycles 1500..3520") != std::string::npos);
  CHECK(shell(bud_exe() + " replay --json " + q(pkt) + " >" + q(dir / "replay.json")) == 1);
  const auto j = slurp((dir / "replay.json").string());
  CHECK(j.find("\"verdict\":\"reproduced\"") != std::string::npos);
  CHECK(j.find("\"start_cycle\":1500") != std::string::npos);
}
