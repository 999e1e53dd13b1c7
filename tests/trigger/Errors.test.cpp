// Trigger files with errors: every problem gives FILE:LINE:COL and a message; unknown counters,
// signals, states, actions and layers suggest near names; an invalid file yields no program.
#include "tests/trigger/TriggerTestSupport.h"

using namespace bud;

namespace {

struct Case {
  const char* text;
  uint32_t line, column;
  const char* message;     ///< substring of the message
  const char* suggestion;  ///< first suggestion, or ""
};

debugger::TriggerParse parse(const std::string& text) {
  static emu::NpuEmulator emu(emu::NpuConfig{});
  static const std::vector<std::string> layers = {"conv1", "conv2", "skip", "out"};
  debugger::TriggerEnv env;
  env.emu = &emu;
  env.layer_names = &layers;
  return debugger::parse_triggers(text, "bad.trig", env);
}

}  // namespace

TEST_CASE("trigger file errors name FILE:LINE:COL", "[trigger][errors]") {
  const Case cases[] = {
      {"trigger t when load.stal_mem > 3 do halt", 1, 16, "unknown name 'load.stal_mem'",
       "load.stall_mem"},
      {"\n\ntrigger t\n  when rate(gemm.stall_dep, 0) > 1\n  do halt\nend", 4, 29, "window", ""},
      {"trigger t when x > do halt", 1, 16, "", ""},
      {"trigger t\n  when cycle > 3\n  do hlat\nend", 3, 6, "unknown action 'hlat'", "halt"},
      {"trigger t when cycle > 3 do capture pre x", 1, 41, "cycle count", ""},
      {"trigger t when cycle > 3 do log unquoted", 1, 33, "log \"MESSAGE\"", ""},
      {"trigger t when cycle > 3 do log \"open", 1, 33, "unterminated string", ""},
      {"trigger t\n  state watch\n    if cycle > 3 then goto wach\nend", 3, 28,
       "unknown state 'wach'", "watch"},
      {"trigger t\n  state a\n    if cycle > 3 then incr n\nend", 3, 28, "unknown counter 'n'", ""},
      {"trigger t\n  when cycle > 3\n", 1, 9, "has no 'end'", ""},
      {"end", 1, 1, "'end' without a trigger", ""},
      {"trigger t when cycle > 3 do goto x", 1, 29, "only allowed in a state machine", ""},
      {"def g = dispatch GEM", 1, 18, "unknown opcode 'GEM'", "GEMM"},
      {"def g = dispatch GEMM layer conv3", 1, 29, "unknown layer 'conv3'", "conv1"},
      {"def g = every 0 cycles", 1, 15, "positive", ""},
      {"def g = every 10 retired_gem", 1, 18, "unknown counter or signal", "retired_gemm"},
      {"def cycles = dispatch GEMM", 1, 5, "already a design signal or counter", ""},
      {"trigger t when cycle > 3 do halt\ntrigger t when cycle > 4 do halt", 2, 9,
       "already defined", ""},
      {"trigger t shots 0 when cycle > 3 do halt", 1, 17, "positive number of shots", ""},
      {"trigger t\n  wen cycle > 3\nend", 2, 3, "unknown statement 'wen'", "when"},
      {"trigger t\n  state a\n  counter c\nend", 3, 3, "before the first state", ""},
      {"when cycle > 3", 1, 1, "outside a trigger", ""},
      {"trigger t when cycle > 3", 1, 25, "expected 'do ACTIONS'", ""},
      {"trigger t\n  state a\n    if cycle > 3 halt\nend", 3, 22, "expected 'then ACTIONS'", ""},
      {"trigger t when tokens > 0 do halt", 1, 16, "", ""},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    auto p = parse(c.text);
    REQUIRE_FALSE(p.ok());
    REQUIRE(!p.errors.empty());
    const auto& e = p.errors[0];
    INFO(e.to_string());
    CHECK(e.loc.file == "bad.trig");
    CHECK(e.loc.line == c.line);
    CHECK(e.loc.column == c.column);
    CHECK(e.message.find(c.message) != std::string::npos);
    if (*c.suggestion) {
      REQUIRE(!e.suggestions.empty());
      CHECK(e.suggestions[0] == c.suggestion);
    }
    CHECK(e.to_string().rfind(
              "bad.trig:" + std::to_string(c.line) + ":" + std::to_string(c.column) + ": error: ",
              0) == 0);
  }
}

TEST_CASE("several errors are all reported, in file order", "[trigger][errors]") {
  auto p = parse("trigger a when cycl > 1 do halt\ntrigger b when cycle > 1 do hal\nbogus\n");
  REQUIRE(p.errors.size() == 3);
  CHECK(p.errors[0].loc.line == 1);
  CHECK(p.errors[1].loc.line == 2);
  CHECK(p.errors[2].loc.line == 3);
  CHECK(p.errors[0].suggestions.at(0) == "cycle");
}

TEST_CASE("valid files parse into triggers, events and states", "[trigger][parse]") {
  auto p = parse(R"(# comment
def g2 = dispatch GEMM layer conv2   # trailing comment
def s = every 1_000 saturations
trigger simple shots 2
  when rate(load.stall_mem, 1024) > 70% && g2 == 0
  do halt, capture pre 10 post 20, checkpoint here, snapshot, record, log "a # not a comment", rearm
end
trigger one-line when cycle == 5 do log "x"
trigger sm
  counter n, m
  flag f
  state a
    if s then incr n 2, set f, goto b
    else reset m
  state b
    if state_cycles > 10 && f then clear f, goto a
end
)");
  for (const auto& e : p.errors) UNSCOPED_INFO(e.to_string());
  REQUIRE(p.ok());
  const auto& prog = *p.program;
  REQUIRE(prog.events.size() == 2);
  CHECK(prog.events[0].layer == 1u);
  CHECK(prog.events[1].period == 1000);
  REQUIRE(prog.triggers.size() == 3);
  const auto& t = prog.triggers[0];
  CHECK(t.shots == 2u);
  CHECK(t.conds[0].text == "rate(load.stall_mem, 1024) > 0.7 && g2 == 0");
  CHECK(t.conds[0].loc.line == 5);
  CHECK(t.conds[0].loc.column == 8);
  REQUIRE(t.states[0].branches[0].actions.size() == 7);
  CHECK(t.states[0].branches[0].actions[1].to_string() == "capture pre 10 post 20");
  CHECK(t.states[0].branches[0].actions[5].text == "a # not a comment");
  CHECK(t.max_pre() == 10);
  const auto& sm = prog.triggers[2];
  CHECK(sm.machine);
  REQUIRE(sm.states.size() == 2);
  CHECK(sm.states[0].branches[0].target == 1);
  CHECK(sm.states[0].branches[1].cond == -1);
  CHECK(sm.states[1].branches[0].target == 0);
  CHECK_FALSE(sm.shots.has_value());
}
