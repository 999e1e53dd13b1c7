// Run control and breakpoints through the Interpreter: continue/step/until, the empty line,
// cycle/condition/command breakpoints, watchpoints on signals and DRAM words, delete/enable/
// disable/info, and stops that report every reason that applied.
#include <cstring>

#include "debugger/commands/Format.h"
#include "tests/debugger/DebuggerTestSupport.h"

using bud::test::contains;
using bud::test::Debugger;
using bud::test::reason_kinds;
using bud::test::text;

namespace {

/// First cycle (> 0) after which `pred` holds, found by single-stepping a fresh session.
template <typename Pred>
uint64_t first_cycle_where(const std::string& workload, Pred pred) {
  Debugger d(workload);
  auto& emu = d.session->emu();
  while (emu.state() == bud::emu::RunState::Ready) {
    emu.step(1);
    if (pred(d)) return emu.cycle();
  }
  FAIL("condition never held");
  return 0;
}

}  // namespace

TEST_CASE("continue stops exactly at a cycle breakpoint and step N advances N", "[debugger][run]") {
  Debugger d("gemm_small");
  auto b = d.ok("break 500");
  CHECK(contains(text(b), "breakpoint 1: cycle 500"));
  auto r = d.ok("continue");
  REQUIRE(r.stop);
  CHECK(r.stop->cycle == 500);
  CHECK(d.cycle() == 500);
  CHECK(reason_kinds(r) == std::vector<std::string>{"breakpoint"});
  CHECK(r.stop->reasons[0].id == 1);
  CHECK(contains(text(r), "stopped at cycle 500: breakpoint 1"));

  r = d.ok("step 37");
  CHECK(d.cycle() == 537);
  CHECK(reason_kinds(r) == std::vector<std::string>{"step"});
  d.ok("step");
  CHECK(d.cycle() == 538);
  d.ok("s 2");  // alias
  CHECK(d.cycle() == 540);
}

TEST_CASE("until runs to a cycle and refuses one behind", "[debugger][run]") {
  Debugger d("gemm_small");
  auto r = d.ok("until 321");
  CHECK(d.cycle() == 321);
  CHECK(reason_kinds(r) == std::vector<std::string>{"until"});
  const uint64_t dig = d.digest();
  auto e = d.fails("until 100");
  CHECK(contains(e, "not ahead"));
  CHECK(d.cycle() == 321);
  CHECK(d.digest() == dig);
  // A breakpoint before the target stops `until` early.
  d.ok("break 400");
  r = d.ok("until 600");
  CHECK(d.cycle() == 400);
  CHECK(reason_kinds(r) == std::vector<std::string>{"breakpoint"});
}

TEST_CASE("an empty line repeats the last step or continue", "[debugger][run]") {
  Debugger d("gemm_small");
  d.ok("step 10");
  d.ok("");
  CHECK(d.cycle() == 20);
  d.ok("print cycle");  // not repeatable: the empty line still repeats `step 10`
  d.ok("");
  CHECK(d.cycle() == 30);

  d.ok("break 100");
  d.ok("break 200");
  d.ok("continue");
  CHECK(d.cycle() == 100);
  auto r = d.ok("");
  CHECK(d.cycle() == 200);
  REQUIRE(r.stop);
  CHECK(r.stop->reasons[0].id == 2);
}

TEST_CASE("continue on a finished program is a clear error naming the end cycle",
          "[debugger][run]") {
  Debugger d("gemm_small");
  auto r = d.ok("continue");
  REQUIRE(r.stop);
  CHECK(r.stop->has(bud::debugger::StopKind::Finished));
  const uint64_t end = d.cycle();
  CHECK(end > 500);
  const uint64_t dig = d.digest();
  for (const char* line : {"continue", "step", "until 999999"}) {
    auto e = d.fails(line);
    CHECK(contains(e, "finished"));
    CHECK(contains(e, "cycle " + std::to_string(end)));
    CHECK(d.cycle() == end);
    CHECK(d.digest() == dig);
  }
  // The session goes on: inspection and time travel still work.
  d.ok("print cycle");
  d.ok("goto 100");
  CHECK(d.cycle() == 100);
}

TEST_CASE("break if COND stops at the first cycle it becomes true (per-cycle sampling agrees)",
          "[debugger][break]") {
  const auto gemm_active = [](Debugger& d) { return d.value("pmu.gemm.active") > 100; };
  const uint64_t expected = first_cycle_where("gemm_small", gemm_active);
  Debugger d("gemm_small");
  auto b = d.ok("break if gemm.active > 100");
  CHECK(contains(text(b), "breakpoint 1: if "));
  auto r = d.ok("continue");
  REQUIRE(r.stop);
  CHECK(r.stop->cycle == expected);
  CHECK(reason_kinds(r) == std::vector<std::string>{"breakpoint"});
  CHECK(d.value("pmu.gemm.active") == 101);
  // It stays true from now on: it fires again only if it becomes false and true again.
  r = d.ok("continue");
  CHECK(r.stop->has(bud::debugger::StopKind::Finished));
  CHECK_FALSE(r.stop->has(bud::debugger::StopKind::Breakpoint));
}

