// gdb/lldb prompt habits (issue 11): tbreak, condition, display, info watchpoints, save
// breakpoints + source round trip, hex in info stages.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "debugger/commands/Format.h"
#include "debugger/frontend/Console.h"
#include "tests/debugger/DebuggerTestSupport.h"

using namespace bud;
using namespace bud::test;

namespace {

std::string temp_path(const std::string& name) {
  return std::string(BUD_BINARY_DIR) + "/prompt_habits_" + std::to_string(getpid()) + "_" + name;
}

}  // namespace

TEST_CASE("tbreak stops once and is deleted by that stop", "[debugger][tbreak]") {
  Debugger d("gemm_small");
  auto b = d.ok("tbreak 100");
  CHECK(b.lines.at(0) == "temporary breakpoint 1: cycle 100");
  CHECK(contains(text(d.ok("info breakpoints")), "(temporary)"));
  d.ok("break 200");
  auto r = d.ok("continue");
  REQUIRE(r.stop);
  CHECK(r.stop->cycle == 100);
  CHECK(reason_kinds(r) == std::vector<std::string>{"breakpoint"});
  CHECK(contains(text(r), "deleted temporary breakpoint 1"));
  const auto info = d.ok("info breakpoints");
  REQUIRE(info.lines.size() == 1);
  CHECK(contains(info.lines[0], "cycle 200"));
  // A plain breakpoint is not deleted by its stop.
  r = d.ok("continue");
  REQUIRE(r.stop);
  CHECK(r.stop->cycle == 200);
  CHECK_FALSE(contains(text(r), "deleted"));
  CHECK(d.ok("info breakpoints").lines.size() == 1);
}

// Known failing (issue 11, left open): the hit count of a filtered command breakpoint reads 0 after
// its stop, and `continue` after `goto 0` from a finished run is refused in this sequence.
TEST_CASE("condition N EXPR filters a breakpoint's hits, condition N clears it",
          "[debugger][condition]") {
  // Reference: the first two LOAD dispatches without a condition. (gemm_small has a single GEMM:
  // a GEMM breakpoint filtered past its first hit never stops again.)
  Debugger ref("gemm_small");
  ref.ok("break cmd load");
  auto first = ref.ok("continue");
  REQUIRE(first.stop);
  REQUIRE(reason_kinds(first) == std::vector<std::string>{"breakpoint"});
  auto second = ref.ok("continue");
  REQUIRE(second.stop);
  REQUIRE(reason_kinds(second) == std::vector<std::string>{"breakpoint"});
  REQUIRE(second.stop->cycle > first.stop->cycle);

  Debugger d("gemm_small");
  d.ok("break cmd load");
  auto c = d.ok("condition 1 cycle > " + std::to_string(first.stop->cycle));
  CHECK(c.lines.at(0) ==
        "breakpoint 1: stops only if cycle > " + std::to_string(first.stop->cycle));
  CHECK(contains(text(d.ok("info breakpoints")), "stop only if cycle > "));
  auto r = d.ok("continue");
  REQUIRE(r.stop);
  CHECK(r.stop->cycle == second.stop->cycle);
  CHECK(r.stop->reasons.at(0).detail == second.stop->reasons.at(0).detail);
  CHECK(d.session->breakpoints().list().at(0).hits == 1);  // the filtered dispatch did not count

  // A condition that never holds: the run ends without stopping at the breakpoint.
  d.ok("condition 1 cycle < 5");
  r = d.ok("continue");
  REQUIRE(r.stop);
  CHECK(reason_kinds(r) == std::vector<std::string>{"finished"});

  d.ok("goto 0");
  auto clr = d.ok("condition 1");
  CHECK(clr.lines.at(0) == "breakpoint 1 is now unconditional");
  r = d.ok("continue");
  REQUIRE(r.stop);
  CHECK(r.stop->cycle == first.stop->cycle);

  CHECK(d.fails("condition 7 cycle > 1") == "no breakpoint 7");
  CHECK(d.fails("condition") == "usage: condition ID [EXPR]");
  CHECK(contains(d.fails("condition 1 cycle >"), "column"));
  CHECK(contains(d.fails("condition 1 rate(load.stall_mem, 8) > 0.5"), "windowed functions"));
}

