// Changing state through the Interpreter: deposit (once), force (held until release), release,
// deposits into memories; and bad input of every command family: one clear error, state (digest
// and cycle) unchanged, the session goes on.
#include "tests/debugger/DebuggerTestSupport.h"

using bud::test::contains;
using bud::test::Debugger;
using bud::test::text;

TEST_CASE("deposit into pmu.cycles changes the next value", "[debugger][change]") {
  Debugger d("gemm_small");
  d.ok("step 100");
  REQUIRE(d.value("pmu.cycles") == 99);  // counts from the first cycle after reset
  auto r = d.ok("deposit pmu.cycles 5000");
  CHECK(contains(text(r), "5000"));
  CHECK(d.value("pmu.cycles") == 5000);
  d.ok("step");
  CHECK(d.value("pmu.cycles") == 5001);
  d.ok("step 9");
  CHECK(d.value("pmu.cycles") == 5010);
  CHECK(d.cycle() == 110);  // the simulated cycle is not the counter
}

TEST_CASE("force holds a signal across steps, release lets it move", "[debugger][change]") {
  Debugger d("gemm_small");
  d.ok("step 100");
  auto r = d.ok("force pmu.cycles 7");
  CHECK(contains(text(r), "forced"));
  d.ok("step");
  CHECK(d.value("pmu.cycles") == 7);
  d.ok("step 50");
  CHECK(d.value("pmu.cycles") == 7);
  d.ok("release pmu.cycles");
  d.ok("step 10");
  CHECK(d.value("pmu.cycles") > 7);
  CHECK(d.value("pmu.cycles") <= 7 + 10);
  const uint64_t v = d.value("pmu.cycles");
  d.ok("step");
  CHECK(d.value("pmu.cycles") == v + 1);
}

TEST_CASE("force of a design register changes what the design does", "[debugger][change]") {
  // Holding the compute engine's state at idle stops GEMMs from making progress.
  Debugger ref("gemm_small");
  ref.ok("until 600");
  Debugger d("gemm_small");
  d.ok("until 100");
  d.ok("force compute.state 0");
  d.ok("until 600");
  CHECK(d.value("compute.state") == 0);
  CHECK(d.value("pmu.gemm.active") < ref.value("pmu.gemm.active"));
  d.ok("release compute.state");
  CHECK(d.digest() != ref.digest());
}

TEST_CASE("deposit into a memory word is visible to x and to the design", "[debugger][change]") {
  Debugger d("gemm_small");
  d.ok("deposit dram 0x300000 0xabcd 2");
  CHECK(d.ok("x dram 0x300000 2").lines.at(0) == "dram+0x300000: cd ab");
  d.ok("deposit out 4 0x7f");
  CHECK(d.ok("x/i8 out 4 1").lines.at(0) == "out+0x000004: 127");
}

TEST_CASE("bad input: one clear error, state unchanged, the session goes on",
          "[debugger][errors]") {
  Debugger d("gemm_small");
  d.ok("break 700");
  d.ok("continue");
  d.ok("checkpoint here");
  const uint64_t cycle = d.cycle();
  const uint64_t dig = d.digest();
  const auto unchanged = [&] {
    CHECK(d.cycle() == cycle);
    CHECK(d.digest() == dig);
  };

  std::string e = d.fails("contiue");
  CHECK(contains(e, "unknown command 'contiue'"));
  CHECK(contains(e, "did you mean continue"));
  unchanged();

  e = d.fails("print load.stat");
  CHECK(contains(e, "unknown signal 'load.stat'"));
  CHECK(contains(e, "did you mean load.state"));
  unchanged();
  e = d.fails("watch lod.state");
  CHECK(contains(e, "load.state"));
  e = d.fails("deposit gemm.stal_mem 3");
  CHECK(contains(e, "gemm.stall_mem"));
  e = d.fails("force tokens[9] 1");
  CHECK(contains(e, "tokens"));
  unchanged();

  e = d.fails("break if gemm.active > ");
  CHECK(contains(e, "column 15"));
  e = d.fails("break if gemm.activ > 3");
  CHECK(contains(e, "column"));
  CHECK(contains(e, "gemm.active"));
  e = d.fails("break if (gemm.active > 3");
  CHECK(contains(e, "column"));
  CHECK(contains(text(d.ok("info breakpoints")), "cycle 700"));
  CHECK_FALSE(contains(text(d.ok("info breakpoints")), "if "));
  unchanged();

  e = d.fails("x dram 0x1000000 4");
  CHECK(contains(e, "outside dram"));
  e = d.fails("x/i32 acc 0xffffff 1");
  CHECK(contains(e, "outside acc"));
  e = d.fails("deposit dram 0x7fffffff 1");
  CHECK(contains(e, "outside dram"));
  e = d.fails("watch dram 0x1000000");
  CHECK(contains(e, "outside"));
  e = d.fails("x dram 0xffffffffffffffff 4");  // the end of the range wraps around
  CHECK(contains(e, "outside dram"));
  e = d.fails("x/q dram 0");
  CHECK(contains(e, "unknown format"));
  e = d.fails("x drm 0");
  CHECK(contains(e, "did you mean dram"));
  unchanged();

  e = d.fails("restore nowhere");
  CHECK(contains(e, "no checkpoint named 'nowhere'"));
  CHECK(contains(e, "here"));  // lists the ones that exist
  unchanged();

  e = d.fails("deposit load.state 9");  // 2-bit register
  CHECK(contains(e, "does not fit"));
  e = d.fails("step 0");
  CHECK(contains(e, "positive"));
  e = d.fails("step many");
  e = d.fails("break cmd frobnicate");
  CHECK(contains(e, "opcode"));
  e = d.fails("break cmd layer nolayer");
  CHECK(contains(e, "unknown layer"));
  e = d.fails("break 10");
  CHECK(contains(e, "not in the future"));
  e = d.fails("info nothing");
  e = d.fails("wave dump 10 5 w.fst");
  unchanged();

  // goto past the end of a finished run.
  d.ok("delete");
  d.ok("continue");
  const uint64_t end = d.cycle();
  const uint64_t end_dig = d.digest();
  e = d.fails("goto " + std::to_string(end + 1000));
  CHECK(contains(e, "past the end"));
  CHECK(contains(e, std::to_string(end)));
  CHECK(d.cycle() == end);
  CHECK(d.digest() == end_dig);
  e = d.fails("wave dump 10 " + std::to_string(end + 5) + " w.fst");
  CHECK(contains(e, "past the end"));
  CHECK(d.cycle() == end);

  // The session goes on.
  d.ok("goto " + std::to_string(cycle));
  CHECK(d.digest() == dig);
  d.ok("step 10");
  CHECK(d.cycle() == cycle + 10);
}

TEST_CASE("goto past the end of a run that has not finished yet", "[debugger][errors]") {
  Debugger d("gemm_small");
  d.ok("step 100");
  const uint64_t dig = d.digest();
  auto e = d.fails("goto 5000000");
  CHECK(contains(e, "ended at cycle"));
  CHECK(d.cycle() == 100);
  CHECK(d.digest() == dig);
  d.ok("step");
  CHECK(d.cycle() == 101);
}
