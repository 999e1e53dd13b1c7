// Commands carry their policy (issue 13): every registered command and subcommand declares
// whether it changes state, subcommands dispatch through the spec tree, and abbreviations of
// `info` keep working.
#include "tests/debugger/DebuggerTestSupport.h"

using namespace bud;
using namespace bud::test;
using debugger::Effect;

namespace {

// "name" or "name sub" for every command and subcommand that declares no effect.
std::vector<std::string> undeclared(const debugger::Interpreter& in) {
  std::vector<std::string> out;
  for (const auto& c : in.commands()) {
    if (c.effect == Effect::Undeclared) out.push_back(c.name);
    for (const auto& sc : c.subcommands) {
      if (sc.effect == Effect::Undeclared) out.push_back(c.name + " " + sc.name);
      if (!sc.run) out.push_back(c.name + " " + sc.name + " (no run function)");
    }
  }
  return out;
}

}  // namespace

TEST_CASE("every command and subcommand declares its effect", "[debugger][policy]") {
  Debugger d("gemm_small");
  CHECK(undeclared(*d.in) == std::vector<std::string>{});
  REQUIRE(d.in->commands().size() > 30);

  // The check is able to fail: a new command or subcommand without a policy is named.
  d.in->add({"scribble",
             {},
             "scribble FILE",
             "",
             "",
             {},
             debugger::kNeedsNothing,
             false,
             [](debugger::Interpreter&, const debugger::Args&, debugger::CommandResult&) {}});
  auto& wave = const_cast<debugger::CommandSpec&>(*d.in->find("wave"));
  wave.subcommands.push_back({"scribble", {debugger::ArgKind::WriteFile}});
  CHECK(undeclared(*d.in) ==
        std::vector<std::string>{"wave scribble", "wave scribble (no run function)", "scribble"});
}

TEST_CASE("noun-verb subcommands dispatch through the spec tree", "[debugger][policy]") {
  Debugger d("gemm_small");
  const auto* info = d.in->find("info");
  REQUIRE(info);
  // Whole names, aliases and declared abbreviations select a subcommand; a name wins over
  // another's prefix.
  auto sub = [&](const std::string& line) {
    const auto* sc = info->subcommand(debugger::parse_args(line));
    return sc ? sc->name : std::string("-");
  };
  CHECK(sub("info b") == "breakpoints");
  CHECK(sub("info wa") == "watchpoints");
  CHECK(sub("info check") == "check");
  CHECK(sub("info ch") == "checkpoints");
  CHECK(sub("info checkp") == "checkpoints");
  CHECK(sub("info csr") == "registers");
  CHECK(sub("info reg") == "registers");
  CHECK(sub("info re") == "-");
  CHECK(sub("info bogus") == "-");
  CHECK(sub("info") == "-");
  CHECK(contains(d.fails("info bogus"), "info what?"));
  CHECK(contains(text(d.ok("i b")), "no breakpoints"));
  CHECK(d.ok("info st").data == d.ok("info stages").data);

  // break: the subcommand forms and the CYCLE form of the command itself; tbreak has no
  // on|off mismatch.
  CHECK(d.ok("break 100").data["spec"] == "cycle 100");
  CHECK(d.ok("break command gemm").data["spec"] == "cmd GEMM");
  CHECK(d.ok("tbreak if cycle > 5").data["id"] == 3);
  CHECK(contains(d.fails("break off mismatch"), "no golden-model check"));  // break on|off
  CHECK(contains(d.fails("tbreak on mismatch"), "expected a cycle"));
  // A subcommand's effect is its own: `trigger` reads, `trigger delete` changes.
  const auto* trig = d.in->find("trigger");
  CHECK(trig->effect_of(debugger::parse_args("trigger")) == Effect::ReadOnly);
  CHECK(trig->effect_of(debugger::parse_args("trigger hits")) == Effect::ReadOnly);
  CHECK(trig->effect_of(debugger::parse_args("trigger delete 1")) == Effect::Changes);
}
