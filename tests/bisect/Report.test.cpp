// The report of `bud bisect P`: every --json field the issue promises, consistent with the text
// form and the library report, and --wave writing an FST around the first divergence that
// gtkwave's fst2vcd converts.
#include <cstdio>
#include <set>
#include <sstream>

#include "BisectTestSupport.h"
#include "debugger/bisect/DiffBisector.h"

using namespace bud;

namespace {

bool have_fst2vcd() { return std::system("command -v fst2vcd >/dev/null 2>&1") == 0; }

/// Every #TIME of the VCD that fst2vcd makes of `fst` (empty if it did not convert).
std::vector<uint64_t> vcd_times(const std::string& fst) {
  const std::string vcd = fst + ".vcd";
  std::vector<uint64_t> times;
  if (std::system(("fst2vcd " + test::q(fst) + " >" + test::q(vcd) + " 2>/dev/null").c_str()) != 0)
    return times;
  std::istringstream lines(test::slurp(vcd));
  std::string line;
  while (std::getline(lines, line))
    if (!line.empty() && line[0] == '#') times.push_back(std::stoull(line.substr(1)));
  std::remove(vcd.c_str());
  return times;
}

}  // namespace

TEST_CASE("bud bisect --json has every report field", "[bisect][report][cli]") {
  const auto dir = test::temp_dir("report_json");
  const std::string path = (dir / "accum.bpk").string();
  test::record(path, test::options_with("gemm_small", {"flip:compute.accum[3][5]@700"}));
  const auto r = test::bud("bisect --json " + test::q(path), dir);
  CHECK(r.status == 1);
  INFO(r.out << r.err);
  // One object on one line.
  REQUIRE_FALSE(r.out.empty());
  CHECK(r.out.front() == '{');
  CHECK(r.out.find('\n') == r.out.size() - 1);
  for (const char* k :
       {"verdict", "first_failing_stage", "first_divergence_cycle", "persistent", "command_index",
        "layer", "expected", "actual", "downstream_stages", "resimulated_cycles", "wave_file"}) {
    INFO(k);
    CHECK(test::json_field(r.out, k));
  }
  CHECK(test::json_string(r.out, "verdict") == "fail");
  CHECK(test::json_string(r.out, "first_failing_stage") == "gemm");
  CHECK(test::json_field(r.out, "first_divergence_cycle") == "703");
  CHECK(test::json_field(r.out, "persistent") == "true");
  CHECK(test::json_field(r.out, "command_index") == "3");
  CHECK(test::json_string(r.out, "layer") == "fc");
  CHECK(test::json_string(r.out, "expected") == "456");
  CHECK(test::json_string(r.out, "actual") == "424");
  CHECK(test::json_field(r.out, "downstream_stages") == "[\"post\",\"store\",\"result\"]");
  CHECK(test::json_field(r.out, "resimulated_cycles") == "940");
  CHECK(test::json_field(r.out, "wave_file") == "null");

  // The text form says the same.
  const auto t = test::bud("bisect " + test::q(path), dir);
  CHECK(t.status == 1);
  CHECK(test::contains(t.out, "first failing stage  gemm"));
  CHECK(test::contains(t.out, "cycle      703"));
  CHECK(test::contains(t.out, "[layer fc]"));
  CHECK(test::contains(t.out, "expected   456"));
  CHECK(test::contains(t.out, "actual     424"));
  CHECK(test::contains(t.out, "downstream post, store, result"));
  CHECK(test::contains(t.out, "persistent yes"));
  CHECK(test::contains(t.out, "re-simulated 940 of 940 cycles"));
}

