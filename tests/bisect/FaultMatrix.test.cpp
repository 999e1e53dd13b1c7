// The fault matrix: one injected fault per stage of gemm_small (fetch decode, load data path,
// dependency token, gemm accumulator and loop counter, post, store address, DRAM responses),
// recorded as a packet and bisected. Each must be localized to its stage at a cycle no earlier
// than the injection and no later than its first downstream effect, persistently, with the
// command and layer named, and the same stage must come out of the packet-less bisect_run.
#include <algorithm>

#include "BisectTestSupport.h"
#include "emu/isa/Isa.h"
#include "emu/run/Designs.h"

using namespace bud;
using bud::test::ladder_cycles;
using bud::test::rung;

namespace {

struct FaultCase {
  const char* spec;
  const char* stage;    ///< expected first failing stage
  uint64_t cycle;       ///< injection cycle
  const char* symptom;  ///< what the run reports: "result-mismatch", "hang", "assertion"
  uint32_t command;     ///< command the first divergence belongs to
};

// Commands of gemm_small: #0 LOAD wgt, #1 LOAD acc (bias), #2 LOAD inp, #3 GEMM, #4 POST,
// #5 STORE, #6 END.
const FaultCase kMatrix[] = {
    {"memflip:dram:0x48[4]@1", "fetch", 1, "result-mismatch", 2},
    {"memflip:dram:0x10000[3]@10", "load", 10, "result-mismatch", 2},
    {"stuck:tokens[0][0]=0@100", "gemm", 100, "hang", 3},
    {"flip:compute.accum[3][5]@700", "gemm", 700, "result-mismatch", 3},
    {"flip:compute.m_left[0]@600", "gemm", 600, "result-mismatch", 3},
    {"flip:compute.shift[1]@800", "post", 800, "result-mismatch", 4},
    {"flip:store.row_addr[9]@850", "store", 850, "result-mismatch", 5},
    {"dram-dup@200", "load", 200, "assertion", 1},
    {"dram-drop@200", "load", 200, "hang", 1},
};

/// What every localized failure must satisfy, whichever way it was bisected.
void check_localized(const debugger::BisectReport& r, const FaultCase& c) {
  INFO(r.text());
  REQUIRE(r.verdict == debugger::BisectVerdict::Fail);
  CHECK(test::stage_of(r) == c.stage);
  CHECK(r.persistent);
  REQUIRE(r.first_divergence_cycle);
  CHECK(*r.first_divergence_cycle >= c.cycle);
  REQUIRE(r.command_index);
  CHECK(*r.command_index == c.command);
  CHECK(r.layer == "fc");
  CHECK_FALSE(r.command.empty());
  CHECK_FALSE(r.element.empty());
  // Downstream: never the failing stage itself, no duplicates, and the result last (every
  // persistent failure reaches it).
  const auto downstream = test::downstream_of(r);
  REQUIRE_FALSE(downstream.empty());
  CHECK(downstream.back() == "result");
  CHECK(std::find(downstream.begin(), downstream.end(), test::stage_of(r)) == downstream.end());
  auto sorted = downstream;
  std::sort(sorted.begin(), sorted.end());
  CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
  // No later than the first downstream effect: every other stage's first divergence.
  const auto cycles = ladder_cycles(r);
  REQUIRE(cycles.count(test::stage_of(r)));
  // A stopped run (hang, assertion) dates its first divergence to when progress stopped or the
  // assertion fired; the ladder line gives the cycle the missing transaction was noticed.
  if (std::string(c.symptom) == "result-mismatch")
    CHECK(cycles.at(test::stage_of(r)) == *r.first_divergence_cycle);
  else
    CHECK(cycles.at(test::stage_of(r)) >= *r.first_divergence_cycle);
  for (const auto& [stage, cycle] : cycles) {
    INFO("downstream " << stage << " at " << cycle);
    CHECK(*r.first_divergence_cycle <= cycle);
    if (stage != test::stage_of(r))
      CHECK(std::find(downstream.begin(), downstream.end(), stage) != downstream.end());
  }
}

}  // namespace

