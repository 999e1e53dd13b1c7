// Capture windows hold exactly the requested pre/post cycles (validated with fst2vcd from gtkwave),
// are truncated where the run ends, and their event log matches an independent recording.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "tests/trigger/TriggerTestSupport.h"

using namespace bud;

namespace {

std::string temp_dir(const std::string& name) {
  auto d = std::filesystem::path(BUD_BINARY_DIR) / "trigger_test" / name;
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d.string();
}

// Timestamps of an FST file, via fst2vcd.
std::vector<uint64_t> fst_times(const std::string& fst) {
  const std::string cmd = "fst2vcd " + fst + " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p);
  std::vector<uint64_t> times;
  char line[4096];
  while (std::fgets(line, sizeof line, p))
    if (line[0] == '#') times.push_back(std::strtoull(line + 1, nullptr, 10));
  REQUIRE(pclose(p) == 0);
  return times;
}

std::vector<uint64_t> range(uint64_t from, uint64_t to) {
  std::vector<uint64_t> v;
  for (uint64_t c = from; c <= to; ++c) v.push_back(c);
  return v;
}

}  // namespace

TEST_CASE("capture windows hold exactly the requested pre/post cycles", "[trigger][capture]") {
  if (std::system("command -v fst2vcd >/dev/null 2>&1") != 0) {
    WARN("fst2vcd (gtkwave) not installed");
    return;
  }
  const auto s = test::record("conv");
  const std::string dir = temp_dir("exact");
  auto run = test::run_triggers("conv",
                                R"(
trigger mid shots 1 when cycle == 5000 do capture pre 300 post 120
trigger early shots 1 when cycle == 40 do capture pre 100 post 10
trigger late shots 1 when cycle == )" +
                                    std::to_string(s.end_cycle - 30) +
                                    R"( do capture pre 50 post 500
trigger big shots 1 when cycle == 20000 do capture pre 150000 post 0
)",
                                dir);
  std::map<std::string, debugger::CaptureFile> caps;
  for (const auto& h : run->engine->hits()) {
    REQUIRE(h.captures.size() == 1);
    INFO(h.trigger << ": " << h.captures[0].error);
    REQUIRE(h.captures[0].error.empty());
    caps[h.trigger] = h.captures[0];
  }
  REQUIRE(caps.size() == 4);

  SECTION("a window inside the run: exactly hit-pre .. hit+post") {
    const auto& c = caps["mid"];
    CHECK(c.from == 4700);
    CHECK(c.to == 5120);
    CHECK_FALSE(c.truncated);
    CHECK(fst_times(c.fst) == range(4700, 5120));
  }
  SECTION("a pre window reaching before cycle 0 starts at 0") {
    const auto& c = caps["early"];
    CHECK(c.from == 0);
    CHECK(c.to == 50);
    CHECK(fst_times(c.fst) == range(0, 50));
  }
  SECTION("the run ends inside the post window: truncated at the end cycle") {
    const auto& c = caps["late"];
    CHECK(c.requested_to == s.end_cycle + 470);
    CHECK(c.to == s.end_cycle);
    CHECK(c.truncated);
    CHECK(fst_times(c.fst) == range(s.end_cycle - 80, s.end_cycle));
  }
  SECTION("a pre window longer than the run so far re-executes from the start") {
    const auto& c = caps["big"];
    CHECK(c.from == 0);
    CHECK(c.to == 20000);
    CHECK(fst_times(c.fst).size() == 20001);
  }
  SECTION("the event log lists the window's dispatches at the cycles triggers see them") {
    const auto& c = caps["mid"];
    std::ifstream f(c.log);
    std::stringstream ss;
    ss << f.rdbuf();
    const std::string log = ss.str();
    CHECK(log.find("window: cycles 4700..5120") != std::string::npos);
    size_t n = 0;
    for (const auto& d : s.dispatches)
      if (d.cycle >= 4700 && d.cycle <= 5120) {
        ++n;
        const std::string line =
            std::to_string(d.cycle) + " fetch dispatch #" + std::to_string(d.cmd.cmd_id) + " ";
        CHECK(log.find(line) != std::string::npos);
      }
    CHECK(n > 0);
    CHECK(log.find("5000 TRIGGER mid hit 1") != std::string::npos);
  }
  SECTION("memory of the pre-trigger history is bounded") {
    CHECK(run->engine->history_snapshots() >= 1);
    CHECK(run->engine->history_snapshots() <= 3);
  }
}