TEST_CASE("a condition over several counters, with a windowed function", "[debugger][break]") {
  const uint64_t expected = first_cycle_where("conv", [](Debugger& d) {
    return d.value("pmu.load.stall_mem") > 50 && d.value("pmu.gemm.active") > 0;
  });
  Debugger d("conv");
  d.ok("break if load.stall_mem > 50 && gemm.active > 0");
  auto r = d.ok("continue");
  CHECK(r.stop->cycle == expected);
}

TEST_CASE("command breakpoints: opcode, #index and layer", "[debugger][break]") {
  SECTION("opcode") {
    Debugger d("gemm_small");
    d.ok("break cmd gemm");
    auto r = d.ok("continue");
    REQUIRE(r.stop);
    REQUIRE(r.stop->reasons.size() == 1);
    CHECK(contains(r.stop->reasons[0].detail, "GEMM"));
    CHECK(contains(r.stop->reasons[0].detail, "dispatched"));
    // The dispatched GEMM is #3 of gemm_small (LOAD wgt, LOAD acc, LOAD inp, GEMM, ...).
    CHECK(contains(r.stop->reasons[0].detail, "#3 "));
  }
  SECTION("#index") {
    Debugger d("gemm_small");
    d.ok("break cmd #5");
    auto r = d.ok("continue");
    REQUIRE(r.stop);
    REQUIRE(r.stop->reasons.size() == 1);
    CHECK(contains(r.stop->reasons[0].detail, "#5 "));
    // It does not fire again.
    r = d.ok("continue");
    CHECK(r.stop->has(bud::debugger::StopKind::Finished));
  }
  SECTION("layer, by name and by number") {
    for (const char* spec : {"break cmd layer conv2", "break cmd layer 1"}) {
      Debugger d("conv");
      d.ok(spec);
      auto r = d.ok("continue");
      REQUIRE(r.stop);
      REQUIRE_FALSE(r.stop->reasons.empty());
      CHECK(contains(r.stop->reasons[0].detail, " L1 "));
    }
  }
  SECTION("opcode and layer together") {
    Debugger d("conv");
    d.ok("break cmd store layer skip");
    auto r = d.ok("continue");
    REQUIRE(r.stop);
    CHECK(contains(r.stop->reasons[0].detail, "STORE"));
    CHECK(contains(r.stop->reasons[0].detail, " L2 "));
  }
}

TEST_CASE("a watchpoint on a signal stops on change with old -> new", "[debugger][watch]") {
  uint64_t initial = 0;
  {
    Debugger d("gemm_small");
    initial = d.value("load.state");
  }
  const uint64_t expected = first_cycle_where(
      "gemm_small", [&](Debugger& d) { return d.value("load.state") != initial; });
  Debugger d("gemm_small");
  auto w = d.ok("watch load.state");
  CHECK(contains(text(w), "watchpoint 1"));
  auto r = d.ok("continue");
  REQUIRE(r.stop);
  CHECK(r.stop->cycle == expected);
  REQUIRE(reason_kinds(r) == std::vector<std::string>{"watchpoint"});
  const std::string want =
      "load.state: " + bud::debugger::hex64(initial) + " -> " + bud::debugger::hex64(d.value("load.state"));
  CHECK(r.stop->reasons[0].detail == want);
}

TEST_CASE("a watchpoint on a DRAM word stops when the design writes it", "[debugger][watch]") {
  // Where does the design write first? Compare DRAM before and after the run.
  uint64_t addr = 0;
  {
    Debugger d("gemm_small");
    auto& emu = d.session->emu();
    const uint64_t size = emu.memories()[0].size_bytes;
    REQUIRE(emu.memories()[0].name == "dram");
    std::vector<uint8_t> before(size), after(size);
    REQUIRE(emu.read_memory("dram", 0, before));
    d.ok("continue");
    REQUIRE(emu.read_memory("dram", 0, after));
    uint64_t i = 0;
    while (i < size && before[i] == after[i]) ++i;
    REQUIRE(i < size);
    addr = i & ~uint64_t{3};
  }
  Debugger d("gemm_small");
  char cmd[64];
  std::snprintf(cmd, sizeof cmd, "watch dram 0x%llx 4", static_cast<unsigned long long>(addr));
  d.ok(cmd);
  auto r = d.ok("continue");
  REQUIRE(r.stop);
  REQUIRE(reason_kinds(r) == std::vector<std::string>{"watchpoint"});
  const uint64_t hit = r.stop->cycle;
  uint32_t now = 0;
  REQUIRE(d.session->emu().read_memory("dram", addr,
                                       std::span<uint8_t>(reinterpret_cast<uint8_t*>(&now), 4)));
  char want[48];
  std::snprintf(want, sizeof want, "-> 0x%x", now);
  CHECK(contains(r.stop->reasons[0].detail, want));
  CHECK(contains(r.stop->reasons[0].detail, "dram["));
  // One cycle earlier the word still held the old value.
  d.ok("reverse-step");
  uint32_t before = 0;
  REQUIRE(d.session->emu().read_memory("dram", addr,
                                       std::span<uint8_t>(reinterpret_cast<uint8_t*>(&before), 4)));
  CHECK(before != now);
  std::snprintf(want, sizeof want, "0x%x -> 0x%x", before, now);
  CHECK(contains(r.stop->reasons[0].detail, want));
  CHECK(d.cycle() == hit - 1);
}