TEST_CASE("condition on a watchpoint and on break if", "[debugger][condition]") {
  Debugger ref("gemm_small");
  ref.ok("watch load.state");
  uint64_t want = 0;
  for (int i = 0; i < 50 && !want; ++i) {
    auto r = ref.ok("continue");
    REQUIRE(r.stop);
    REQUIRE(reason_kinds(r) == std::vector<std::string>{"watchpoint"});
    if (ref.value("load.state") == 2) want = r.stop->cycle;
  }
  REQUIRE(want);
  Debugger d("gemm_small");
  d.ok("watch load.state");
  d.ok("condition 1 load.state == 2");
  auto r = d.ok("continue");
  REQUIRE(r.stop);
  CHECK(r.stop->cycle == want);
  CHECK(d.value("load.state") == 2);
}

TEST_CASE("display prints at every stop, undisplay and info display", "[debugger][display]") {
  Debugger d("gemm_small");
  auto r = d.ok("display/x load.state");
  REQUIRE(r.lines.size() == 1);
  CHECK(r.lines[0] == "1: load.state = " + debugger::hex64(d.value("load.state")));
  d.ok("display cycle");
  auto info = d.ok("info display");
  CHECK(info.lines == std::vector<std::string>{"1: /x load.state", "2: cycle"});
  r = d.ok("step 37");
  REQUIRE(r.lines.size() == 3);
  CHECK(r.lines[1] == "1: load.state = " + debugger::hex64(d.value("load.state")));
  CHECK(r.lines[2] == "2: cycle = 37 (0x25)");
  CHECK(r.data.dump().find("\"displays\"") != std::string::npos);
  // Inspection commands are not stops: no displays.
  CHECK(d.ok("print cycle").lines.size() == 1);
  d.ok("undisplay 1");
  r = d.ok("step");
  CHECK(r.lines == std::vector<std::string>{"stopped at cycle 38: step", "2: cycle = 38 (0x26)"});
  CHECK(d.fails("undisplay 1") == "no display 1");
  CHECK(contains(d.fails("display load.stat"), "unknown signal 'load.stat'"));
  d.ok("undisplay");
  CHECK(d.ok("info display").lines == std::vector<std::string>{"no displays"});
  CHECK(d.ok("step").lines.size() == 1);
}

TEST_CASE("info watchpoints lists only watchpoints", "[debugger][watch]") {
  Debugger d("gemm_small");
  CHECK(d.ok("info watchpoints").lines == std::vector<std::string>{"no watchpoints"});
  d.ok("break 100");
  d.ok("watch load.state");
  d.ok("break if gemm.active > 3");
  d.ok("watch dram 0x10040 4");
  const auto w = d.ok("info watchpoints");
  REQUIRE(w.lines.size() == 2);
  CHECK(contains(w.lines[0], "  2  watch"));
  CHECK(contains(w.lines[0], "watch load.state"));
  CHECK(contains(w.lines[1], "  4  watch"));
  CHECK(d.ok("info breakpoints").lines.size() == 4);
}

