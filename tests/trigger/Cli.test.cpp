// The `bud` binary as a user runs it: `bud trigger check` (exit 0/2, FILE:LINE:COL), `bud run
// --triggers` (report section, --json, nothing runs with an invalid file), the examples.
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/trigger/TriggerTestSupport.h"

namespace {

struct Result {
  int status = -1;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

Result bud_run(const std::string& args) {
  const auto dir = std::filesystem::path(BUD_BINARY_DIR) / "trigger_test" / "cli";
  std::filesystem::create_directories(dir);
  // Per process: ctest runs the test cases of this file in parallel, in the same directory.
  const std::string tag = std::to_string(getpid());
  const std::string out = (dir / ("out-" + tag + ".txt")).string(),
                    err = (dir / ("err-" + tag + ".txt")).string();
  const std::string cmd = "cd " + dir.string() + " && " + std::string(BUD_BINARY_DIR) + "/bud " +
                          args + " >" + out + " 2>" + err + " </dev/null";
  const int rc = std::system(cmd.c_str());
  Result r;
  r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

std::string write(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::path(BUD_BINARY_DIR) / "trigger_test" / "cli" / name;
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
  return path.string();
}

const std::string kExamples = std::string(BUD_SOURCE_DIR) + "/examples/triggers/";

}  // namespace

TEST_CASE("bud trigger check validates without running", "[trigger][cli]") {
  for (const char* f : {"memory_stall_burst.trig", "dependency_starvation.trig",
                        "throughput_drop.trig", "saturation_storm.trig"}) {
    auto r = bud_run("trigger check " + kExamples + f + " --workload conv");
    INFO(f << ": " << r.err);
    CHECK(r.status == 0);
    CHECK(r.out.find(": ok, ") != std::string::npos);
  }
  const auto bad = write("bad.trig", "trigger t\n  when load.stal_mem > 3\n  do halt\nend\n");
  auto r = bud_run("trigger check " + bad);
  CHECK(r.status == 2);
  CHECK(r.err.find("bad.trig:2:8: error: unknown name 'load.stal_mem' (did you mean "
                   "load.stall_mem") != std::string::npos);
  r = bud_run("trigger check " + bad + " --json");
  CHECK(r.status == 2);
  CHECK(r.out.find("\"valid\":false") != std::string::npos);
  CHECK(r.out.find("\"line\":2,\"column\":8") != std::string::npos);
  r = bud_run("trigger check /nonexistent.trig");
  CHECK(r.status == 2);
}

TEST_CASE("bud run --triggers: nothing runs with an invalid file, hits in the report",
          "[trigger][cli]") {
  const auto bad = write("bad2.trig", "trigger t when cycle > 3 do hlat\n");
  auto r = bud_run("run gemm_small --triggers " + bad);
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find("bad2.trig:1:29: error: unknown action 'hlat' (did you mean halt?)") !=
        std::string::npos);

  const auto good = write("good.trig",
                          "trigger at500 shots 1 when cycle == 500 do capture pre 10 post 10, "
                          "log \"five hundred\"\n"
                          "trigger never when assertion do halt\n");
  r = bud_run("run gemm_small --triggers " + good + " --capture-dir caps");
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.out.find("cycle 500: at500 hit 1 (armed) cycle == 500") != std::string::npos);
  CHECK(r.out.find("captured cycles 490..510") != std::string::npos);
  CHECK(r.out.find("never: not fired") != std::string::npos);
  r = bud_run("run gemm_small --triggers " + good + " --capture-dir caps --json");
  CHECK(r.status == 0);
  CHECK(r.out.find("\"triggers\":{\"hits\":[{\"cycle\":500,\"trigger\":\"at500\"") !=
        std::string::npos);

  const auto halt = write("halt.trig", "trigger stop when cycle == 300 do halt\n");
  r = bud_run("run gemm_small --triggers " + halt);
  CHECK(r.status == 1);
  CHECK(r.out.find("halted by trigger stop at cycle 300") != std::string::npos);
}