TEST_CASE("bud bisect --wave writes an FST that covers the first divergence",
          "[bisect][report][wave][cli]") {
  // The set-up installs gtkwave: without fst2vcd this test fails rather than proving nothing.
  INFO("fst2vcd (gtkwave) is missing: tools/setup-deps.sh installs it");
  REQUIRE(have_fst2vcd());
  const auto dir = test::temp_dir("report_wave");
  SECTION("gemm_small, one window") {
    const std::string path = (dir / "accum.bpk").string();
    const std::string fst = (dir / "first.fst").string();
    test::record(path, test::options_with("gemm_small", {"flip:compute.accum[3][5]@700"}));
    const auto r = test::bud(
        "bisect --json --wave " + test::q(fst) + " --wave-radius 16 " + test::q(path), dir);
    CHECK(r.status == 1);
    INFO(r.out << r.err);
    CHECK(test::json_string(r.out, "wave_file") == fst);
    const auto times = vcd_times(fst);
    REQUIRE_FALSE(times.empty());
    CHECK(times.front() <= 703);
    CHECK(times.back() >= 703);
    CHECK(times.front() >= 703 - 16);
    CHECK(times.back() <= 703 + 16);
  }
  SECTION("compute_bound: the window is re-executed from a checkpoint") {
    const std::string path = (dir / "cb.bpk").string();
    const std::string fst = (dir / "cb.fst").string();
    replay::RecordConfig rc;
    rc.digest_interval = 4096;
    rc.checkpoint_interval = 65536;
    test::record(path, test::options_with("compute_bound", {"flip:compute.accum[3][5]@200001"}),
                 rc);
    debugger::BisectOptions o;
    o.wave_file = fst;
    const auto rep = debugger::bisect_packet(test::read(path), o);
    INFO(rep.text());
    REQUIRE(rep.verdict == debugger::BisectVerdict::Fail);
    REQUIRE(rep.first_divergence_cycle);
    CHECK(rep.wave_file == fst);
    const auto times = vcd_times(fst);
    REQUIRE_FALSE(times.empty());
    CHECK(times.front() <= *rep.first_divergence_cycle);
    CHECK(times.back() >= *rep.first_divergence_cycle);
    CHECK(times.front() + 2 * o.wave_radius + 1 >= times.back());
  }
}

// Verdicts, rungs and failure kinds are enums with one name table each; the names are what
// --json and the text form print, distinct, and the stage rungs carry the dataflow stage names.
TEST_CASE("verdicts, rungs and failure kinds are rendered once, by distinct names",
          "[bisect][report][names]") {
  auto distinct = [](const std::vector<std::string>& v) {
    return std::set<std::string>(v.begin(), v.end()).size() == v.size();
  };
  std::vector<std::string> verdicts, diffs, rungs, kinds;
  for (auto v : {debugger::BisectVerdict::Fail, debugger::BisectVerdict::Pass,
                 debugger::BisectVerdict::Transient, debugger::BisectVerdict::Error})
    verdicts.push_back(debugger::bisect_verdict_name(v));
  CHECK(verdicts == std::vector<std::string>{"fail", "pass", "transient", "error"});
  for (auto v : {debugger::DiffVerdict::Same, debugger::DiffVerdict::Diverged,
                 debugger::DiffVerdict::Performance, debugger::DiffVerdict::Error})
    diffs.push_back(debugger::diff_verdict_name(v));
  CHECK(distinct(diffs));
  for (int i = 0; i < debugger::kNumRungs; ++i)
    rungs.push_back(debugger::rung_name(static_cast<debugger::Rung>(i)));
  CHECK(distinct(rungs));
  CHECK(rungs.front() == "ingress");
  CHECK(rungs.back() == "result");
  for (int s = 0; s < emu::kNumStages; ++s)
    CHECK(rungs[static_cast<size_t>(debugger::rung_of(static_cast<emu::Stage>(s)))] ==
          emu::stage_name(static_cast<emu::Stage>(s)));
  for (auto k : {debugger::FailureKind::None, debugger::FailureKind::Mismatch,
                 debugger::FailureKind::Assertion, debugger::FailureKind::Hang,
                 debugger::FailureKind::Error})
    kinds.push_back(debugger::failure_kind_name(k));
  CHECK(distinct(kinds));
  CHECK(debugger::failure_kind_of(emu::RunState::Hang) == debugger::FailureKind::Hang);
  CHECK(debugger::failure_kind_of(emu::RunState::Finished) == debugger::FailureKind::Mismatch);
}