TEST_CASE("every stop reports all reasons that applied on the same cycle", "[debugger][break]") {
  uint64_t initial = 0;
  {
    Debugger d("gemm_small");
    initial = d.value("load.state");
  }
  const uint64_t change = first_cycle_where(
      "gemm_small", [&](Debugger& d) { return d.value("load.state") != initial; });
  Debugger d("gemm_small");
  d.ok("break " + std::to_string(change));
  d.ok("watch load.state");
  // A NAME CMP INTEGER condition (evaluated apart, in a tight loop) is reported in list order.
  d.ok("break if cycle >= " + std::to_string(change));
  auto r = d.ok("continue");
  REQUIRE(r.stop);
  CHECK(r.stop->cycle == change);
  CHECK(reason_kinds(r) == std::vector<std::string>{"breakpoint", "watchpoint", "breakpoint"});
  CHECK(r.stop->reasons[0].id == 1);
  CHECK(r.stop->reasons[1].id == 2);
  CHECK(r.stop->reasons[2].id == 3);
  CHECK(contains(text(r), "breakpoint 1"));
  CHECK(contains(text(r), "watchpoint 2"));
  // The JSON form of the stop lists both.
  CHECK(contains(r.data.dump(), "\"kind\":\"breakpoint\""));
  CHECK(contains(r.data.dump(), "\"kind\":\"watchpoint\""));
}

// Bug: NpuEmulator::step() returns as soon as the run leaves Ready, before calling the cycle
// hook, so breakpoints and watchpoints are not evaluated on the cycle a run finishes (or hangs or
// asserts): the stop says only "finished".
TEST_CASE("a breakpoint on the last cycle reports both the breakpoint and the end",
          "[debugger][break]") {
  Debugger probe("gemm_small");
  probe.ok("continue");
  const uint64_t end = probe.cycle();
  Debugger d("gemm_small");
  d.ok("break " + std::to_string(end));
  auto r = d.ok("continue");
  CHECK(r.stop->cycle == end);
  CHECK(r.stop->has(bud::debugger::StopKind::Breakpoint));
  CHECK(r.stop->has(bud::debugger::StopKind::Finished));
}

TEST_CASE("delete, enable, disable and info breakpoints", "[debugger][break]") {
  Debugger d("gemm_small");
  d.ok("break 100");
  d.ok("break 200");
  d.ok("watch load.state");
  auto info = text(d.ok("info breakpoints"));
  CHECK(contains(info, "cycle 100"));
  CHECK(contains(info, "cycle 200"));
  CHECK(contains(info, "watch load.state"));

  d.ok("disable 3");
  d.ok("disable 1");
  CHECK(contains(text(d.ok("info breakpoints")), "disabled"));
  auto r = d.ok("continue");
  CHECK(d.cycle() == 200);  // 1 and 3 are disabled
  CHECK(r.stop->reasons.size() == 1);
  CHECK(r.stop->reasons[0].id == 2);

  d.ok("delete 2");
  d.ok("enable 3");
  info = text(d.ok("info breakpoints"));
  CHECK_FALSE(contains(info, "cycle 200"));
  // Hit counts: breakpoint 2 is gone; breakpoint 1 never fired.
  CHECK(contains(info, "hits 0"));
  r = d.ok("continue");
  CHECK(reason_kinds(r) == std::vector<std::string>{"watchpoint"});

  d.ok("delete");
  CHECK(contains(text(d.ok("info breakpoints")), "no breakpoints"));
  r = d.ok("continue");
  CHECK(r.stop->has(bud::debugger::StopKind::Finished));

  CHECK(contains(d.fails("delete 42"), "no breakpoint 42"));
  CHECK(contains(d.fails("enable 42"), "no breakpoint 42"));
}
