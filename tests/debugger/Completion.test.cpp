// Tab completion through Interpreter::complete, driven by the command specs: subcommands,
// signal/counter/CSR names, memories, files, checkpoints, breakpoint ids, opcodes and layers.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "tests/debugger/DebuggerTestSupport.h"

using namespace bud;
using namespace bud::test;
using Strings = std::vector<std::string>;

namespace {

bool has(const Strings& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

TEST_CASE("the first word completes command names", "[debugger][complete]") {
  Debugger d("gemm_small");
  CHECK(d.in->complete("tbr") == Strings{"tbreak"});
  CHECK(d.in->complete("und") == Strings{"undisplay"});
  const auto c = d.in->complete("co");
  CHECK(has(c, "condition"));
  CHECK(has(c, "continue"));
  CHECK(has(c, "counters"));
  // Every command is reachable from its first letter.
  for (const auto& cmd : d.in->commands())
    CHECK(has(d.in->complete(cmd.name.substr(0, 1)), cmd.name));
}

TEST_CASE("subcommands complete from the spec", "[debugger][complete]") {
  Debugger d("gemm_small");
  CHECK(d.in->complete("info st") == Strings{"stages"});
  CHECK(d.in->complete("info w") == Strings{"watchpoints"});
  CHECK(d.in->complete("info d") == Strings{"display"});
  CHECK(d.in->complete("wave o") == Strings{"off", "on"});
  CHECK(d.in->complete("record s") == Strings{"start", "stop"});
  CHECK(d.in->complete("trigger l") == Strings{"list", "load"});
  CHECK(d.in->complete("save b") == Strings{"breakpoints"});
  CHECK(d.in->complete("break c") == Strings{"cmd"});
  // Each subcommand listed by the spec of every command is offered for an empty word.
  for (const auto& cmd : d.in->commands()) {
    const auto all = d.in->complete(cmd.name + " ");
    for (const auto& sc : cmd.subcommands) {
      INFO(cmd.name << " " << sc.name);
      CHECK(has(all, sc.name));
    }
  }
  // A word after a subcommand that takes nothing: nothing.
  CHECK(d.in->complete("info stages ").empty());
  CHECK(d.in->complete("wave off ").empty());
}

TEST_CASE("names complete for print, x, watch, force and display", "[debugger][complete]") {
  Debugger d("gemm_small");
  CHECK(d.in->complete("print load.stat") == Strings{"load.state"});
  CHECK(d.in->complete("print/x load.stat") == Strings{"load.state"});
  CHECK(d.in->complete("p load.stat") == Strings{"load.state"});  // aliases too
  // Expressions: every word is a name.
  CHECK(d.in->complete("print gemm.active + load.stat") == Strings{"load.state"});
  CHECK(d.in->complete("force compute.sta") == Strings{"compute.state"});
  CHECK(d.in->complete("display load.stat") == Strings{"load.state"});
  CHECK(d.in->complete("break if load.stat") == Strings{"load.state"});
  // Counters and CSRs.
  CHECK(has(d.in->complete("print gemm.stall_"), "gemm.stall_mem"));
  CHECK(d.in->complete("print STAT") == Strings{"STATUS"});
  CHECK(has(d.in->complete("print RING_"), "RING_HEAD"));
  // Memories: x takes a memory first, then numbers; watch takes a signal or a memory.
  CHECK(d.in->complete("x dr") == Strings{"dram"});
  CHECK(d.in->complete("x/i8 dr") == Strings{"dram"});
  CHECK(d.in->complete("x dram 0").empty());
  CHECK_FALSE(has(d.in->complete("print dr"), "dram"));  // a memory is not a value
  CHECK(has(d.in->complete("watch dr"), "dram"));  // and the dram_* signals
  CHECK(d.in->complete("watch load.stat") == Strings{"load.state"});
  // Position matters: force's value is not a name.
  CHECK(d.in->complete("force compute.state c").empty());
}

TEST_CASE("ids, checkpoints, opcodes and layers complete", "[debugger][complete]") {
  Debugger d("gemm_small");
  d.ok("break 100");
  d.ok("break 200");
  CHECK(d.in->complete("delete ") == Strings{"1", "2"});
  CHECK(d.in->complete("condition 2 load.stat") == Strings{"load.state"});
  CHECK(d.in->complete("condition ") == Strings{"1", "2"});
  d.ok("display cycle");
  CHECK(d.in->complete("undisplay ") == Strings{"1"});
  d.ok("checkpoint before_gemm");
  CHECK(d.in->complete("restore bef") == Strings{"before_gemm"});
  CHECK(has(d.in->complete("break cmd g"), "gemm"));
  CHECK(d.in->complete("break cmd gemm la") == Strings{"layer"});
  const auto& layers = d.session->program().layer_names;
  REQUIRE_FALSE(layers.empty());
  CHECK(has(d.in->complete("break cmd gemm layer "), layers[0]));
  CHECK(has(d.in->complete("help tb"), "tbreak"));
}

TEST_CASE("file arguments complete file names", "[debugger][complete]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(BUD_BINARY_DIR) / ("complete_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "sub");
  std::ofstream(dir / "script.bud") << "echo hi\n";
  std::ofstream(dir / "scratch.fst") << "";
  Debugger d("gemm_small");
  const std::string p = dir.string() + "/";
  CHECK(d.in->complete("source " + p + "scr") == Strings{p + "scratch.fst", p + "script.bud"});
  CHECK(d.in->complete("source " + p + "scri") == Strings{p + "script.bud"});
  CHECK(d.in->complete("source " + p + "su") == Strings{p + "sub/"});
  CHECK(d.in->complete("wave on " + p + "scra") == Strings{p + "scratch.fst"});
  CHECK(d.in->complete("wave dump 1 2 " + p + "scra") == Strings{p + "scratch.fst"});
  CHECK(d.in->complete("wave dump 1 " + p + "scra").empty());  // FROM/TO are numbers
  CHECK(d.in->complete("save breakpoints " + p + "scri") == Strings{p + "script.bud"});
  CHECK(d.in->complete("trigger load " + p + "scri") == Strings{p + "script.bud"});
  CHECK(d.in->complete("record start " + p + "scri") == Strings{p + "script.bud"});
  fs::remove_all(dir);
}
