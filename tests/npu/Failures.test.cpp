// Failures must be detected and reported with enough to act on: an illegal command, a dependency
// deadlock, a wrong GEMM operand and a DRAM access out of range, each built by hand or by
// mutating a lowered program.
#include <catch2/catch.hpp>
#include <regex>
#include <string>
#include <vector>

#include "tests/npu/NpuTestSupport.h"

namespace {

using bud::emu::HostJob;
using bud::emu::NpuConfig;
using bud::emu::NpuEmulator;
using bud::emu::RunState;
using bud::isa::Command;
using bud::isa::Opcode;

Command make(Opcode op, uint32_t id) {
  Command c;
  c.opcode = op;
  c.raw_opcode = static_cast<uint8_t>(op);
  c.cmd_id = id;
  return c;
}

HostJob job_of(const std::vector<Command>& cmds) {
  HostJob job;
  job.ring_base = 0;
  job.ring_entries = 64;
  for (const auto& c : cmds) job.commands.push_back(c.encode());
  return job;
}

/// Runs `job` until it stops (or `limit` cycles) and returns the last step result.
bud::emu::StepResult run(NpuEmulator& emu, const HostJob& job, uint64_t limit = 1'000'000) {
  const auto e = emu.load(job);
  INFO(e);
  REQUIRE(e.empty());
  bud::emu::StepResult r;
  while (emu.state() == RunState::Ready && emu.cycle() < limit) r = emu.step(limit);
  return r;
}

/// A copy of a prepared run with command `index` replaced by `cmd` in the job (the golden
/// digests and reference stay those of the correct program).
bud::run::PreparedRun mutated(const bud::run::PreparedRun& p, size_t index, const Command& cmd) {
  bud::run::PreparedRun m = p;
  m.job.commands[index] = cmd.encode();
  return m;
}

size_t first_of(const bud::workload::Program& p, Opcode op) {
  for (size_t i = 0; i < p.commands.size(); ++i)
    if (p.commands[i].opcode == op) return i;
  FAIL("no " << static_cast<int>(op) << " command");
  return 0;
}

}  // namespace

TEST_CASE("an illegal opcode stops the run with the cycle in the message", "[npu][failures]") {
  for (uint8_t bad : {uint8_t{0}, uint8_t{7}, uint8_t{15}}) {
    DYNAMIC_SECTION("opcode " << int(bad)) {
      auto end = make(Opcode::End, 1);
      auto illegal = make(Opcode::Sync, 0);
      auto words = illegal.encode();
      words[0] = (words[0] & ~uint64_t{0xF}) | bad;
      HostJob job = job_of({illegal, end});
      job.commands[0] = words;
      NpuEmulator emu({});
      const auto r = run(emu, job);
      INFO(r.message);
      CHECK((r.state == RunState::Error || r.state == RunState::Assertion));
      CHECK(emu.state() == r.state);
      // An assertion names the cycle whose edge it fired at (emulator cycle - 1, the numbering
      // of StageTxn::cycle); an error the host saw names the current cycle.
      const bool names_cycle =
          r.message.find("cycle " + std::to_string(emu.cycle() - 1)) != std::string::npos ||
          r.message.find("cycle " + std::to_string(emu.cycle())) != std::string::npos;
      CHECK(names_cycle);
      CHECK(emu.cycle() < 5000);  // detected promptly, not by the watchdog
    }
  }
}

TEST_CASE("a token bit naming a missing neighbour is an illegal command", "[npu][failures]") {
  auto load = make(Opcode::Load, 0);
  load.pop_prev = true;  // load has no previous engine
  load.y_size = 1;
  load.x_size = 1;
  load.dram_addr = 0x8000;
  NpuEmulator emu({});
  const auto r = run(emu, job_of({load, make(Opcode::End, 1)}));
  INFO(r.message);
  CHECK((r.state == RunState::Error || r.state == RunState::Assertion));
  CHECK(r.message.find("cycle") != std::string::npos);
}

