// design/FirmwareScript (the format and its FILE:LINE:COL errors) and design/FirmwareRunner
// (AXI4-Lite accesses against a small register-file slave: writes, expected reads, polls and
// their timeouts, wait_irq, save/restore).
#include <catch2/catch.hpp>

#include <map>

#include "design/FirmwareRunner.h"

using namespace bud::design;

namespace {

FirmwareContext context() {
  FirmwareContext c;
  c.regions["ddr"] = 0x80000000;
  c.addr_bits = 12;
  c.data_bits = 32;
  c.has_interrupt = true;
  return c;
}

std::string parse_error(const std::string& text, FirmwareContext c = context()) {
  DesignError e;
  const auto s = parse_firmware_script(text, "fw.txt", c, e);
  return s ? "" : e.to_string();
}

FirmwareScript parse(const std::string& text) {
  DesignError e;
  auto s = parse_firmware_script(text, "fw.txt", context(), e);
  INFO(e.to_string());
  REQUIRE(s);
  return *s;
}

// A register file on AXI4-Lite: AW and W accepted together, answers one cycle later; register
// 0x04 becomes `later` after `after` cycles; irq rises at cycle `irq_at`.
struct Slave {
  std::map<uint64_t, uint64_t> regs;
  bool bvalid = false, rvalid = false;
  uint64_t rdata = 0, cycle = 0, after = ~0ull, later = 0, irq_at = ~0ull;
  AxiLiteSlavePins pins() const {
    AxiLiteSlavePins p;
    p.awready = p.wready = !bvalid;
    p.arready = !rvalid;
    p.bvalid = bvalid;
    p.rvalid = rvalid;
    p.rdata = rdata;
    p.irq = cycle >= irq_at;
    return p;
  }
  void edge(const AxiLiteMasterDrive& d, const AxiLiteSlavePins& p) {
    if (d.bready && bvalid) bvalid = false;
    if (d.rready && rvalid) rvalid = false;
    if (d.awvalid && d.wvalid && p.awready) regs[d.awaddr] = d.wdata, bvalid = true;
    if (d.arvalid && p.arready) rvalid = true, rdata = regs[d.araddr];
    if (++cycle == after) regs[0x04] = later;
  }
};

uint64_t run(FirmwareRunner& fw, Slave& s, uint64_t limit = 1'000'000) {
  uint64_t c = 0;
  while (!fw.finished() && c < limit) {
    const AxiLiteMasterDrive d = fw.drive();
    const AxiLiteSlavePins p = s.pins();
    fw.sample(p);
    s.edge(d, p);
    fw.tick();
    ++c;
  }
  return c;
}

}  // namespace

TEST_CASE("FirmwareScript: the commands, numbers and @memory addresses", "[design][firmware]") {
  const FirmwareScript s = parse(
      "# set up\n"
      "write 0x08 @ddr+0x100   # SRC\n"
      "\n"
      "write 0x10 1_024\n"
      "read 0x04 expect 0x1 mask 0x3\n"
      "read 0x20\n"
      "poll 0x04 0x1 0x1 timeout 500\n"
      "wait_irq timeout 1000\n"
      "wait 7\n");
  REQUIRE(s.steps.size() == 7);
  CHECK(s.steps[0].op == FirmwareOp::Write);
  CHECK(s.steps[0].value == 0x80000100);
  CHECK(s.steps[0].line == 2);
  CHECK(s.steps[1].value == 1024);
  CHECK((s.steps[2].expect && s.steps[2].value == 1 && s.steps[2].mask == 3));
  CHECK_FALSE(s.steps[3].expect);
  CHECK((s.steps[4].op == FirmwareOp::Poll && s.steps[4].mask == 1 && s.steps[4].cycles == 500));
  CHECK((s.steps[5].op == FirmwareOp::WaitIrq && s.steps[5].cycles == 1000));
  CHECK((s.steps[6].op == FirmwareOp::Wait && s.steps[6].cycles == 7 && s.steps[6].line == 9));
}

