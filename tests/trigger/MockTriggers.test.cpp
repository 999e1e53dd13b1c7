// Triggers on the mock design (tests/core/MockEmulator): the language, the evaluation thread and
// the halt action run on a design with no NPU behind it, naming its counters and signals from
// its own description. The hit cycles are checked against a forward run stepped one cycle at a
// time on a second mock.
#include <catch2/catch.hpp>

#include "debugger/trigger/TriggerEngine.h"
#include "debugger/trigger/TriggerParticipant.h"
#include "emu/drive/Driver.h"
#include "emu/run/Designs.h"
#include "tests/core/MockDesign.h"

using namespace bud;

namespace {

std::unique_ptr<emu::Emulator> loaded_mock(const run::PreparedRun& p, const run::RunOptions& o) {
  std::string error;
  auto e = emu::make_emulator(o.emulator, error);
  INFO(error);
  REQUIRE(e);
  REQUIRE(e->design() == "mock");
  REQUIRE(run::start(p, o, *e).empty());
  return e;
}

/// First cycle (after its edge) at which counter `name` reaches `value`, one cycle at a time.
uint64_t first_cycle_reaching(const run::PreparedRun& p, const run::RunOptions& o,
                              const std::string& name, uint64_t value) {
  auto e = loaded_mock(p, o);
  const auto index = e->describe().find_counter(name);
  REQUIRE(index);
  while (e->counter(*index) < value) {
    REQUIRE(e->state() == emu::RunState::Ready);
    drive::advance(*e, e->cycle() + 1);
  }
  return e->cycle();
}

}  // namespace

TEST_CASE("triggers on the mock design halt where a forward run reaches the condition",
          "[trigger][mock]") {
  const bool threaded = GENERATE(true, false);
  INFO((threaded ? "evaluation thread" : "inline evaluation"));
  test::use_mock_design();
  const auto o = test::mock_options("mlp");
  auto prepared = run::prepare(o);
  REQUIRE(prepared.ok());
  const auto& p = prepared.value();
  const uint64_t want = first_cycle_reaching(p, o, "transactions", 100);

  auto e = loaded_mock(p, o);
  debugger::TriggerEnv env;
  env.emu = e.get();
  // The design's own counter names; an NPU counter is an error naming it.
  auto bad = debugger::parse_triggers("trigger t when gemm.stall_mem > 0 do halt end\n",
                                      "mock.trig", env);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.errors.front().to_string().find("gemm.stall_mem") != std::string::npos);
  auto parse = debugger::parse_triggers(
      "trigger hundred shots 1\n  when transactions >= 100\n  do halt\nend\n", "mock.trig", env);
  for (const auto& err : parse.errors) UNSCOPED_INFO(err.to_string());
  REQUIRE(parse.ok());

  debugger::TriggerEngineConfig config;
  config.async = threaded;
  debugger::TriggerEngine engine(*e, config);
  REQUIRE(engine.add(std::move(*parse.program)).size() == 1);
  drive::Driver driver(*e);
  debugger::TriggerParticipant triggers(engine);
  driver.add(triggers);
  driver.set_rewinder(&triggers);
  const auto s = driver.run_until(UINT64_MAX, 64);
  engine.quiesce();
  CHECK(s.halted);
  REQUIRE(engine.hits().size() == 1);
  CHECK(engine.hits().front().cycle == want);
  CHECK(engine.hits().front().halted);
  CHECK(e->cycle() == want);  // the run stopped at the hit, whatever the evaluation lag
}
