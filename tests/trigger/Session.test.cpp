// Triggers inside a debugging session: a halt stops `continue` exactly at the hit cycle with a
// "trigger" reason, windows continue across stops, and the prompt commands (trigger add | list |
// delete | enable | disable | load | hits) manage them.
#include <filesystem>
#include <fstream>

#include "debugger/commands/Interpreter.h"
#include "tests/trigger/TriggerTestSupport.h"

using namespace bud;

namespace {

struct Dbg {
  std::unique_ptr<debugger::Session> session;
  std::unique_ptr<debugger::TriggerEngine> engine;
  std::unique_ptr<debugger::Interpreter> in;
  ~Dbg() {
    in.reset();
    engine.reset();
  }
};

std::unique_ptr<Dbg> make_debugger(const std::string& workload, bool async = true) {
  const auto& p = test::prepared(workload);
  auto o = test::options_for(workload);
  auto emu = std::make_unique<emu::NpuEmulator>(o.emulator);
  REQUIRE(run::start(p, o, *emu).empty());
  debugger::ProgramInfo info;
  info.workload = p.workload.name;
  info.commands = p.program.commands;
  info.layer_names = test::layer_names(p);
  auto d = std::make_unique<Dbg>();
  d->session = std::make_unique<debugger::Session>(std::move(emu), std::move(info));
  debugger::TriggerEngineConfig config;
  config.async = async;
  config.capture_dir =
      (std::filesystem::path(BUD_BINARY_DIR) / "trigger_test" / "session").string();
  config.make_replica = [&p, o](std::string& error) -> std::unique_ptr<emu::Emulator> {
    auto e = std::make_unique<emu::NpuEmulator>(o.emulator);
    error = run::start(p, o, *e);
    return error.empty() ? std::move(e) : nullptr;
  };
  d->engine = std::make_unique<debugger::TriggerEngine>(d->session->emu(), config);
  d->engine->attach(*d->session);
  d->in = std::make_unique<debugger::Interpreter>(*d->session);
  return d;
}

}  // namespace

TEST_CASE("a halt trigger stops the session exactly at the hit cycle", "[trigger][session]") {
  const auto s = test::record("conv");
  const int stall_mem = *isa::find_counter("load.stall_mem");
  auto want = test::edges(s, [&](uint64_t t) {
    return s.at(stall_mem, t) - s.at(stall_mem, t - std::min<uint64_t>(t, 64)) > 40;
  });
  REQUIRE(want.size() >= 3);
  auto d = make_debugger("conv");
  auto r = d->in->execute(
      "trigger add burst when delta(load.stall_mem, 64) > 40 do halt, capture "
      "pre 20 post 5");
  INFO(r.error);
  REQUIRE(r.ok);
  // Stepping in small pieces must not restart the windows: hits stay where a straight run has them.
  r = d->in->execute("step 7");
  REQUIRE(r.ok);
  for (size_t k = 0; k < 3; ++k) {
    r = d->in->execute("continue");
    REQUIRE(r.ok);
    REQUIRE(r.stop);
    CHECK(r.stop->cycle == want[k]);
    CHECK(r.stop->has(debugger::StopKind::Trigger));
  }
  r = d->in->execute("trigger hits");
  REQUIRE(r.ok);
  REQUIRE(d->engine->hits().size() == 3);
  const auto& c = d->engine->hits()[0].captures.at(0);
  CHECK(c.error.empty());
  CHECK(c.from == want[0] - 20);
  CHECK(c.to == want[0] + 5);
  CHECK(std::filesystem::exists(c.fst));

  SECTION("disable, enable and delete") {
    r = d->in->execute("trigger disable 1");
    REQUIRE(r.ok);
    r = d->in->execute("continue");
    REQUIRE(r.stop);
    CHECK_FALSE(r.stop->has(debugger::StopKind::Trigger));
    CHECK(r.stop->has(debugger::StopKind::Finished));
    CHECK(d->in->execute("trigger delete 1").ok);
    CHECK_FALSE(d->in->execute("trigger delete 1").ok);
    r = d->in->execute("trigger list");
    CHECK(r.lines.at(0) == "no triggers");
  }
  SECTION("time travel re-arms: a hit is found again after going back") {
    REQUIRE(d->in->execute("goto 0").ok);
    r = d->in->execute("continue");
    REQUIRE(r.stop);
    CHECK(r.stop->cycle == want[0]);
  }
}

