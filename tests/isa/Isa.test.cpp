#include "emu/isa/Isa.h"

#include <catch2/catch.hpp>

// Rng.h uses unsigned __int128 (a GCC/Clang extension that -Wpedantic flags).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#include "emu/core/Rng.h"
#pragma GCC diagnostic pop

using namespace bud::isa;

namespace {

Command random_command(bud::emu::Rng& rng, Opcode op) {
  Command c;
  c.opcode = op;
  c.raw_opcode = static_cast<uint8_t>(op);
  c.pop_prev = rng.chance(1, 2);
  c.pop_next = rng.chance(1, 2);
  c.push_prev = rng.chance(1, 2);
  c.push_next = rng.chance(1, 2);
  c.layer = static_cast<uint16_t>(rng.next());
  c.cmd_id = static_cast<uint32_t>(rng.next());
  switch (op) {
    case Opcode::Load:
    case Opcode::Store:
      c.dram_addr = static_cast<uint32_t>(rng.next());
      c.sram_base = static_cast<uint16_t>(rng.next());
      c.buffer = static_cast<Buffer>(rng.below(4));
      c.y_size = static_cast<uint16_t>(rng.next());
      c.x_size = static_cast<uint16_t>(rng.next());
      c.x_stride = static_cast<uint32_t>(rng.next());
      break;
    case Opcode::Gemm:
      c.inp_base = static_cast<uint16_t>(rng.next());
      c.wgt_base = static_cast<uint16_t>(rng.next());
      c.acc_base = static_cast<uint16_t>(rng.next());
      c.reset = rng.chance(1, 2);
      c.m = static_cast<uint16_t>(rng.next());
      c.k = static_cast<uint16_t>(rng.next());
      c.n = static_cast<uint16_t>(rng.next());
      break;
    case Opcode::Post:
      c.acc_base = static_cast<uint16_t>(rng.next());
      c.out_base = static_cast<uint16_t>(rng.next());
      c.count = static_cast<uint16_t>(rng.next());
      c.mult = static_cast<int16_t>(rng.next());
      c.shift = static_cast<uint8_t>(rng.below(32));
      c.clamp_lo = static_cast<int8_t>(rng.next());
      c.clamp_hi = static_cast<int8_t>(rng.next());
      c.src_fp32 = rng.chance(1, 2);
      c.dst_bf16 = rng.chance(1, 2);
      c.relu = rng.chance(1, 2);
      c.per_channel = rng.chance(1, 2);
      c.scale_base = static_cast<uint16_t>(rng.next());
      c.period = static_cast<uint16_t>(rng.next());
      break;
    case Opcode::End:
      c.end_code = static_cast<uint32_t>(rng.next());
      break;
    case Opcode::Sync:
      break;
  }
  return c;
}

bool same_fields(const Command& a, const Command& b) {
  return a.opcode == b.opcode && a.raw_opcode == b.raw_opcode && a.pop_prev == b.pop_prev &&
         a.pop_next == b.pop_next && a.push_prev == b.push_prev && a.push_next == b.push_next &&
         a.layer == b.layer && a.cmd_id == b.cmd_id && a.dram_addr == b.dram_addr &&
         a.sram_base == b.sram_base && a.buffer == b.buffer && a.y_size == b.y_size &&
         a.x_size == b.x_size && a.x_stride == b.x_stride && a.inp_base == b.inp_base &&
         a.wgt_base == b.wgt_base && a.acc_base == b.acc_base && a.reset == b.reset && a.m == b.m &&
         a.k == b.k && a.n == b.n && a.out_base == b.out_base && a.count == b.count &&
         a.mult == b.mult && a.shift == b.shift && a.clamp_lo == b.clamp_lo &&
         a.clamp_hi == b.clamp_hi && a.end_code == b.end_code && a.bf16 == b.bf16 &&
         a.src_fp32 == b.src_fp32 && a.dst_bf16 == b.dst_bf16 && a.relu == b.relu &&
         a.per_channel == b.per_channel && a.scale_base == b.scale_base && a.period == b.period;
}

}  // namespace

TEST_CASE("every opcode round-trips through encode/decode with random fields", "[isa][encode]") {
  bud::emu::Rng rng(42);
  for (Opcode op :
       {Opcode::Load, Opcode::Gemm, Opcode::Post, Opcode::Store, Opcode::Sync, Opcode::End}) {
    for (int i = 0; i < 500; ++i) {
      const Command c = random_command(rng, op);
      const auto words = c.encode();
      const Command d = Command::decode(words);
      INFO(c.to_string() << " vs " << d.to_string());
      REQUIRE(same_fields(c, d));
      REQUIRE(d.encode() == words);
      // Reserved bits stay zero.
      REQUIRE((words[0] & 0xFF00) == 0);
      if (op != Opcode::Post) REQUIRE(words[3] == 0);  // POST's w3: per-channel scale entries
    }
  }
}