TEST_CASE("save breakpoints writes a script that source re-creates", "[debugger][save]") {
  const std::string file = temp_path("bps.bud");
  std::remove(file.c_str());
  std::vector<std::string> before;
  {
    Debugger d("gemm_small");
    d.ok("break 100");
    d.ok("break if gemm.active > 10");
    d.ok("tbreak cmd gemm layer 0");
    d.ok("watch load.state");
    d.ok("watch dram 0x10040 4");
    d.ok("condition 1 load.state == 1");
    d.ok("disable 2");
    d.ok("delete 3");  // ids with a gap: the reloaded list is numbered afresh
    d.ok("tbreak 500");
    auto s = d.ok("save breakpoints " + file);
    CHECK(s.lines.at(0) == "saved 5 breakpoints to " + file);
    for (auto line : d.ok("info breakpoints").lines) before.push_back(line);
  }
  Debugger fresh("gemm_small");
  fresh.ok("source " + file);
  const auto after = fresh.ok("info breakpoints").lines;
  REQUIRE(after.size() == before.size());
  for (size_t i = 0; i < after.size(); ++i) {
    // Same line but the id (gone 3 closes the gap).
    INFO(before[i] << "\n" << after[i]);
    CHECK(after[i].substr(5) == before[i].substr(5));
  }
  // Loaded into a session that already has breakpoints: conditions land on the right ones.
  Debugger busy("gemm_small");
  busy.ok("break 42");
  busy.ok("source " + file);
  const auto& l = busy.session->breakpoints().list();
  REQUIRE(l.size() == 6);
  CHECK_FALSE(l[0].filter);
  REQUIRE(l[1].filter);
  CHECK(l[1].filter->to_string() == "load.state == 1");
  CHECK_FALSE(l[2].enabled);
  CHECK(l[5].temporary);
  CHECK(busy.fails("save breakpoints") == "usage: save breakpoints FILE");
  CHECK(busy.fails("save breakpoints /nonexistent_dir/x.bud") ==
        "cannot write '/nonexistent_dir/x.bud'");
}

TEST_CASE("info stages prints the tag masks in hex", "[debugger][inspect]") {
  Debugger d("gemm_small");
  // A mask with a hex digit above 9 shows the decimal/hex confusion (0xff printed as 0x255).
  d.ok("break if load.tag_busy > 9");
  auto r = d.ok("continue");
  REQUIRE(r.stop);
  REQUIRE(reason_kinds(r).at(0) == "breakpoint");
  const uint64_t mask = d.value("load.tag_busy");
  REQUIRE(mask > 9);
  const std::string stages = text(d.ok("info stages"));
  CHECK((contains(stages, "tags_busy=" + debugger::hex64(mask) + "\n") ||
         contains(stages, "tags_busy=" + debugger::hex64(mask) + " ")));
  CHECK(contains(stages, "tags_busy=" + debugger::hex64(d.value("store.tag_busy"))));
}

namespace {

/// The command an engine executes at the current cycle, if any.
std::optional<uint32_t> engine_cmd(Debugger& d, const std::string& engine) {
  for (const auto& e : d.session->emu().engines())
    if (e.name == engine) return e.cmd_id;
  FAIL("no engine " << engine);
  return std::nullopt;
}

}  // namespace

TEST_CASE("finish runs until an engine's current command retires", "[debugger][finish]") {
  Debugger d("gemm_small");
  CHECK(contains(d.fails("finish"), "no engine is executing a command at cycle 0"));
  CHECK(d.fails("finish fetch") == "unknown engine 'fetch' (load, compute, store)");
  CHECK(contains(d.fails("finish compute"), "compute is idle at cycle 0"));
  // Stop while compute is executing something.
  d.ok("break if compute.state != 0");
  REQUIRE(d.ok("continue").stop);
  d.ok("delete");
  const auto cmd = engine_cmd(d, "compute");
  REQUIRE(cmd);
  auto r = d.ok("finish compute");
  REQUIRE(r.stop);
  REQUIRE(reason_kinds(r) == std::vector<std::string>{"finish"});
  CHECK(contains(r.stop->reasons[0].detail, "compute retired #" + std::to_string(*cmd)));
  const uint64_t stop = r.stop->cycle;
  CHECK(engine_cmd(d, "compute") != cmd);
  // The cycle before, it was still executing it (the stop is the first cycle it is not).
  d.ok("goto " + std::to_string(stop - 1));
  CHECK(engine_cmd(d, "compute") == cmd);
  // The internal breakpoint is gone and did not use up a number.
  CHECK(d.session->breakpoints().list().empty());
  CHECK(d.ok("break 100000").lines.at(0) == "breakpoint 2: cycle 100000");

  // Default engine: the one running the oldest command in flight.
  d.ok("delete");
  d.ok("goto " + std::to_string(stop - 1));
  std::string oldest;
  uint32_t lowest = UINT32_MAX;
  for (const auto& e : d.session->emu().engines())
    if (e.cmd_id && *e.cmd_id < lowest) lowest = *e.cmd_id, oldest = e.name;
  REQUIRE_FALSE(oldest.empty());
  r = d.ok("finish");
  CHECK(r.data.dump().find("\"engine\":\"" + oldest + "\"") != std::string::npos);
  REQUIRE(reason_kinds(r) == std::vector<std::string>{"finish"});
  CHECK(engine_cmd(d, oldest) != std::optional<uint32_t>(lowest));
}