TEST_CASE("trigger commands report errors with positions and load files", "[trigger][session]") {
  auto d = make_debugger("conv");
  auto r = d->in->execute("trigger add t when gemm.stal_mem > 3 do halt");
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("<prompt>:1:16: error: unknown name 'gemm.stal_mem'") != std::string::npos);
  CHECK(r.error.find("gemm.stall_mem") != std::string::npos);
  r = d->in->execute("trigger add");
  CHECK_FALSE(r.ok);
  const auto path = std::filesystem::path(BUD_BINARY_DIR) / "trigger_test" / "load.trig";
  std::filesystem::create_directories(path.parent_path());
  {
    std::ofstream f(path);
    f << "def g2 = dispatch GEMM layer conv2\ntrigger third shots 1 when count(g2) == 3 do halt\n";
  }
  r = d->in->execute("trigger load " + path.string());
  INFO(r.error);
  REQUIRE(r.ok);
  r = d->in->execute("continue");
  REQUIRE(r.stop);
  CHECK(r.stop->has(debugger::StopKind::Trigger));
  r = d->in->execute("trigger list");
  REQUIRE(r.ok);
  CHECK(r.lines.at(0).find("[done, 1 hits]") != std::string::npos);
  CHECK(d->in->execute("trigger enable 1").ok);
  CHECK(d->in->execute("trigger list").lines.at(0).find("[armed, 1 hits]") != std::string::npos);
}

TEST_CASE("trigger add takes events and state machines on one line (a semicolon separates lines)",
          "[trigger][session]") {
  const auto s = test::record("conv");
  // Independently: the cycle of the third GEMM dispatch of layer 0.
  uint64_t third = 0;
  int n = 0;
  for (const auto& d : s.dispatches)
    if (d.cmd.opcode == isa::Opcode::Gemm && d.cmd.layer == 0 && ++n == 3) third = d.cycle;
  REQUIRE(third > 0);
  auto d = make_debugger("conv");
  auto r = d->in->execute(
      "trigger add def g = dispatch GEMM layer 0; third when count(g) == 3 do halt");
  INFO(r.error);
  REQUIRE(r.ok);
  r = d->in->execute("continue");
  REQUIRE(r.stop);
  CHECK(r.stop->cycle == third);
  CHECK(r.stop->has(debugger::StopKind::Trigger));
  r = d->in->execute(
      "trigger add m; state a; if cycle >= " + std::to_string(third + 10) +
      " then goto b; state b; if state_cycles >= 5 then halt; end");
  INFO(r.error);
  REQUIRE(r.ok);
  r = d->in->execute("continue");
  REQUIRE(r.stop);
  // Enters b at third+10; state_cycles counts b's cycles from the next one: 5 at third+15.
  CHECK(r.stop->cycle == third + 15);
  r = d->in->execute("trigger add def g = dispatch GEMX; x when g do halt");
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("<prompt>:1:18: error: unknown opcode 'GEMX' (did you mean GEMM?)") !=
        std::string::npos);
}

TEST_CASE("in a session threaded and inline evaluation stop at the same cycles with the same hits",
          "[trigger][session][threads]") {
  // Halts found late (the simulation has run ahead) make the session travel back to the hit;
  // snapshots and checkpoints too; logs and captures are serviced at pauses.
  const std::vector<std::string> adds = {
      "trigger add burst when delta(load.stall_mem, 64) > 40 do halt, snapshot",
      "trigger add def g = dispatch GEMM; gemms when count(g) % 7 == 6 do log \"7th\", "
      "checkpoint",
      "trigger add cap shots 2 when rose(load.state) && cycle > 3000 do capture pre 50 post 10",
  };
  struct Stop {
    uint64_t cycle;
    std::vector<std::string> reasons;
  };
  auto run = [&](bool async) {
    auto d = make_debugger("conv", async);
    for (const auto& a : adds) REQUIRE(d->in->execute(a).ok);
    std::vector<Stop> stops;
    for (int i = 0; i < 6; ++i) {
      auto r = d->in->execute(i % 2 ? "continue" : "step 5000");
      REQUIRE(r.ok);
      REQUIRE(r.stop);
      Stop s{r.stop->cycle, {}};
      for (const auto& x : r.stop->reasons) s.reasons.push_back(std::string(debugger::stop_kind_name(x.kind)) + " " + x.detail);
      stops.push_back(s);
    }
    std::vector<std::string> hits;
    for (const auto& h : d->engine->hits()) {
      std::string line = std::to_string(h.cycle) + " " + h.trigger + " #" +
                         std::to_string(h.number) + " cp=" + h.checkpoint;
      for (const auto& [n, v] : h.values) line += " " + n + "=" + std::to_string(v);
      for (const auto& [n, v] : h.counters) line += " " + n + "=" + std::to_string(v);
      for (const auto& c : h.captures)
        line += " cap " + std::to_string(c.from) + ".." + std::to_string(c.to);
      hits.push_back(line);
    }
    return std::make_tuple(stops, hits, d->session->emu().digest());
  };
  const auto [ts, th, td] = run(true);
  const auto [is, ih, id] = run(false);
  REQUIRE(ts.size() == is.size());
  for (size_t i = 0; i < ts.size(); ++i) {
    INFO("stop " << i);
    CHECK(ts[i].cycle == is[i].cycle);
    CHECK(ts[i].reasons == is[i].reasons);
  }
  CHECK(th == ih);
  CHECK(td == id);
  CHECK(th.size() > 5);
}
