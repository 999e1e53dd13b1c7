// Resource limits of the trigger language (docs/triggers.md, "Limits"): condition history per
// file and per session, trigger count, expression size and file size, each tested at the limit
// and just past it; the hostile files of issue 12 are refused before their memory is allocated;
// long tokens are not repeated in messages.
#include <fstream>

#include "debugger/trigger/TriggerEngine.h"
#include "tests/trigger/TriggerTestSupport.h"

using namespace bud;

namespace {

emu::NpuEmulator& emulator() {
  static emu::NpuEmulator emu(emu::NpuConfig{});
  return emu;
}

debugger::TriggerParse parse(const std::string& text, const debugger::TriggerLimits& limits = {},
                             size_t session_bytes = 0) {
  debugger::TriggerEnv env;
  env.emu = &emulator();
  env.limits = limits;
  env.session_history_bytes = session_bytes;
  return debugger::parse_triggers(text, "limits.trig", env);
}

// `n` one-line triggers t0..t{n-1}, each with a delta() of window `w` over its own counter use.
std::string delta_triggers(size_t n, uint32_t w) {
  std::string s;
  for (size_t i = 0; i < n; ++i)
    s += "trigger t" + std::to_string(i) + " when delta(cycles, " + std::to_string(w) +
         ") > 0 do halt\n";
  return s;
}

// History bytes of one delta(X, w): 8 * (w + 1).
constexpr size_t ring_bytes(uint32_t w) { return 8 * (size_t{w} + 1); }

std::string all_errors(const debugger::TriggerParse& p) {
  std::string s;
  for (const auto& e : p.errors) s += e.to_string() + "\n";
  return s;
}

}  // namespace

