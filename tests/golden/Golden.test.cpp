#include <catch2/catch.hpp>
#include <cstring>
#include <map>

#include "emu/golden/Checker.h"
#include "emu/golden/GoldenNpu.h"
#include "emu/workload/Builtins.h"
#include "tests/workload/EdgeWorkloads.h"

using namespace bud;
using bud::emu::Stage;
using bud::emu::StageTxn;
using bud::isa::Buffer;
using bud::isa::Command;
using bud::isa::Opcode;

namespace {

struct Outcome {
  golden::RunResult run;
  golden::CheckReport check;
  workload::ReferenceResult ref;
};

Outcome run_and_check(const workload::Workload& w) {
  const workload::Result<workload::Program> p = workload::lower(w);
  REQUIRE(p.ok());
  golden::GoldenNpu npu(w.dram_bytes);
  Outcome o;
  o.run = golden::run_program(npu, *p);
  o.ref = workload::run_reference(w);
  o.check = golden::check_outputs(*p, o.ref, npu.dram());
  return o;
}

Command cmd(Opcode op, uint32_t id) {
  Command c;
  c.opcode = op;
  c.cmd_id = id;
  return c;
}

}  // namespace

TEST_CASE("golden model matches the direct reference on every built-in and seed",
          "[golden][builtins]") {
  for (const auto& b : workload::list_builtins())
    for (uint64_t seed : {0ull, 1ull, 77ull, 123456789ull}) {
      INFO(b.name << " seed " << seed);
      const workload::Result<workload::Workload> w = workload::load_builtin(b.name, {seed, {}});
      REQUIRE(w.ok());
      const Outcome o = run_and_check(*w);
      INFO(o.run.error);
      REQUIRE(o.run.ok);
      CHECK(o.run.end_code == 0);
      CHECK(o.run.tokens_left == std::array<uint32_t, 4>{});
      INFO(o.check.summary());
      CHECK(o.check.ok());
      CHECK(o.check.compared > 0);
      CHECK(o.run.saturations == o.ref.saturations);
    }
}

TEST_CASE("golden model matches the reference on lowering edge cases", "[golden][edge]") {
  for (const auto& [name, text] : test::edge_workloads())
    for (uint64_t seed : {3ull, 4ull}) {
      INFO(name << " seed " << seed);
      const workload::Result<workload::Workload> w = workload::parse_workload(text, name, {seed, {}});
      REQUIRE(w.ok());
      const Outcome o = run_and_check(*w);
      INFO(o.run.error);
      REQUIRE(o.run.ok);
      CHECK(o.run.tokens_left == std::array<uint32_t, 4>{});
      INFO(o.check.summary());
      CHECK(o.check.ok());
    }
}

TEST_CASE("stage transactions have exactly the RTL's granularity", "[golden][txn]") {
  for (const char* name : {"conv", "mlp", "mem_bound"}) {
    INFO(name);
    const workload::Workload w = workload::load_builtin(name).value();
    const workload::Program p = workload::lower(w).value();
    golden::GoldenNpu npu(w.dram_bytes);
    std::map<uint32_t, std::array<uint64_t, 5>> seen;  // per cmd_id, per stage
    std::array<uint64_t, 5> total{};
    npu.set_observer([&](const StageTxn& t) {
      ++seen[t.cmd_id][static_cast<size_t>(t.stage)];
      ++total[static_cast<size_t>(t.stage)];
      // Bytes beyond size are zero.
      for (size_t i = t.size; i < t.data.size(); ++i) REQUIRE(t.data[i] == 0);
      if (t.stage == Stage::Store) {
        REQUIRE(t.size >= 8);
        REQUIRE(t.size <= 64);
        REQUIRE(t.addr % 8 == 0);
      }
    });
    const golden::RunResult r = golden::run_program(npu, p);
    REQUIRE(r.ok);
    CHECK(r.gemm_iterations == p.gemm_iterations);
    CHECK(r.macs_useful == p.useful_macs);
    for (const Command& c : p.commands) {
      INFO(c.to_string());
      std::array<uint64_t, 5> want{};
      want[0] = 1;
      const uint64_t entries = uint64_t{c.y_size} * c.x_size;
      switch (c.opcode) {
        case Opcode::Load:
          want[1] = entries;
          break;
        case Opcode::Gemm:
          want[2] = uint64_t{c.m} * ((c.n + 7u) / 8u);
          break;
        case Opcode::Post:
          want[3] = c.count;
          break;
        case Opcode::Store:
          want[4] = c.y_size * uint64_t{(c.x_size + 7u) / 8u};
          break;
        default:
          break;
      }
      CHECK(seen[c.cmd_id] == want);
    }
    const auto& d = npu.digests();
    for (int s = 0; s < emu::kNumStages; ++s)
      CHECK(d[static_cast<size_t>(s)].count == total[static_cast<size_t>(s)]);
    CHECK(total[0] == p.commands.size());
  }
}

