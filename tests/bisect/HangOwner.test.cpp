// Hangs go to the stage that owns the lost work: over DRAM responses dropped all through a run
// (read data, write acknowledgements, command fetches) and a token that never comes, bisect names
// the engine's stage and the command that the run's own hang report says the engine holds.
#include <regex>

#include "BisectTestSupport.h"

using namespace bud;

namespace {

/// From the run's hang report ("store:   state=2 cmd=#19"): the busy engine holding the earliest
/// command, as (engine, command); ("fetch", -1) when no engine holds one.
std::pair<std::string, int> report_owner(const std::vector<std::string>& failures) {
  std::string all;
  for (const auto& f : failures) all += f + "\n";
  static const std::regex line(R"((load|compute|store):\s+state=(\d+) cmd=#(\d+))");
  std::pair<std::string, int> best{"fetch", -1};
  for (auto it = std::sregex_iterator(all.begin(), all.end(), line); it != std::sregex_iterator(); ++it) {
    if ((*it)[2] == "0") continue;
    const int cmd = std::stoi((*it)[3]);
    if (best.second < 0 || cmd < best.second) best = {(*it)[1], cmd};
  }
  return best;
}

}  // namespace

TEST_CASE("a hang is blamed on the engine and command that never completed", "[bisect][hang]") {
  const auto dir = test::temp_dir("hang_owner");
  std::map<std::string, int> seen;  // owner engine -> cases
  struct Sweep {
    const char* workload;
    uint64_t from, to, step;
  };
  // mlp all through (reads and write acknowledgements); gemm_small's first cycles, where the
  // command ring is being fetched.
  for (const Sweep sw : {Sweep{"mlp", 200, 17000, 700}, Sweep{"gemm_small", 1, 80, 3}}) {
    for (uint64_t at = sw.from; at < sw.to; at += sw.step) {
      const std::string fault = "dram-drop@" + std::to_string(at);
      auto options = test::options_with(sw.workload, {fault});
      options.emulator.hang_cycles = 5000;
      const std::string path = (dir / "h.bpk").string();
      const auto out = test::record(path, options);
      if (out.report.state != emu::RunState::Hang) continue;  // the drop hit nothing that stalls
      const auto [engine, cmd] = report_owner(out.report.failures);
      const auto r = debugger::bisect_packet(test::read(path), {});
      INFO(fault << ": " << r.text());
      REQUIRE(r.verdict == debugger::BisectVerdict::Fail);
      if (cmd < 0) {
        CHECK(test::stage_of(r) == "fetch");
      } else {
        REQUIRE(r.command_index);
        CHECK(static_cast<int>(*r.command_index) == cmd);
        if (engine == "compute")
          CHECK((test::stage_of(r) == "gemm" || test::stage_of(r) == "post"));
        else
          CHECK(test::stage_of(r) == engine);
      }
      ++seen[engine];
    }
  }
  // The sweep lost read data, write acknowledgements and command fetches.
  CHECK(seen["load"] > 0);
  CHECK(seen["store"] > 0);
  CHECK(seen["fetch"] + seen["compute"] > 0);
  // A token that never comes: compute waits for it holding its GEMM.
  auto options = test::options_with("gemm_small", {"stuck:tokens[0][0]=0@100"});
  options.emulator.hang_cycles = 5000;
  const auto out = test::record((dir / "t.bpk").string(), options);
  REQUIRE(out.report.state == emu::RunState::Hang);
  const auto [engine, cmd] = report_owner(out.report.failures);
  const auto r = debugger::bisect_packet(test::read((dir / "t.bpk").string()), {});
  INFO(r.text());
  CHECK(engine == "compute");
  CHECK(test::stage_of(r) == "gemm");
  REQUIRE(r.command_index);
  CHECK(static_cast<int>(*r.command_index) == cmd);
}