TEST_CASE("bud run --triggers: a result mismatch fires at the end of the run", "[trigger][cli]") {
  const auto t = write("mismatch.trig",
                       "trigger bad when mismatch do log \"wrong result\"\n"
                       "trigger done when finished do log \"end\"\n");
  auto r = bud_run("run gemm_small --fault flip:compute.m_left[0]@400 --triggers " + t);
  CHECK(r.status == 1);
  CHECK(r.out.find("bad hit 1 (armed) mismatch") != std::string::npos);
  CHECK(r.out.find("done hit 1 (armed) finished") != std::string::npos);
  r = bud_run("run gemm_small --triggers " + t);
  CHECK(r.status == 0);
  CHECK(r.out.find("bad: not fired") != std::string::npos);
}

TEST_CASE("bud debug: the record action writes a packet of the run up to the hit that replays",
          "[trigger][cli][record]") {
  const auto dir = std::filesystem::path(BUD_BINARY_DIR) / "trigger_test" / "cli";
  std::filesystem::remove(dir / "trigger-rec-1.bpk");
  const auto trig = write("rec.trig",
                          "trigger rec shots 1\n  when load.stall_mem >= 500\n  do record, log "
                          "\"rec\"\nend\n");
  const auto script = write("rec.bud", "continue\ntrigger hits\n");
  auto r = bud_run("debug conv --triggers " + trig + " -x " + script + " --batch --json");
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  CHECK(r.out.find("\"record\":\"trigger-rec-1.bpk\"") != std::string::npos);
  REQUIRE(std::filesystem::exists(dir / "trigger-rec-1.bpk"));
  // Independently: the cycle at which load.stall_mem first reaches 500.
  const auto s = bud::test::record("conv");
  const int stall = *bud::isa::find_counter("load.stall_mem");
  uint64_t want = 0;
  while (s.at(stall, want) < 500) ++want;
  r = bud_run("replay trigger-rec-1.bpk");
  CHECK(r.status == 0);
  CHECK(r.out.find("up to cycle " + std::to_string(want)) != std::string::npos);
}

TEST_CASE("bud run --triggers --record: one simulation records --record and each record action's file",
          "[trigger][cli][record]") {
  const auto dir = std::filesystem::path(BUD_BINARY_DIR) / "trigger_test" / "cli";
  for (const char* f : {"once-all.bpk", "once-hit.bpk", "once-never.bpk", "once-hit.bpk.partial",
                        "once-never.bpk.partial"})
    std::filesystem::remove(dir / f);
  const auto trig = write("once.trig",
                          "trigger rec shots 1\n  when load.stall_mem >= 500\n  do record "
                          "once-hit.bpk, log \"rec\"\nend\n"
                          "trigger never\n  when cycles > 4000000000\n  do record once-never.bpk\n"
                          "end\n");
  auto r = bud_run("run conv --triggers " + trig + " --record once-all.bpk --json");
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  // The triggers, the checks and both packets watched one simulation of the run.
  CHECK(j.at("driven_cycles") == j.at("cycles"));
  CHECK(std::filesystem::exists(dir / "once-all.bpk"));
  CHECK(std::filesystem::exists(dir / "once-hit.bpk"));
  // A record action that never fired leaves nothing; no partial file stays behind.
  CHECK_FALSE(std::filesystem::exists(dir / "once-never.bpk"));
  CHECK_FALSE(std::filesystem::exists(dir / "once-never.bpk.partial"));
  CHECK_FALSE(std::filesystem::exists(dir / "once-hit.bpk.partial"));
  for (const char* p : {"once-all.bpk", "once-hit.bpk"}) {
    const auto rep = bud_run(std::string("replay ") + p);
    INFO(p << ": " << rep.out << rep.err);
    CHECK(rep.status == 0);
    CHECK(rep.out.find("digests bit-exact") != std::string::npos);
  }
  // Each file carries the notes meant for it.
  const auto hit = nlohmann::json::parse(bud_run("packet inspect once-hit.bpk --json").out);
  const auto all = nlohmann::json::parse(bud_run("packet inspect once-all.bpk --json").out);
  CHECK(hit.dump().find("trigger rec hit 1 at cycle") != std::string::npos);
  CHECK(all.dump().find("trigger rec hit 1 at cycle") != std::string::npos);
  CHECK(all.dump().find("\"triggers\"") != std::string::npos);
}