TEST_CASE("fetch transactions carry the 32 encoded command bytes", "[golden][txn]") {
  golden::GoldenNpu npu(1 << 20);
  std::vector<StageTxn> fetched;
  npu.set_observer([&](const StageTxn& t) {
    if (t.stage == Stage::Fetch) fetched.push_back(t);
  });
  Command e = cmd(Opcode::End, 1);
  e.end_code = 42;
  const golden::RunResult r = npu.run({cmd(Opcode::Sync, 0), e});
  REQUIRE(r.ok);
  CHECK(r.end_code == 42);
  REQUIRE(fetched.size() == 2);
  CHECK(fetched[1].size == 32);
  CHECK(fetched[1].addr == 0);
  CHECK(fetched[1].cmd_id == 1);
  const auto words = e.encode();
  for (int i = 0; i < 32; ++i)
    CHECK(fetched[1].data[static_cast<size_t>(i)] ==
          static_cast<uint8_t>(words[static_cast<size_t>(i / 8)] >> (8 * (i % 8))));
}

TEST_CASE("digests are equal for equal runs and differ when data differs", "[golden][txn]") {
  const workload::Workload w = workload::load_builtin("mlp").value();
  const workload::Program p = workload::lower(w).value();
  golden::GoldenNpu a(w.dram_bytes), b(w.dram_bytes);
  REQUIRE(golden::run_program(a, p).ok);
  REQUIRE(golden::run_program(b, p).ok);
  CHECK(a.digests() == b.digests());
  workload::Program q = p;
  q.dram_init[0].bytes[0] ^= 1;  // one input byte
  golden::GoldenNpu c(w.dram_bytes);
  REQUIRE(golden::run_program(c, q).ok);
  CHECK(c.digests()[static_cast<size_t>(Stage::Fetch)] ==
        a.digests()[static_cast<size_t>(Stage::Fetch)]);
  CHECK(c.digests()[static_cast<size_t>(Stage::Load)] !=
        a.digests()[static_cast<size_t>(Stage::Load)]);
  CHECK(c.digests()[static_cast<size_t>(Stage::Gemm)] !=
        a.digests()[static_cast<size_t>(Stage::Gemm)]);
}