TEST_CASE("break layer L end stops when the layer's last command retires", "[debugger][break]") {
  Debugger d("gemm_small");
  const auto& cmds = d.session->program().commands;
  // Oracle: the last command of layer 0 that an engine executes, and that engine.
  uint32_t last = UINT32_MAX;
  for (uint32_t i = 0; i < cmds.size(); ++i)
    if (cmds[i].layer == 0 && cmds[i].opcode != isa::Opcode::Sync &&
        cmds[i].opcode != isa::Opcode::End)
      last = i;
  REQUIRE(last != UINT32_MAX);
  const std::string engine = cmds[last].opcode == isa::Opcode::Load    ? "load"
                             : cmds[last].opcode == isa::Opcode::Store ? "store"
                                                                       : "compute";
  auto b = d.ok("break layer 0 end");
  CHECK(b.lines.at(0) == "breakpoint 1: layer 0 end");
  auto r = d.ok("continue");
  REQUIRE(r.stop);
  REQUIRE(reason_kinds(r) == std::vector<std::string>{"breakpoint"});
  const uint64_t stop = r.stop->cycle;
  CHECK(engine_cmd(d, engine) != std::optional<uint32_t>(last));
  d.ok("goto " + std::to_string(stop - 1));
  CHECK(engine_cmd(d, engine) == std::optional<uint32_t>(last));
  CHECK(contains(text(d.ok("info breakpoints")), "layer 0 end"));
  const auto& layers = d.session->program().layer_names;
  CHECK(d.ok("break layer " + layers.at(0) + " end").lines.at(0) ==
        "breakpoint 2: layer " + layers.at(0) + " end");
  CHECK(d.fails("break layer 99 end") ==
        "no layer 99 (the workload has " + std::to_string(layers.size()) + ")");
  CHECK(contains(d.fails("break layer 0"), "usage: break layer L end"));
  CHECK(d.fails("break layer nosuch end") == "unknown layer 'nosuch'");
}