TEST_CASE("bud run --triggers --record: a halted run's packet stops at the halt and replays",
          "[trigger][cli][record]") {
  const auto dir = std::filesystem::path(BUD_BINARY_DIR) / "trigger_test" / "cli";
  std::filesystem::remove(dir / "halted.bpk");
  const auto trig = write("halt.trig", "trigger stop when load.stall_mem >= 500 do halt\n");
  auto r = bud_run("run conv --triggers " + trig + " --record halted.bpk --json");
  INFO(r.out << r.err);
  REQUIRE(r.status == 1);
  const auto j = nlohmann::json::parse(r.out);
  const uint64_t halted_at = j.at("cycles");
  // Independently: the first cycle at which load.stall_mem reaches 500.
  const auto s = bud::test::record("conv");
  const int stall = *bud::isa::find_counter("load.stall_mem");
  uint64_t want = 0;
  while (s.at(stall, want) < 500) ++want;
  CHECK(halted_at == want);
  CHECK(j.at("driven_cycles").get<uint64_t>() >= halted_at);
  const auto rep = bud_run("replay halted.bpk");
  INFO(rep.out << rep.err);
  CHECK(rep.status == 0);
  CHECK(rep.out.find("up to cycle " + std::to_string(want)) != std::string::npos);
}

TEST_CASE("bud debug: record stop keeps the prompt's deposits and the packet replays bit-exactly",
          "[trigger][cli][record]") {
  const auto dir = std::filesystem::path(BUD_BINARY_DIR) / "trigger_test" / "cli";
  std::filesystem::remove(dir / "deposits.bpk");
  // The write lands in DRAM, which every state digest covers: replaying without it diverges.
  const auto script = write("deposits.bud",
                            "continue 3000\nrecord start deposits.bpk\ncontinue 1000\n"
                            "deposit dram 0x100 0x5a\nforce load.state 0\nstep 3\n"
                            "release load.state\ncontinue 40000\nrecord stop\n");
  auto r = bud_run("debug conv -x " + script + " --batch");
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("3 interventions") != std::string::npos);
  const auto info = nlohmann::json::parse(bud_run("packet inspect deposits.bpk --json").out);
  CHECK(info.at("size_by_kind").at("intervention").at("records") == 3);
  REQUIRE(info.at("interventions").size() == 3);
  CHECK(info.at("interventions")[0].at("kind") == "MEMORY_WRITE");
  CHECK(info.at("interventions")[1].at("kind") == "FORCE");
  CHECK(info.at("interventions")[2].at("kind") == "RELEASE");
  // Forcing the load engine's state makes the load stage miss its transactions: the packet's
  // symptom is that stage mismatch, and replaying with the same interventions reproduces it
  // (exit 1: the symptom is present) with every digest bit-exact.
  CHECK(r.out.find("symptom stage-mismatch") != std::string::npos);
  const auto rep = bud_run("replay deposits.bpk");
  INFO(rep.out << rep.err);
  CHECK(rep.status == 1);
  CHECK(rep.out.find("reproduced") != std::string::npos);
  CHECK(rep.out.find("digests bit-exact") != std::string::npos);
}

TEST_CASE("bud trigger check reports the history a file needs and refuses a hostile one",
          "[trigger][cli][limits]") {
  std::string hostile;
  for (int i = 0; i < 200; ++i)
    hostile += "trigger t" + std::to_string(i) + " when delta(cycles, 16777216) > 0 do halt\n";
  const auto f = write("hostile.trig", hostile);
  auto r = bud_run("trigger check " + f);
  CHECK(r.status == 2);
  CHECK(r.err.find("hostile.trig:2:") != std::string::npos);
  CHECK(r.err.find("trigger 't1'") != std::string::npos);
  // The file limit is a flag: 1 MiB refuses even the first trigger (128 MiB).
  r = bud_run("trigger check " + f + " --max-trigger-history 1 --json");
  CHECK(r.status == 2);
  CHECK(r.out.find("hostile.trig:1:") != std::string::npos);
  CHECK(r.out.find("per file (--max-trigger-history)") != std::string::npos);
  const auto small = write("small.trig", "trigger s when delta(cycles, 1023) > 3 do halt\n");
  r = bud_run("trigger check " + small);
  CHECK(r.status == 0);
  CHECK(r.out.find("8192 bytes of history") != std::string::npos);
  r = bud_run("trigger check " + small + " --json");
  CHECK(r.out.find("\"history_bytes\":8192") != std::string::npos);
}
