// The assertion port (issue 13): every assertion of rtl/npu_facts.toml fires when a signal is
// forced or deposited to violate it, and the emulator reports it from the port (code, engine,
// command, values, cycle) with the message rendered from the table. Nothing parses log text.
#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "tests/npu/NpuTestSupport.h"

namespace {

using bud::emu::AssertionReport;
using bud::emu::NpuEmulator;
using bud::emu::RunState;
using bud::emu::SignalValue;
using bud::emu::Stage;
using bud::isa::Opcode;

SignalValue value_of(uint64_t v) {
  SignalValue s;
  s.width = 64;
  s.words[0] = v;
  return s;
}

void deposit(NpuEmulator& emu, const std::string& name, uint32_t element, uint64_t v) {
  const auto id = emu.find_signal(name);
  INFO(name);
  REQUIRE(id);
  REQUIRE(emu.deposit_signal(*id, element, value_of(v)));
}

uint64_t read(const NpuEmulator& emu, const std::string& name, uint32_t element = 0) {
  const auto id = emu.find_signal(name);
  INFO(name);
  REQUIRE(id);
  return emu.read_signal(*id, element).low();
}

/// Steps until the run stops (or `limit`), then returns the assertion the port reports.
AssertionReport stopped_by_assertion(NpuEmulator& emu, uint64_t limit = 200'000) {
  while (emu.state() == RunState::Ready && emu.cycle() < limit) emu.step(limit - emu.cycle());
  INFO("state " << bud::emu::run_state_name(emu.state()) << " at cycle " << emu.cycle());
  REQUIRE(emu.state() == RunState::Assertion);
  const auto a = emu.assertion();
  REQUIRE(a);
  INFO(a->message);
  // The message is rendered from the port and the table: name, cycle, engine, command.
  CHECK(a->message.rfind("NPU ASSERT " + a->name + " at cycle " + std::to_string(a->cycle) +
                             ": by " + bud::emu::stage_name(a->stage),
                         0) == 0);
  CHECK(a->cycle < emu.cycle());
  CHECK(read(emu, "assert_code") == a->code);
  return *a;
}

std::string name_of(uint32_t code) { return std::string(bud::isa::kAssertionNames.at(code)); }

}  // namespace

