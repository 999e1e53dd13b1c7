// The per-cycle contract of trigger frame production: once a run with 8 triggers armed is set up
// (evaluation thread started, frame ring and condition histories allocated), producing and
// evaluating frames, inline or on the evaluation thread, never allocates (tests/AllocCount.cpp
// counts every operator new of the process, the evaluation thread's included).
#include "debugger/trigger/TriggerParticipant.h"
#include "emu/drive/Driver.h"
#include "tests/AllocCount.h"
#include "tests/trigger/TriggerTestSupport.h"

using namespace bud;

namespace {

// The shapes of tests/bench/trigger_bench.trig (rate windows, a state machine, thresholds, a
// dispatch count, an every-N event, a cycle range, the progress built-ins), with thresholds the
// run does not reach: a hit allocates (its record), a cycle without one must not.
constexpr const char* kEightTriggers = R"(
def gemm_l0 = dispatch GEMM layer 0
def every_gemm = every 100000000000 macs_issued

trigger stall_rate_load
  when count(1) >= 1024 && rate(load.stall_mem, 1024) > 1.5
  do log "load stalled"
end
trigger stall_rate_gemm
  when count(1) >= 4096 && rate(gemm.stall_dep, 4096) > 1.5
  do log "gemm starved"
end
trigger mem_threshold shots 1
  when load.stall_mem >= 5000000000
  do log "load stall cycles"
end
trigger many_gemms shots 1
  when count(gemm_l0) == 1000000
  do log "a million GEMMs of layer 0"
end
trigger mac_sample
  when every_gemm
  do log "MACs"
end
trigger cycle_range shots 1
  when cycle >= 900000000 && cycle < 900000010 && load.state != 0
  do log "load busy"
end
trigger no_progress
  when since_progress >= 50000000 || hang || assertion
  do log "stuck"
end
trigger gemm_burst
  counter bursts
  state idle
    if gemm.active - gemm.stall_dep > 1000000000 then incr bursts, goto busy
  state busy
    if state_cycles >= 5000 then log "burst over", goto idle
end
)";

}  // namespace

TEST_CASE("trigger frame production does not allocate per cycle with 8 triggers armed",
          "[trigger][alloc]") {
  const bool threaded = GENERATE(true, false);
  INFO((threaded ? "evaluation thread" : "inline evaluation"));
  const auto& p = test::prepared("compute_bound");
  auto o = test::options_for("compute_bound");
  emu::NpuEmulator e(o.emulator);
  REQUIRE(run::start(p, o, e).empty());
  const auto layers = test::layer_names(p);
  debugger::TriggerEnv env;
  env.emu = &e;
  env.layer_names = &layers;
  auto parse = debugger::parse_triggers(kEightTriggers, "alloc.trig", env);
  for (const auto& err : parse.errors) UNSCOPED_INFO(err.to_string());
  REQUIRE(parse.ok());
  debugger::TriggerEngineConfig config;
  config.async = threaded;
  debugger::TriggerEngine engine(e, config);
  REQUIRE(engine.add(std::move(*parse.program)).size() == 8);

  drive::Driver driver(e);
  debugger::TriggerParticipant triggers(engine);
  driver.add(triggers);
  driver.set_rewinder(&triggers);
  // Set-up: the thread and its ring, the driver's lists, the conditions' first evaluations.
  driver.run_until(20'000, 4096);

  const uint64_t probe = bud::test::allocations();
  ::operator delete(::operator new(16));
  REQUIRE(bud::test::allocations() == probe + 1);  // the counter works
  const uint64_t before = bud::test::allocations();
  // Pauses every 4096 cycles: each settles with the evaluation thread and services hits.
  const auto s = driver.run_until(200'000, 4096);
  engine.quiesce();
  const uint64_t allocations = bud::test::allocations() - before;
  REQUIRE(s.reached_target);
  REQUIRE(e.cycle() == 200'000);
  CHECK(allocations == 0);
  CHECK(engine.hits().empty());
  // Every trigger was evaluated on every cycle of the measured run.
  const auto status = engine.status();
  REQUIRE(status.size() == 8);
  for (const auto& t : status) {
    INFO(t.name);
    CHECK(t.armed_cycles == 200'000);
  }
}
