// `bud profile` end to end: the binary is run as a user would, its exit status, its one JSON
// object on every path (errors included), and a run still checked bit-exactly as `bud run`.
#include "tests/profile/CliSupport.h"

using bud::profile_test::one_object;
using bud::profile_test::read_all;
using bud::profile_test::run_bud;

TEST_CASE("bud profile --json: one object, the run checked as bud run", "[profile][cli]") {
  const auto p = run_bud("profile conv --json");
  INFO(p.err);
  REQUIRE(p.status == 0);
  const auto j = one_object(p.out);
  const auto r = run_bud("run conv --json");
  REQUIRE(r.status == 0);
  const auto rj = one_object(r.out);
  // Same run, same checks: cycles, counters and digests equal those of bud run.
  CHECK(j["run"]["passed"] == true);
  CHECK(j["run"]["cycles"] == rj["cycles"]);
  CHECK(j["run"]["driven_cycles"] == rj["cycles"]);
  CHECK(j["run"]["state_digest"] == rj["state_digest"]);
  CHECK(j["run"]["output_digest"] == rj["output_digest"]);
  CHECK(j["run"]["counters"] == rj["counters"]);
  const auto& prof = j["profile"];
  REQUIRE(prof["layers"].size() == 4);
  CHECK(prof["layers"][0]["name"] == "conv1");
  CHECK(prof["layers"][0]["kind"] == "conv2d");
  uint64_t bp = 0;
  for (const auto& item : prof["model"]["topdown"]["classes"].items()) {
    const auto& c = item.value();
    bp += c["basis_points"].get<uint64_t>();
    uint64_t subs = 0;
    for (const auto& s : c["sub"].items()) subs += s.value().get<uint64_t>();
    CHECK(subs == c["slots"].get<uint64_t>());
  }
  CHECK(bp == 10000);
  CHECK(prof["model"]["topdown"]["slots"] == 64 * rj["counters"]["cycles"].get<uint64_t>());
  CHECK(prof["ranking"].size() == 4);
  CHECK(prof["ranking"][0]["rule"].get<std::string>().size() > 0);
  CHECK(prof["roofline"]["layers"].size() == 4);
  CHECK(prof["roofline"]["within_10pct"] == 4);
  std::vector<std::string> kinds;
  for (const auto& t : prof["types"]) kinds.push_back(t["kind"]);
  CHECK(kinds == std::vector<std::string>{"conv2d", "add", "relu"});
}

TEST_CASE("bud profile prints the tables", "[profile][cli]") {
  const auto p = run_bud("profile mlp");
  INFO(p.err);
  REQUIRE(p.status == 0);
  for (const char* s : {"PASS", "per layer", "per layer type", "top-down", "bottlenecks",
                        "roofline", "fc1", "fc3", "MAPE"})
    CHECK(p.out.find(s) != std::string::npos);
}

TEST_CASE("bud profile errors: one JSON object and a distinct exit status", "[profile][cli]") {
  auto no_workload = run_bud("profile no_such_workload --json");
  CHECK(no_workload.status == 2);
  auto j = one_object(no_workload.out);
  CHECK(j["error"] == "bad_input");
  CHECK(j["exit_code"] == 2);
  CHECK(no_workload.err.find("no_such_workload") != std::string::npos);

  auto bad_bw = run_bud("profile gemm_small --mem-bw 0 --json");
  CHECK(bad_bw.status == 2);
  CHECK(one_object(bad_bw.out)["error"] == "bad_input");

  auto usage = run_bud("profile gemm_small --no-such-flag --json");
  CHECK(usage.status == 2);
  CHECK(one_object(usage.out)["error"] == "usage");

  auto bad_fault = run_bud("profile gemm_small --fault flip:no.such.signal[0]@5 --json");
  CHECK(bad_fault.status == 2);
  CHECK(one_object(bad_fault.out)["error"] == "bad_input");

  // A run that fails its checks is still profiled, and exits 1 as bud run does.
  auto failed = run_bud("profile gemm_small --fault flip:compute.m_left[0]@400 --json");
  CHECK(failed.status == 1);
  j = one_object(failed.out);
  CHECK(j["run"]["passed"] == false);
  CHECK(j["profile"]["layers"].size() == 1);

  // The cycle budget: exit 3, and what ran is profiled.
  auto limited = run_bud("profile gemm_small --max-cycles 500 --json");
  CHECK(limited.status == 3);
  j = one_object(limited.out);
  CHECK(j["run"]["state"] == "cycle_limit");
  CHECK(j["profile"]["model"]["topdown"]["slots"] == 64 * 499);
}

TEST_CASE("bud profile of a throttled run names the throttle", "[profile][cli][scenario]") {
  const auto p = run_bud("profile mlp --throttle 3 --throttle-period 4 --json");
  INFO(p.err);
  REQUIRE(p.status == 0);
  const auto j = one_object(p.out);
  for (const auto& b : j["profile"]["ranking"]) CHECK(b["dominant"] == "throttled");
  const auto& classes = j["profile"]["model"]["topdown"]["classes"];
  CHECK(classes["throttled"]["basis_points"].get<int>() > 5000);
}

TEST_CASE("bud profile --trace writes a trace-event file", "[profile][cli][trace]") {
  const std::string path = std::string(BUD_BINARY_DIR) + "/profile_cli_trace.json";
  std::remove(path.c_str());
  const auto p = run_bud("profile gemm_small --trace " + path + " --trace-window 100 --json");
  INFO(p.err);
  REQUIRE(p.status == 0);
  (void)one_object(p.out);
  const auto t = one_object(read_all(path));
  REQUIRE(t["traceEvents"].is_array());
  size_t slices = 0, host = 0;
  for (const auto& e : t["traceEvents"]) {
    slices += e["ph"] == "X" && e["args"].contains("index");
    host += e["ph"] == "X" && e["tid"] == 5 && e["name"] == "doorbell";
  }
  CHECK(slices == 7 + 6);  // every command on fetch, and LOAD/GEMM/POST/STORE on their engines
  CHECK(host == 1);        // the host's track is there
  std::remove(path.c_str());

  const auto unwritable = run_bud("profile gemm_small --trace /nonexistent/dir/t.json --json");
  CHECK(unwritable.status == 4);
  CHECK(one_object(unwritable.out)["error"] == "error");
  const auto zero = run_bud("profile gemm_small --trace x.json --trace-window 0 --json");
  CHECK(zero.status == 2);
}