TEST_CASE("every assertion fires and is reported with its engine and command",
          "[npu][assertions]") {
  const auto& p = bud::test::prepared("gemm_small");
  const auto& cmds = p.program.commands;
  std::set<std::string> fired;

  SECTION("queue_overflow: the queue monitor says the load queue is full") {
    NpuEmulator emu({});
    REQUIRE(emu.load(p.job).empty());
    deposit(emu, "q_mon", 0, 8);  // no command dispatched yet: the queue is really empty
    const auto a = stopped_by_assertion(emu);
    CHECK(a.name == "queue_overflow");
    CHECK(a.stage == Stage::Fetch);
    REQUIRE(a.cmd < cmds.size());
    CHECK(cmds[a.cmd].opcode == Opcode::Load);  // the ring index of the LOAD being dispatched
    CHECK(a.values[0] == 0b001);                // queues st,cmp,ld: the load queue
    fired.insert(a.name);
  }
  SECTION("token_underflow: the monitor's count of L->C tokens is cleared under a token") {
    NpuEmulator emu({});
    REQUIRE(emu.load(p.job).empty());
    while (read(emu, "tokens", 0) == 0 && emu.state() == RunState::Ready) emu.step(1);
    deposit(emu, "tok_mon", 0, 0);
    const auto a = stopped_by_assertion(emu);
    CHECK(a.name == "token_underflow");
    CHECK(a.stage == Stage::Gemm);  // compute pops L->C tokens
    REQUIRE(a.cmd < cmds.size());
    CHECK(cmds[a.cmd].opcode == Opcode::Gemm);
    CHECK(a.values[0] == 0);  // token FIFO 0 (L->C)
    CHECK(a.values[1] >= 1);  // the design's own count still had the token
    fired.insert(a.name);
  }
  SECTION("token_overflow: the monitor's count of L->C tokens is set to full") {
    NpuEmulator emu({});
    REQUIRE(emu.load(p.job).empty());
    // After the doorbell (which clears the token counts), before load pushes its first token.
    while (read(emu, "running") == 0 && emu.state() == RunState::Ready) emu.step(1);
    REQUIRE(read(emu, "tokens", 0) == 0);
    deposit(emu, "tok_mon", 0, 255);
    const auto a = stopped_by_assertion(emu);
    CHECK(a.name == "token_overflow");
    CHECK(a.stage == Stage::Load);  // load pushes L->C tokens
    REQUIRE(a.cmd < cmds.size());
    CHECK(cmds[a.cmd].opcode == Opcode::Load);
    CHECK(cmds[a.cmd].push_next);
    CHECK(a.values[0] == 0);
    fired.insert(a.name);
  }
  SECTION("illegal_command: opcode 7 in the ring") {
    auto job = p.job;
    job.commands[2][0] = (job.commands[2][0] & ~uint64_t{0xF}) | 7;
    NpuEmulator emu({});
    REQUIRE(emu.load(job).empty());
    const auto a = stopped_by_assertion(emu);
    CHECK(a.name == "illegal_command");
    CHECK(a.stage == Stage::Fetch);
    CHECK(a.cmd == 2);  // ring index
    CHECK(a.values[0] == 7);
    CHECK(a.message.find("ring index 2; opcode = 7") != std::string::npos);
    fired.insert(a.name);
  }
  SECTION("unknown_tag: a DRAM response delivered twice") {
    NpuEmulator emu({});
    REQUIRE(emu.load(p.job).empty());
    std::string e;
    const auto f = bud::emu::parse_fault("dram-dup@200", e);
    REQUIRE(f);
    REQUIRE(emu.add_fault(*f).empty());
    const auto a = stopped_by_assertion(emu);
    CHECK(a.name == "unknown_tag");
    CHECK(a.stage == Stage::Load);
    REQUIRE(a.cmd < cmds.size());
    CHECK(cmds[a.cmd].opcode == Opcode::Load);  // the command load held
    CHECK((a.values[0] >> 3) == 1);             // tag[4:3]: the load source
    fired.insert(a.name);
  }
  SECTION("spad_range: a LOAD that runs past the end of its scratchpad") {
    size_t i = 0;
    while (cmds[i].opcode != Opcode::Load) ++i;
    auto bad = cmds[i];
    bad.sram_base =
        static_cast<uint16_t>(bud::isa::kBuffers[static_cast<int>(bad.buffer)].entries - 1);
    auto job = p.job;
    job.commands[i] = bad.encode();
    REQUIRE(bad.y_size * bad.x_size > 1);
    NpuEmulator emu({});
    REQUIRE(emu.load(job).empty());
    const auto a = stopped_by_assertion(emu);
    CHECK(a.name == "spad_range");
    CHECK(a.stage == Stage::Load);
    CHECK(a.cmd == cmds[i].cmd_id);
    CHECK(a.values[0] == (0b1000u >> static_cast<int>(bad.buffer)));  // inp,wgt,acc,out bits
    fired.insert(a.name);
  }
  // Each section ran one assertion; together they cover the table (checked by name).
  for (const auto& n : fired) {
    bool known = false;
    for (const auto& f : bud::isa::kAssertions) known = known || f.name == n;
    CHECK(known);
  }
}

TEST_CASE("the assertion table and the tests cover the same assertions", "[npu][assertions]") {
  // The sections above name these; a new assertion in rtl/npu_facts.toml needs a section.
  const std::set<std::string> tested = {"queue_overflow",  "token_underflow", "token_overflow",
                                        "illegal_command", "unknown_tag",     "spad_range"};
  std::set<std::string> table;
  for (const auto& f : bud::isa::kAssertions) {
    table.insert(std::string(f.name));
    CHECK(name_of(f.code) == f.name);
  }
  CHECK(table == tested);
}