TEST_CASE("bit layout follows docs/isa.md", "[isa][encode]") {
  Command g;
  g.opcode = Opcode::Gemm;
  g.pop_prev = true;
  g.push_next = true;
  g.layer = 0x1234;
  g.cmd_id = 0xCAFEBABE;
  g.inp_base = 0x11;
  g.wgt_base = 0x22;
  g.acc_base = 0x33;
  g.reset = true;
  g.m = 4;
  g.k = 64;
  g.n = 16;
  const auto w = g.encode();
  CHECK(w[0] == 0xCAFEBABE12340092ull);
  CHECK(w[1] == 0x0001003300220011ull);
  CHECK(w[2] == 0x0000001000400004ull);

  Command p;
  p.opcode = Opcode::Post;
  p.acc_base = 5;
  p.out_base = 6;
  p.count = 7;
  p.mult = -2;
  p.shift = 31;
  p.clamp_lo = 0;
  p.clamp_hi = 127;
  const auto pw = p.encode();
  CHECK(pw[0] == 3);
  CHECK(pw[1] == 0x0000000700060005ull);
  CHECK(pw[2] == 0x00007F00001FFFFEull);
  CHECK(pw[3] == 0);
  p.per_channel = true;
  p.scale_base = 0x1234;
  p.period = 9;
  const auto pc = p.encode();
  CHECK(pc[1] == (0x0000000700060005ull | (1ull << 51)));
  CHECK(pc[3] == 0x0000000000091234ull);
  CHECK(Command::decode(pc).scale_entries() == 7);  // min(period, count)

  Command l;
  l.opcode = Opcode::Load;
  l.dram_addr = 0x10040;
  l.sram_base = 1024;
  l.buffer = Buffer::Acc;
  l.y_size = 3;
  l.x_size = 8;
  l.x_stride = 0;
  const auto lw = l.encode();
  CHECK(lw[1] == ((2ull << 48) | (1024ull << 32) | 0x10040));
  CHECK(lw[2] == ((8ull << 16) | 3));

  Command e;
  e.opcode = Opcode::End;
  e.end_code = 0xDEAD;
  CHECK(e.encode()[1] == 0xDEAD);
}

TEST_CASE("illegal opcodes decode, print and re-encode verbatim", "[isa][encode]") {
  for (uint8_t op : {0, 7, 8, 15}) {
    const std::array<uint64_t, 4> w{op | (9ull << 32), 0, 0, 0};
    const Command c = Command::decode(w);
    CHECK(c.raw_opcode == op);
    CHECK_FALSE(is_legal_opcode(c.raw_opcode));
    CHECK(c.encode() == w);
    CHECK(c.to_string() == "#9 L0 ILLEGAL(" + std::to_string(op) + ")");
  }
}

TEST_CASE("opcode names and parsing", "[isa][names]") {
  CHECK(opcode_name(1) == "LOAD");
  CHECK(opcode_name(6) == "END");
  CHECK(opcode_name(0) == "ILLEGAL(0)");
  CHECK(parse_opcode("gemm") == Opcode::Gemm);
  CHECK(parse_opcode("Store") == Opcode::Store);
  CHECK_FALSE(parse_opcode("nop").has_value());
  CHECK(std::string(buffer_name(Buffer::Wgt)) == "wgt");
}

TEST_CASE("to_string is one readable line", "[isa][names]") {
  Command g;
  g.opcode = Opcode::Gemm;
  g.cmd_id = 12;
  g.layer = 1;
  g.m = 8;
  g.k = 64;
  g.n = 16;
  g.reset = true;
  g.pop_prev = true;
  CHECK(g.to_string() == "#12 L1 GEMM inp=0 wgt=0 acc=0 M=8 K=64 N=16 reset pop_prev");
  Command l;
  l.opcode = Opcode::Load;
  l.dram_addr = 0x10000;
  l.y_size = 2;
  l.x_size = 4;
  l.x_stride = 128;
  l.push_next = true;
  CHECK(l.to_string() == "#0 L0 LOAD inp[0] <- dram 0x10000 y=2 x=4 stride=128 push_next");
}

TEST_CASE("62 PMU counters with the documented names and indices", "[isa][counters]") {
  CHECK(counter_name(0) == "fetch.active");
  CHECK(counter_name(class_counter(Engine::Load, CycleClass::StallMem)) == "load.stall_mem");
  CHECK(counter_name(class_counter(Engine::Store, CycleClass::Idle)) == "store.idle");
  CHECK(counter_name(34) == "store.idle");
  CHECK(counter_name(static_cast<int>(Counter::Cycles)) == "cycles");
  CHECK(counter_name(static_cast<int>(Counter::DramRdLatencySum)) == "dram_rd_latency_sum");
  CHECK(counter_name(static_cast<int>(Counter::BankConflictsOut)) == "bank_conflicts_out");
  CHECK(counter_name(static_cast<int>(Counter::Saturations)) == "saturations");
  CHECK(counter_name(kNumCounters) == "?");
  CHECK(counter_name(-1) == "?");
  for (int i = 0; i < kNumCounters; ++i) {
    INFO(i);
    REQUIRE(find_counter(counter_name(i)) == i);
  }
  CHECK_FALSE(find_counter("nope").has_value());
  CHECK(std::string(engine_name(Engine::Gemm)) == "gemm");
  CHECK(std::string(class_name(CycleClass::Throttled)) == "throttled");
}