TEST_CASE("a dependency deadlock is reported as a hang with every engine's state",
          "[npu][failures]") {
  // GEMM waits for a token from LOAD, which never comes.
  auto gemm = make(Opcode::Gemm, 0);
  gemm.pop_prev = true;
  gemm.m = 1;
  gemm.k = 8;
  gemm.n = 8;
  gemm.reset = true;
  const HostJob job = job_of({gemm, make(Opcode::End, 1)});

  // The golden model sees the same deadlock statically.
  bud::golden::GoldenNpu golden;
  const auto g = golden.run(job.commands);
  CHECK_FALSE(g.ok);
  CHECK(g.error.find("#0") != std::string::npos);

  NpuConfig c;
  c.hang_cycles = 2000;
  SECTION("through the emulator") {
    NpuEmulator emu(c);
    const auto r = run(emu, job);
    INFO(r.message);
    REQUIRE(r.state == RunState::Hang);
    CHECK(emu.cycle() > c.hang_cycles);
    CHECK(emu.cycle() < 3 * c.hang_cycles);
    CHECK(r.message.find("watchdog") != std::string::npos);
    CHECK(r.message.find("cycle " + std::to_string(emu.cycle())) != std::string::npos);
    // engine_report: one line per engine, the compute engine on command #0, no L->C token.
    const std::string report = emu.engine_report();
    CHECK(r.message.find(report) != std::string::npos);
    for (const char* e : {"fetch:", "load:", "compute:", "store:", "tokens:"})
      CHECK(report.find(e) != std::string::npos);
    CHECK(report.find("L->C=0") != std::string::npos);
    CHECK(report.find("?") == std::string::npos);  // every signal it names exists
  }
  SECTION("through run::finish") {
    const auto& p = bud::test::prepared("gemm_small");
    bud::run::PreparedRun m = p;
    m.job = job;
    NpuEmulator emu(c);
    REQUIRE(emu.load(job).empty());
    const auto r = bud::run::finish(m, bud::test::options_for("gemm_small", std::nullopt, c), emu);
    INFO(bud::test::failures_text(r));
    CHECK(r.state == RunState::Hang);
    CHECK_FALSE(r.passed);
    REQUIRE(r.failures.size() == 1);
    CHECK(r.failures[0].rfind("hang: ", 0) == 0);
    CHECK(r.message.find("compute:") != std::string::npos);
    CHECK(r.message.find("detected at cycle " + std::to_string(r.cycles)) != std::string::npos);
  }
}

TEST_CASE("a corrupted GEMM weight address is localised to the gemm stage and the outputs",
          "[npu][failures]") {
  const auto& p = bud::test::prepared("gemm_small");
  const size_t gi = first_of(p.program, Opcode::Gemm);
  Command bad = p.program.commands[gi];
  bad.wgt_base = static_cast<uint16_t>(bad.wgt_base + 1);
  const auto m = mutated(p, gi, bad);
  const auto r = bud::run::execute(m, bud::test::options_for("gemm_small"));
  INFO(bud::test::failures_text(r));
  CHECK(r.state == RunState::Finished);
  CHECK_FALSE(r.passed);
  bool gemm = false, load = false, tensor = false;
  const std::regex mismatch(R"(tensor fc index \[[0-9, ]+\] expected -?\d+ actual -?\d+)");
  for (const auto& f : r.failures) {
    gemm = gemm || f.rfind("stage gemm:", 0) == 0;
    load = load || f.rfind("stage load:", 0) == 0;
    tensor = tensor || std::regex_search(f, mismatch);
  }
  CHECK(gemm);
  CHECK_FALSE(load);  // the loads were right: the failure is localised after them
  CHECK(tensor);
  CHECK(r.rtl_digests[static_cast<int>(bud::emu::Stage::Load)] ==
        r.golden_digests[static_cast<int>(bud::emu::Stage::Load)]);
}

TEST_CASE("a LOAD beyond the end of DRAM is reported by the memory model", "[npu][failures]") {
  const auto& p = bud::test::prepared("gemm_small");
  const size_t li = first_of(p.program, Opcode::Load);
  Command bad = p.program.commands[li];
  bad.dram_addr = 0xFFFF0000u;  // 16 MiB of DRAM
  const auto m = mutated(p, li, bad);
  {
    // Destroyed before run::execute makes its own emulator (see EmulatorLifetime.test.cpp).
    NpuEmulator emu({});
    const auto r = run(emu, m.job);
    INFO(r.message);
    CHECK(r.state == RunState::Error);
    CHECK(r.message.find("memory model") != std::string::npos);
    CHECK(r.message.find("out-of-range") != std::string::npos);
    CHECK(r.message.find("0xffff0000") != std::string::npos);
    REQUIRE(emu.dram().error());
    CHECK(emu.dram().error()->kind == bud::emu::DramErrorKind::OutOfRange);
    CHECK(emu.dram().error()->addr == 0xFFFF0000u);
  }

  const auto rep = bud::run::execute(m, bud::test::options_for("gemm_small"));
  CHECK_FALSE(rep.passed);
  REQUIRE(rep.failures.size() == 1);
  CHECK(rep.failures[0].find("memory model") != std::string::npos);
  CHECK(rep.failures[0].find("out-of-range") != std::string::npos);
}