TEST_CASE("commands N ... end run when breakpoint N stops", "[debugger][commands]") {
  Debugger d("gemm_small");
  d.ok("break 100");
  CHECK(d.ok("commands").lines.at(0) == "commands for breakpoint 1, one per line; `end` ends them");
  CHECK(d.in->collecting_commands() == 1);
  CHECK(d.ok("print cycle").lines.empty());  // collected, not run
  CHECK(d.ok("  step 5  # the comment is dropped").lines.empty());
  CHECK(d.ok("end").lines.at(0) == "breakpoint 1: 2 commands");
  CHECK(d.in->collecting_commands() == 0);
  CHECK(d.session->breakpoints().list().at(0).commands ==
        std::vector<std::string>{"print cycle", "step 5"});
  auto r = d.ok("continue");
  REQUIRE(r.stop);
  CHECK(r.lines ==
        std::vector<std::string>{"stopped at cycle 100: breakpoint 1 (reached cycle 100)",
                                 "cycle = 100 (0x64)", "stopped at cycle 105: step"});
  CHECK(d.cycle() == 105);
  CHECK(r.stop->cycle == 105);
  CHECK(contains(text(d.ok("info breakpoints")), "     > print cycle"));
  // A failing command stops the list and says which.
  d.ok("break 200");
  d.ok("commands 2");
  d.ok("print nosuch");
  d.ok("print cycle");
  d.ok("end");
  r = d.ok("continue");
  CHECK(contains(text(r), "error: breakpoint 2 command `print nosuch`: "));
  CHECK_FALSE(contains(text(r), "cycle = 200"));
  // commands N then end clears them.
  d.ok("commands 2");
  CHECK(d.ok("end").lines.at(0) == "breakpoint 2 has no commands");
  CHECK(d.fails("commands 9") == "no breakpoint 9");
  d.ok("commands 2");
  CHECK(contains(d.fails("commands 1"), "cannot be nested"));
  d.ok("end");
}

TEST_CASE("commands work from scripts, a script may not end inside them", "[debugger][commands]") {
  const std::string file = temp_path("cmds.bud");
  {
    std::ofstream f(file);
    f << "break 50\ncommands\n  print cycle\n  step 10\nend\ncontinue\nprint cycle\n";
  }
  Debugger d("gemm_small");
  std::vector<std::pair<std::string, debugger::CommandResult>> out;
  REQUIRE(d.in->source(file, out, true));
  CHECK(d.cycle() == 60);
  CHECK(contains(text(out.at(out.size() - 2).second), "cycle = 50 (0x32)"));
  CHECK(out.back().second.lines.at(0) == "cycle = 60 (0x3c)");
  // Saved with the breakpoint and re-created by source.
  const std::string saved = temp_path("cmds_saved.bud");
  d.ok("save breakpoints " + saved);
  Debugger e("gemm_small");
  e.ok("source " + saved);
  REQUIRE(e.session->breakpoints().list().size() == 1);
  CHECK(e.session->breakpoints().list()[0].commands ==
        std::vector<std::string>{"print cycle", "step 10"});
  {
    std::ofstream f(file);
    f << "break 50\ncommands 1\nprint cycle\n";
  }
  Debugger g("gemm_small");
  out.clear();
  CHECK_FALSE(g.in->source(file, out, true));
  CHECK(out.back().second.error == file + ":3: end of file inside `commands 1` (missing `end`)");
  CHECK(g.in->collecting_commands() == 0);
  CHECK(g.ok("print cycle").lines.at(0) == "cycle = 0 (0x0)");
}

TEST_CASE("a long run shows a progress line on simulated-cycle boundaries only when asked",
          "[debugger][progress]") {
  for (const bool json : {false, true}) {
    Debugger d("gemm_small", 100'000, 512ull << 20, /*chunk=*/100);
    std::ostringstream out, err;
    debugger::ConsoleOptions o;
    o.json = json;
    o.progress_every = 256;
    {
      debugger::Console c(*d.in, o, out, err);
      c.run_line("until 700");
    }
    if (json) {
      CHECK(out.str().find('\r') == std::string::npos);
    } else {
      // Chunks end at 100, 200, ...: lines when a multiple of 256 has been passed, then erased.
      CHECK(out.str() ==
            "\r  running... cycle 300 (+300)  Ctrl-C stops\r  running... cycle 600 (+600)  "
            "Ctrl-C stops\r\033[Kstopped at cycle 700: until\n");
    }
  }
  // Off (the default, and for --batch and pipes): exactly the plain output.
  Debugger d("gemm_small", 100'000, 512ull << 20, 100);
  std::ostringstream out, err;
  debugger::Console c(*d.in, debugger::ConsoleOptions{}, out, err);
  c.run_line("until 700");
  CHECK(out.str() == "stopped at cycle 700: until\n");
}