TEST_CASE("FirmwareScript: errors name FILE:LINE:COL and the token", "[design][firmware]") {
  CHECK(parse_error("write 0 1\n  wrte 0x04 1\n") ==
        "fw.txt:2:3: unknown command 'wrte' (commands: write, read, poll, wait_irq, wait)");
  CHECK(parse_error("write 0x04 0xZZ\n") ==
        "fw.txt:1:12: VALUE '0xZZ' is not a number (decimal, 0x hex or @memory+offset)");
  CHECK(parse_error("write 0x04\n") == "fw.txt:1:11: write needs VALUE here");
  CHECK(parse_error("write 0x1000 1\n") == "fw.txt:1:7: ADDR '0x1000' does not fit 12 bits");
  CHECK(parse_error("write 0x08 @dram+4\n") ==
        "fw.txt:1:12: '@dram+4': no [[memory]] named 'dram' (memories: ddr)");
  CHECK(parse_error("poll 0x04 1 1 within 5\n") == "fw.txt:1:15: expected 'timeout', got 'within'");
  CHECK(parse_error("read 0x04 expect 1 mask 1 now\n") ==
        "fw.txt:1:27: unexpected 'now' after the read command");
  FirmwareContext no_irq = context();
  no_irq.has_interrupt = false;
  CHECK(parse_error("\n\nwait_irq timeout 5\n", no_irq) ==
        "fw.txt:3:1: wait_irq needs an interrupt: [control] has no 'interrupt' signal");
}

TEST_CASE("FirmwareRunner: writes, reads with expect, polls and wait_irq", "[design][firmware]") {
  FirmwareRunner fw(parse("write 0x08 0x1234\nread 0x08 expect 0x1234\npoll 0x04 0x1 0x1 timeout 500\n"
                          "wait_irq timeout 1000\nwait 10\n"),
                    32);
  Slave s;
  s.after = 100;
  s.later = 0x3;
  s.irq_at = 300;
  const uint64_t cycles = run(fw, s);
  CHECK(fw.status() == FirmwareRunner::Status::Done);
  CHECK(s.regs[0x08] == 0x1234);
  CHECK(cycles >= 310);
  CHECK(cycles < 330);
  CHECK(fw.current_line() == 0);
  CHECK(fw.accesses() >= 4);
}

TEST_CASE("FirmwareRunner: a poll that times out names the line, the cycles and the last read",
          "[design][firmware]") {
  FirmwareRunner fw(parse("write 0x04 0x2\n# wait for done\npoll 0x04 0x1 0x1 timeout 50\n"), 32);
  Slave s;
  run(fw, s);
  REQUIRE(fw.status() == FirmwareRunner::Status::Timeout);
  CHECK(fw.current_line() == 3);
  const std::string m = fw.message();
  CHECK(m.rfind("fw.txt:3: poll 0x4 & 0x1 == 0x1 timed out after 5", 0) == 0);
  CHECK(m.find(" cycles (last read 0x2)") != std::string::npos);
}

TEST_CASE("FirmwareRunner: an expect mismatch and a wait_irq timeout", "[design][firmware]") {
  FirmwareRunner fw(parse("write 0x04 0x6\nread 0x04 expect 0x1 mask 0x3\n"), 32);
  Slave s;
  run(fw, s);
  REQUIRE(fw.status() == FirmwareRunner::Status::Mismatch);
  CHECK(std::string(fw.message()) == "fw.txt:2: read 0x4 expected 0x1 (mask 0x3), got 0x6");

  FirmwareRunner irq(parse("wait_irq timeout 40\n"), 32);
  Slave quiet;
  CHECK(run(irq, quiet) == 41);
  REQUIRE(irq.status() == FirmwareRunner::Status::Timeout);
  CHECK(std::string(irq.message()) == "fw.txt:1: wait_irq timed out after 40 cycles");
}

TEST_CASE("FirmwareRunner: save and restore resume mid-script", "[design][firmware]") {
  const FirmwareScript script = parse("write 0x08 1\nwait 20\npoll 0x04 0x1 0x1 timeout 500\nread 0x08 expect 1\n");
  FirmwareRunner fw(script, 32);
  Slave s;
  s.after = 60;
  s.later = 1;
  run(fw, s, 12);  // in the wait
  CHECK(fw.current_line() == 2);
  std::vector<uint8_t> state;
  fw.save(state);
  FirmwareRunner copy(script, 32);
  size_t off = 0;
  std::string error;
  REQUIRE(copy.restore(state, off, error));
  CHECK(copy.current_line() == 2);
  CHECK(copy.step_cycles() == fw.step_cycles());
  Slave s2 = s;
  CHECK(run(fw, s) == run(copy, s2));
  CHECK(copy.status() == FirmwareRunner::Status::Done);
  FirmwareRunner other(parse("wait 1\n"), 32);
  off = 0;
  CHECK_FALSE(other.restore(state, off, error));
  CHECK(error.find("another script") != std::string::npos);
}