TEST_CASE("every fault of the matrix is localized to its stage, from the packet and live",
          "[bisect][matrix]") {
  const auto dir = test::temp_dir("matrix");
  int i = 0;
  for (const auto& c : kMatrix) {
    DYNAMIC_SECTION(c.spec) {
      const auto options = test::options_with("gemm_small", {c.spec});
      const std::string path = (dir / ("f" + std::to_string(i) + ".bpk")).string();
      const auto out = test::record(path, options);
      // The run itself fails with the expected symptom, and not before the injection.
      REQUIRE_FALSE(out.report.passed);
      const auto packet = test::read(path);
      REQUIRE(packet.symptom);
      CHECK(std::string(replay::symptom_kind_name(packet.symptom->kind())) == c.symptom);
      CHECK(packet.symptom->cycle() >= c.cycle);

      const auto from_packet = debugger::bisect_packet(packet, {});
      check_localized(from_packet, c);
      // The symptom is a downstream effect too: the first divergence is no later.
      CHECK(*from_packet.first_divergence_cycle <= packet.symptom->cycle());
      CHECK(from_packet.windows_checked == packet.windows.size());
      CHECK(from_packet.run_cycles == out.report.cycles);

      const auto live = test::bisect_live(options);
      check_localized(live, c);
      CHECK(live.first_failing_stage == from_packet.first_failing_stage);
      CHECK(live.first_divergence_cycle == from_packet.first_divergence_cycle);
      CHECK(live.command_index == from_packet.command_index);
    }
    ++i;
  }
}

// Registered per built array variant by tests/bisect/CMakeLists.txt (`-c <variant>`, label
// `variants`): a fetch and a load fault of the matrix on gemm_small lowered for that variant
// (the same seven commands on every array), localized from the packet and live.
TEST_CASE("faults are localized on the built array variants", "[.variants]") {
  for (const auto& name : emu::design_names()) {
    if (name == "npu" || !isa::find_array_variant(name)) continue;
    DYNAMIC_SECTION(name) {
      const auto dir = test::temp_dir("matrix_" + name);  // ctest runs the variants in parallel
      for (const FaultCase& c : {kMatrix[0], kMatrix[1]}) {
        INFO(name << " " << c.spec);
        auto options = test::options_with("gemm_small", {c.spec});
        options.emulator.design = name;
        const std::string path = (dir / (std::string(c.stage) + ".bpk")).string();
        const auto out = test::record(path, options);
        REQUIRE_FALSE(out.report.passed);
        const auto packet = test::read(path);
        CHECK(packet.header.design() == name);
        check_localized(debugger::bisect_packet(packet, {}), c);
        check_localized(test::bisect_live(options), c);
      }
    }
  }
}

TEST_CASE("the report names the exact element and values that differ", "[bisect][matrix]") {
  SECTION("gemm accumulator: bit 5 of lane 3 flipped mid-sum leaves it 32 off") {
    const auto r =
        test::bisect_live(test::options_with("gemm_small", {"flip:compute.accum[3][5]@700"}));
    REQUIRE(r.verdict == debugger::BisectVerdict::Fail);
    CHECK(test::contains(r.element, "lane 3"));
    const long e = std::stol(r.expected), a = std::stol(r.actual);
    CHECK((e - a == 32 || a - e == 32));
    CHECK(r.divergence_kind == debugger::Divergence::Kind::Wrong);
  }
  SECTION("fetch decode: bit 4 of command #2's DRAM address is 0x10 off") {
    const auto r = test::bisect_live(test::options_with("gemm_small", {"memflip:dram:0x48[4]@1"}));
    REQUIRE(r.verdict == debugger::BisectVerdict::Fail);
    CHECK(r.element == "command #2");
    CHECK(test::contains(r.expected, "dram 0x10000"));
    CHECK(test::contains(r.actual, "dram 0x10010"));
  }
  SECTION("store address: bit 9 of the row address moves the write by 0x200") {
    const auto r =
        test::bisect_live(test::options_with("gemm_small", {"flip:store.row_addr[9]@850"}));
    REQUIRE(r.verdict == debugger::BisectVerdict::Fail);
    const auto e = std::stoul(r.expected, nullptr, 16), a = std::stoul(r.actual, nullptr, 16);
    CHECK((e ^ a) == 0x200);
  }
  SECTION("a lost DRAM response: the transaction is missing") {
    const auto r = test::bisect_live(test::options_with("gemm_small", {"dram-drop@200"}));
    REQUIRE(r.verdict == debugger::BisectVerdict::Fail);
    CHECK(r.divergence_kind == debugger::Divergence::Kind::Missing);
    CHECK(r.actual == "(never written)");
  }
}

// Bug (reported): when the run stops (assertion or hang), stages upstream of the first failing
// one on the ladder are listed as "downstream" because their END/dispatch transactions never
// came: dram-dup@200 -> load, downstream ["fetch", "gemm", "post", "store", "result"]. The
// packet path filters the recorded end totals by rung (only later rungs), the stop path does not.
TEST_CASE("downstream stages are later rungs of the ladder than the first failing stage",
          "[bisect][matrix]") {
  for (const char* f : {"dram-dup@200", "stuck:tokens[0][0]=0@100"}) {
    const auto r = test::bisect_live(test::options_with("gemm_small", {f}));
    INFO(f << "\n" << r.text());
    REQUIRE(r.verdict == debugger::BisectVerdict::Fail);
    for (const auto& s : test::downstream_of(r)) CHECK(rung(s) > rung(test::stage_of(r)));
  }
}
