// Inspection through the Interpreter: print (formats, signals, counters, CSRs, expressions),
// counters with deltas since the previous stop, x on DRAM and scratchpads, info stages, where.
#include <cstring>

#include "debugger/commands/Format.h"
#include "tests/debugger/DebuggerTestSupport.h"

using bud::test::contains;
using bud::test::Debugger;
using bud::test::text;

TEST_CASE("print a signal in hex, decimal and binary", "[debugger][print]") {
  Debugger d("gemm_small");
  d.ok("until 150");
  const uint64_t head = d.value("fetch.head_q");
  const uint64_t y = d.value("load.y_left");
  CHECK(
      text(d.ok("print fetch.head_q")) == "fetch.head_q = " + std::to_string(head) + " (0x" + [&] {
        char b[24];
        std::snprintf(b, sizeof b, "%llx", static_cast<unsigned long long>(head));
        return std::string(b);
      }() + ")\n");
  auto r = d.ok("print/d load.y_left");
  CHECK(r.lines.at(0) == "load.y_left = " + std::to_string(y));
  CHECK(contains(r.data.dump(), "\"value\":" + std::to_string(y)));
  r = d.ok("print/x cycle");
  CHECK(r.lines.at(0) == "cycle = 0x96");
  r = d.ok("print/b cycle");
  CHECK(contains(r.lines.at(0), "10010110"));
  r = d.ok("p/x tokens[0]");
  CHECK(contains(r.lines.at(0), "tokens[0] = 0x"));
}

TEST_CASE("print counters (with or without pmu.), CSRs and expressions", "[debugger][print]") {
  Debugger d("gemm_small");
  d.ok("until 700");
  auto& emu = d.session->emu();
  const uint64_t active = d.value("pmu.gemm.active");
  REQUIRE(active > 0);
  CHECK(contains(text(d.ok("print gemm.active")), "= " + std::to_string(active)));
  CHECK(contains(text(d.ok("print pmu.gemm.active")), "= " + std::to_string(active)));

  // STATUS: the same value a side-effect-free CSR read gives.
  uint32_t status_addr = 0;
  for (const auto& c : emu.csrs())
    if (c.name == "STATUS") status_addr = c.addr;
  const auto status = emu.read_csr(status_addr);
  REQUIRE(status);
  auto r = d.ok("print STATUS");
  CHECK(r.lines.at(0) ==
        "csr.STATUS = " + std::to_string(*status) + " (" + bud::debugger::hex64(*status) + ")");
  CHECK(contains(text(d.ok("print csr.STATUS")), "csr.STATUS = "));
  CHECK(contains(text(d.ok("info registers")), "STATUS"));

  r = d.ok("print gemm.active * 2 + 1");
  CHECK(contains(text(r), "= " + std::to_string(active * 2 + 1)));
  r = d.ok("print gemm.active > 0 && load.active > 0");
  CHECK(contains(text(r), "= 1"));
  // Printing does not disturb the design.
  const uint64_t dig = d.digest();
  d.ok("print STATUS");
  d.ok("print gemm.active * 3");
  CHECK(d.digest() == dig);
}

TEST_CASE("counters shows each counter's change since the previous stop", "[debugger][print]") {
  Debugger d("gemm_small");
  d.ok("step 100");
  d.ok("step 50");
  auto r = d.ok("counters");
  // Delta of the cycle counter = cycles between the last two stops (it counts from the first
  // cycle after reset, so it reads cycle - 1).
  REQUIRE(d.value("pmu.cycles") == 149);
  CHECK(contains(r.data.dump(), "\"cycles\":{\"value\":149,\"delta\":50}"));
  bool found = false;
  for (const auto& l : r.lines)
    if (l.rfind("cycles ", 0) == 0) {
      found = true;
      CHECK(contains(l, "149"));
      CHECK(contains(l, "+50"));
    }
  CHECK(found);
  // Inspection is not a stop: the deltas stay until the next stop.
  d.ok("print cycle");
  CHECK(contains(d.ok("counters").data.dump(), "\"cycles\":{\"value\":149,\"delta\":50}"));
  d.ok("until 400");
  r = d.ok("counters gemm");
  CHECK(contains(r.data.dump(), "gemm.active"));
  CHECK_FALSE(contains(r.data.dump(), "load.active"));
  const uint64_t active = d.value("pmu.gemm.active");
  d.ok("step 10");
  r = d.ok("counters gemm.active");
  CHECK(contains(r.data.dump(),
                 "\"value\":" + std::to_string(d.value("pmu.gemm.active")) +
                     ",\"delta\":" + std::to_string(d.value("pmu.gemm.active") - active)));
}