TEST_CASE("illegal and out-of-range commands are errors naming the command", "[golden][errors]") {
  golden::GoldenNpu npu(1 << 20);
  SECTION("illegal opcode") {
    std::vector<std::array<uint64_t, 4>> words = {cmd(Opcode::Sync, 0).encode(),
                                                  {7 | (1ull << 32), 0, 0, 0}};
    const golden::RunResult r = npu.run(words);
    CHECK_FALSE(r.ok);
    CHECK(r.error == "command #1 ILLEGAL(7): illegal opcode 7");
    CHECK(r.executed == 1);
  }
  SECTION("opcode 0") {
    std::vector<std::array<uint64_t, 4>> words = {{0, 0, 0, 0}};
    CHECK(npu.run(words).error == "command #0 ILLEGAL(0): illegal opcode 0");
  }
  SECTION("token bit naming a missing neighbour") {
    Command l = cmd(Opcode::Load, 0);
    l.pop_prev = true;
    CHECK(npu.run({l}).error == "command #0 LOAD: illegal token bit: LOAD has no previous engine");
    Command s = cmd(Opcode::Store, 0);
    s.buffer = Buffer::Out;
    s.push_next = true;
    CHECK(npu.run({s}).error == "command #0 STORE: illegal token bit: STORE has no next engine");
    Command y = cmd(Opcode::Sync, 0);
    y.push_next = true;
    CHECK(npu.run({y}).error == "command #0 SYNC: illegal token bit: SYNC goes to no engine");
  }
  SECTION("pop without a token is a deadlock") {
    Command g = cmd(Opcode::Gemm, 0);
    g.pop_prev = true;
    CHECK(npu.run({g, cmd(Opcode::End, 1)}).error ==
          "command #0 GEMM: deadlock: pop_prev with no token in the L->C FIFO (nothing pushed "
          "earlier in program order)");
    Command l = cmd(Opcode::Load, 0);
    l.push_next = true;
    Command g2 = cmd(Opcode::Gemm, 1);
    g2.pop_prev = true;
    Command g3 = cmd(Opcode::Gemm, 2);
    g3.pop_prev = true;
    CHECK(npu.run({l, g2, g3}).error ==
          "command #2 GEMM: deadlock: pop_prev with no token in the L->C FIFO (nothing pushed "
          "earlier in program order)");
  }
  SECTION("token overflow") {
    std::vector<Command> v;
    for (uint32_t i = 0; i < 256; ++i) {
      Command l = cmd(Opcode::Load, i);
      l.push_next = true;
      v.push_back(l);
    }
    CHECK(npu.run(v).error ==
          "command #255 LOAD: token overflow: push_next into a full (255) L->C FIFO");
  }
  SECTION("LOAD into OUT") {
    Command l = cmd(Opcode::Load, 0);
    l.buffer = Buffer::Out;
    l.y_size = 1;
    l.x_size = 1;
    CHECK(npu.run({l}).error == "command #0 LOAD: LOAD cannot write the OUT scratchpad (buffer 3)");
  }
  SECTION("scratchpad range") {
    Command l = cmd(Opcode::Load, 0);
    l.buffer = Buffer::Wgt;
    l.sram_base = 500;
    l.y_size = 1;
    l.x_size = 13;
    CHECK(npu.run({l}).error == "command #0 LOAD: scratchpad wgt range [500, 513) exceeds 512");
    Command g = cmd(Opcode::Gemm, 0);
    g.acc_base = 2040;
    g.m = 2;
    g.k = 8;
    g.n = 40;
    CHECK(npu.run({g}).error == "command #0 GEMM: scratchpad acc range [2040, 2050) exceeds 2048");
    Command p = cmd(Opcode::Post, 0);
    p.out_base = 2048;
    p.count = 1;
    CHECK(npu.run({p}).error == "command #0 POST: scratchpad out range [2048, 2049) exceeds 2048");
  }
  SECTION("DRAM range and alignment") {
    Command s = cmd(Opcode::Store, 3);
    s.buffer = Buffer::Out;
    s.dram_addr = (1 << 20) - 16;
    s.y_size = 1;
    s.x_size = 3;
    std::vector<Command> v = {cmd(Opcode::Sync, 0), cmd(Opcode::Sync, 1), cmd(Opcode::Sync, 2), s};
    CHECK(npu.run(v).error == "command #3 STORE: DRAM range [1048560, 1048584) exceeds 1048576");
    Command l = cmd(Opcode::Load, 0);
    l.dram_addr = 4;
    l.y_size = 1;
    l.x_size = 1;
    CHECK(npu.run({l}).error == "command #0 LOAD: DRAM address or stride not 8-byte aligned");
  }
  SECTION("missing END") {
    CHECK(npu.run({cmd(Opcode::Sync, 0)}).error == "program ended after 1 commands without END");
  }
  SECTION("cmd_id differing from the index is named") {
    std::vector<std::array<uint64_t, 4>> words = {{9 | (5ull << 32), 0, 0, 0}};
    CHECK(npu.run(words).error == "command #0 ILLEGAL(9) (cmd_id 5): illegal opcode 9");
  }
}

TEST_CASE("GEMM semantics: reset, accumulate, partial K and N", "[golden][gemm]") {
  golden::GoldenNpu npu(1 << 20);
  // INP row: 1..8; WGT block: W[k=i][n=o] = (o == i) ? 2 : 0 -> acc lane o = 2 * (o + 1).
  std::vector<uint8_t> inp(8), wgt(64, 0);
  for (int i = 0; i < 8; ++i) inp[static_cast<size_t>(i)] = static_cast<uint8_t>(i + 1);
  for (int i = 0; i < 8; ++i) wgt[static_cast<size_t>(i * 8 + i)] = 2;
  REQUIRE(npu.write_dram(0x100, inp));
  REQUIRE(npu.write_dram(0x200, wgt));
  Command li = cmd(Opcode::Load, 0);
  li.dram_addr = 0x100;
  li.y_size = 1;
  li.x_size = 1;
  Command lw = cmd(Opcode::Load, 1);
  lw.buffer = Buffer::Wgt;
  lw.dram_addr = 0x200;
  lw.y_size = 1;
  lw.x_size = 1;
  Command g = cmd(Opcode::Gemm, 2);
  g.reset = true;
  g.m = 1;
  g.k = 3;  // Kb = 1: the whole block is still used (K only affects useful MACs)
  g.n = 5;
  Command g2 = g;
  g2.cmd_id = 3;
  g2.reset = false;
  const golden::RunResult r = npu.run({li, lw, g, g2, cmd(Opcode::End, 4)});
  REQUIRE(r.ok);
  const auto acc = npu.scratchpad(Buffer::Acc);
  for (int o = 0; o < 8; ++o) {
    int32_t v = 0;
    std::memcpy(&v, &acc[static_cast<size_t>(o * 4)], 4);
    CHECK(v == 4 * (o + 1));
  }
  CHECK(r.gemm_iterations == 2);
  CHECK(r.macs_useful == 2 * 3 * 5);
}
