// Every verdict kind fills the fields docs/bisect.md promises where the information exists: the
// cycle, command, layer, element, expected and actual values, for stage failures, hangs,
// transients and result-only corruptions (memory changed after STORE wrote it), from a packet and
// live.
#include "BisectTestSupport.h"

using namespace bud;

namespace {

void check_located(const debugger::BisectReport& r) {
  INFO(r.text());
  CHECK(r.first_divergence_cycle);
  CHECK(r.command_index);
  CHECK_FALSE(r.command.empty());
  CHECK_FALSE(r.layer.empty());
  CHECK_FALSE(r.element.empty());
  CHECK_FALSE(r.expected.empty());
  CHECK_FALSE(r.actual.empty());
  CHECK(r.divergence_kind);
}

}  // namespace

TEST_CASE("every verdict kind has its promised fields", "[bisect][report][fields]") {
  const auto dir = test::temp_dir("fields");
  struct Case {
    const char* workload;
    const char* fault;
    const char* verdict;
    const char* stage;
  };
  const Case cases[] = {
      {"gemm_small", "flip:compute.shift[1]@800", "fail", "post"},
      {"gemm_small", "dram-drop@200", "fail", "load"},
      {"gemm_small", "memflip:dram:0x107c0[2]@930", "fail", "result"},
      {"tests/bisect/data/padded_k.textpb", "memflip:dram:0x10145[3]@1", "transient", ""},
  };
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.fault) {
      auto options = test::options_with(c.workload, {c.fault});
      if (std::string(c.workload).find('/') != std::string::npos)
        options.workload = test::data_file(std::string(c.workload).substr(6));
      options.emulator.hang_cycles = 5000;
      const std::string path = (dir / "f.bpk").string();
      test::record(path, options);
      const auto r = debugger::bisect_packet(test::read(path), {});
      CHECK(std::string(debugger::bisect_verdict_name(r.verdict)) == c.verdict);
      CHECK(test::stage_of(r) == c.stage);
      check_located(r);
      if (std::string(c.stage) == "result") {
        // The flip acts during cycle 930: the state after edge 931 is the first that differs.
        CHECK(r.first_divergence_cycle == 931u);
        CHECK(r.command_index == 5u);
        CHECK(r.layer == "fc");
        CHECK(test::contains(r.element, "dram 0x107c0"));
        const auto live = test::bisect_live(options);
        CHECK(test::stage_of(live) == "result");
        CHECK(live.first_divergence_cycle == 931u);
        CHECK(live.element == r.element);
      }
    }
  }
}