TEST_CASE("x examines DRAM and scratchpads as int8, int32 and hex", "[debugger][print]") {
  Debugger d("gemm_small");
  auto& emu = d.session->emu();
  // Known bytes in DRAM: ff 7f 80 01 | 78 56 34 12.
  d.ok("deposit dram 0x200000 0x0180_7fff 4");
  d.ok("deposit dram 0x200004 0x12345678 4");
  auto r = d.ok("x/i8 dram 0x200000 4");
  CHECK(r.lines.at(0) == "dram+0x200000: -1 127 -128 1");
  r = d.ok("x/u8 dram 0x200000 4");
  CHECK(r.lines.at(0) == "dram+0x200000: 255 127 128 1");
  r = d.ok("x/x dram 0x200000 8");
  CHECK(r.lines.at(0) == "dram+0x200000: ff 7f 80 01 78 56 34 12");
  r = d.ok("x dram 0x200000 2");  // default format: hex bytes
  CHECK(r.lines.at(0) == "dram+0x200000: ff 7f");
  r = d.ok("x/i32 dram 0x200000 2");
  CHECK(r.lines.at(0) == "dram+0x200000: " + std::to_string(int32_t(0x01807fff)) + " 305419896");
  r = d.ok("x/x32 dram 0x200000 2");
  CHECK(r.lines.at(0) == "dram+0x200000: 01807fff 12345678");
  CHECK(contains(r.data.dump(), "\"values\":[25198591,305419896]"));
  // 17 bytes: two lines of 16 and 1.
  r = d.ok("x dram 0 17");
  CHECK(r.lines.size() == 2);
  CHECK(r.lines.at(1).rfind("dram+0x000010:", 0) == 0);

  // Scratchpads after the GEMM wrote the accumulators.
  d.ok("continue");
  for (const char* mem : {"acc", "out", "inp", "wgt"}) {
    std::vector<uint8_t> raw(32);
    REQUIRE(emu.read_memory(mem, 0, raw));
    r = d.ok(std::string("x/i32 ") + mem + " 0 8");
    std::string want = std::string(mem) + "+0x000000:";
    for (int i = 0; i < 8; ++i) {
      int32_t v;
      std::memcpy(&v, &raw[i * 4], 4);
      want += " " + std::to_string(v);
    }
    CHECK(r.lines.at(0) == want);
    r = d.ok(std::string("x/i8 ") + mem + " 0 4");
    want = std::string(mem) + "+0x000000:";
    for (int i = 0; i < 4; ++i) want += " " + std::to_string(static_cast<int8_t>(raw[i]));
    CHECK(r.lines.at(0) == want);
  }
  // The accumulators hold something after a GEMM.
  std::vector<uint8_t> acc(256);
  REQUIRE(emu.read_memory("acc", 0, acc));
  CHECK(std::any_of(acc.begin(), acc.end(), [](uint8_t b) { return b != 0; }));
}

TEST_CASE("info stages and where name each engine's command, index and layer",
          "[debugger][print]") {
  Debugger d("gemm_small");
  auto r = d.ok("info stages");
  REQUIRE(r.lines.size() == 4);
  CHECK(r.lines[0].rfind("fetch", 0) == 0);
  CHECK(r.lines[1].rfind("load", 0) == 0);
  CHECK(r.lines[2].rfind("compute", 0) == 0);
  CHECK(r.lines[3].rfind("store", 0) == 0);
  CHECK(contains(r.lines[1], "queue 0/8"));

  d.ok("break cmd gemm");
  d.ok("continue");
  d.ok("step 5");  // let compute pick it up
  r = d.ok("info stages");
  CHECK(contains(r.lines[2], "cmd #3"));
  r = d.ok("where");
  REQUIRE(r.lines.size() == 4);
  CHECK(contains(r.lines[2], "#3 L0 GEMM"));
  CHECK(contains(r.lines[2], "[layer fc]"));
  CHECK(contains(r.data.dump(), "\"cmd_id\":3"));
  CHECK(contains(r.data.dump(), "\"layer\":\"fc\""));

  // conv: the commands of a later layer name that layer.
  Debugger c("conv");
  c.ok("break cmd gemm layer skip");
  c.ok("continue");
  c.ok("step 3");
  r = c.ok("where");
  CHECK(contains(text(r), "[layer skip]"));
}

TEST_CASE("info program, info signals, info checkpoints and help", "[debugger][print]") {
  Debugger d("conv", 5000);
  auto r = d.ok("info program");
  CHECK(contains(text(r), "workload conv"));
  CHECK(contains(text(r), "layer 1: conv2"));
  r = d.ok("info signals load.");
  CHECK(contains(text(r), "load.state"));
  CHECK_FALSE(contains(text(r), "store.state"));
  d.ok("until 12000");
  r = d.ok("info checkpoints");
  CHECK(contains(text(r), "3 checkpoints"));
  CHECK(contains(text(r), "interval 5000"));
  r = d.ok("help");
  for (const char* c : {"continue",
                        "step",
                        "until",
                        "break",
                        "watch",
                        "delete",
                        "print",
                        "x",
                        "counters",
                        "where",
                        "info",
                        "deposit",
                        "force",
                        "release",
                        "checkpoint",
                        "restore",
                        "goto",
                        "reverse-step",
                        "reverse-continue",
                        "wave",
                        "source"})
    CHECK(contains(text(r), std::string("  ") + c + " "));
  r = d.ok("help break");
  CHECK(contains(text(r), "examples:"));
  CHECK(contains(text(r), "break if"));
}