TEST_CASE("the hostile trigger file of 200 long-window deltas is refused without allocating",
          "[trigger][limits]") {
  // ~12 KB of text asking for 200 * 128 MiB = 25 GiB of history.
  const std::string text = delta_triggers(200, 16'777'216);
  CHECK(text.size() < 13'000);
  const auto p = parse(text);
  INFO(all_errors(p));
  REQUIRE_FALSE(p.ok());
  REQUIRE(p.errors.size() == 1);
  const auto& e = p.errors[0];
  // The first trigger (128 MiB) fits the default 256 MiB per file; the second does not.
  CHECK(e.loc.file == "limits.trig");
  CHECK(e.loc.line == 2);
  CHECK(e.message.find("trigger 't1'") != std::string::npos);
  CHECK(e.message.find(std::to_string(ring_bytes(16'777'216))) != std::string::npos);
  CHECK(e.message.find(std::to_string(size_t{256} << 20)) != std::string::npos);
  CHECK(e.message.find("--max-trigger-history") != std::string::npos);
  // The whole file's need is reported once.
  CHECK(e.message.find("whole file needs " + std::to_string(200 * ring_bytes(16'777'216))) !=
        std::string::npos);
}

TEST_CASE("history per file: at the limit and one byte past it", "[trigger][limits]") {
  const uint32_t w = 1023;  // 8 KiB per trigger
  debugger::TriggerLimits l;
  l.max_file_history_bytes = 3 * ring_bytes(w);
  const auto at = parse(delta_triggers(3, w), l);
  INFO(all_errors(at));
  REQUIRE(at.ok());
  CHECK(at.program->history_bytes() == 3 * ring_bytes(w));
  l.max_file_history_bytes = 3 * ring_bytes(w) - 1;
  const auto past = parse(delta_triggers(3, w), l);
  REQUIRE(past.errors.size() == 1);
  CHECK(past.errors[0].loc.line == 3);
  CHECK(past.errors[0].message.find("trigger 't2'") != std::string::npos);
  CHECK(past.errors[0].message.find("per file") != std::string::npos);
  // Repeating the same (name, window) in one condition shares one ring.
  l.max_file_history_bytes = ring_bytes(w);
  CHECK(parse("trigger t when delta(cycles, 1023) > delta(cycles, 1023) do halt", l).ok());
}

TEST_CASE("history per session: what is already loaded counts", "[trigger][limits]") {
  const uint32_t w = 1023;
  debugger::TriggerLimits l;
  l.max_session_history_bytes = 4 * ring_bytes(w);
  CHECK(parse(delta_triggers(2, w), l, 2 * ring_bytes(w)).ok());
  const auto past = parse(delta_triggers(2, w), l, 2 * ring_bytes(w) + 1);
  REQUIRE(past.errors.size() == 1);
  CHECK(past.errors[0].loc.line == 2);
  CHECK(past.errors[0].message.find("session limit of " + std::to_string(4 * ring_bytes(w))) !=
        std::string::npos);
  CHECK(past.errors[0].message.find("--max-session-trigger-history") != std::string::npos);

  // Through an engine: its env() counts every program added so far.
  debugger::TriggerEngineConfig config;
  config.limits = l;
  debugger::TriggerEngine engine(emulator(), config);
  for (int round = 0; round < 2; ++round) {
    auto p = debugger::parse_triggers(delta_triggers(2, w), "f.trig", engine.env());
    INFO(all_errors(p));
    REQUIRE(p.ok());
    engine.add(std::move(*p.program));
  }
  CHECK(engine.env().session_history_bytes == 4 * ring_bytes(w));
  auto third =
      debugger::parse_triggers("trigger x when rose(cycles) do halt", "g.trig", engine.env());
  REQUIRE_FALSE(third.ok());
  CHECK(third.errors[0].message.find("trigger 'x'") != std::string::npos);
  // Stateless conditions need no history and still load.
  CHECK(debugger::parse_triggers("trigger y when cycles > 5 do halt", "h.trig", engine.env()).ok());
}

TEST_CASE("trigger count per file: at the limit and one past it", "[trigger][limits]") {
  debugger::TriggerLimits l;
  CHECK(l.max_triggers == 1024);
  std::string text;
  for (int i = 0; i < 1024; ++i)
    text += "trigger t" + std::to_string(i) + " when cycle > 1 do halt\n";
  CHECK(parse(text, l).ok());
  text += "trigger extra when cycle > 1 do halt\n";
  const auto past = parse(text, l);
  REQUIRE(past.errors.size() == 1);
  CHECK(past.errors[0].loc.line == 1025);
  CHECK(past.errors[0].message.find("more than 1024 triggers") != std::string::npos);
}

TEST_CASE("expression size: at the node limit and one node past it", "[trigger][limits]") {
  // "cycle + cycle + ... > 0" with k terms has 2k + 1 nodes.
  auto cond = [](int k) {
    std::string s = "cycle";
    for (int i = 1; i < k; ++i) s += " + cycle";
    return "trigger t when " + s + " > 0 do halt";
  };
  debugger::TriggerLimits l;
  l.max_expression_nodes = 2 * 50 + 1;
  CHECK(parse(cond(50), l).ok());
  l.max_expression_nodes = 2 * 50;
  const auto past = parse(cond(50), l);
  REQUIRE(past.errors.size() == 1);
  CHECK(past.errors[0].message.find("101 nodes, more than the limit of 100") != std::string::npos);
}

TEST_CASE("trigger file size: at the limit and one byte past it", "[trigger][limits]") {
  debugger::TriggerLimits l;
  CHECK(l.max_file_bytes == size_t{1} << 20);
  // Exactly 1 MiB: a trigger, then comment lines.
  std::string text = "trigger t when cycle > 1 do halt\n";
  while (text.size() < l.max_file_bytes) text += "#";
  CHECK(parse(text, l).ok());
  text += "#";
  const auto past = parse(text, l);
  REQUIRE(past.errors.size() == 1);
  CHECK(past.errors[0].loc.line == 0);
  CHECK(past.errors[0].message.find(std::to_string(l.max_file_bytes + 1) + " bytes") !=
        std::string::npos);
  // Reading a file stops at the limit: /dev/zero is refused, not read forever.
  debugger::TriggerEnv env;
  env.emu = &emulator();
  const auto zero = debugger::load_trigger_file("/dev/zero", env);
  REQUIRE(zero.errors.size() == 1);
  CHECK(zero.errors[0].message.find("larger than the limit") != std::string::npos);
}

TEST_CASE("messages do not repeat a megabyte-long token", "[trigger][limits][errors]") {
  const std::string big(1'000'000, 'q');
  for (const std::string& text :
       {"trigger t when cycle > 1 do " + big, big, "trigger t when " + big + " > 1 do halt",
        "trigger " + big + "! when cycle > 1 do halt"}) {
    const auto p = parse(text);
    REQUIRE_FALSE(p.ok());
    for (const auto& e : p.errors) {
      INFO(e.to_string().substr(0, 300));
      CHECK(e.to_string().size() < 400);
      CHECK(e.to_string().find("...") != std::string::npos);
    }
  }
}
