#include "emu/core/StageTxn.h"

#include <catch2/catch.hpp>

#include "emu/isa/Isa.h"

using bud::emu::Stage;
using bud::emu::StageDigest;
using bud::emu::StageTxn;

namespace {
StageTxn gemm_txn(uint32_t cmd, uint32_t addr, int32_t lane0) {
  StageTxn t;
  t.stage = Stage::Gemm;
  t.buffer = 2;
  t.size = 32;
  t.cmd_id = cmd;
  t.addr = addr;
  const uint32_t v = static_cast<uint32_t>(lane0);
  for (int i = 0; i < 4; ++i) t.data[static_cast<size_t>(i)] = static_cast<uint8_t>(v >> (8 * i));
  return t;
}
}  // namespace

TEST_CASE("hash ignores the cycle and sees every other field", "[isa][stagetxn]") {
  const StageTxn a = gemm_txn(12, 40, -3);
  StageTxn b = a;
  b.cycle = 999;
  CHECK(a.hash() == b.hash());
  CHECK(a.same_content(b));
  StageTxn c = a;
  c.addr = 41;
  CHECK(a.hash() != c.hash());
  c = a;
  c.cmd_id = 13;
  CHECK(a.hash() != c.hash());
  c = a;
  c.stage = Stage::Post;
  CHECK(a.hash() != c.hash());
  c = a;
  c.data[31] = 1;
  CHECK(a.hash() != c.hash());
  CHECK_FALSE(a.same_content(c));
  c = a;
  c.size = 8;
  CHECK(a.hash() != c.hash());
}

TEST_CASE("stage transaction hashes and digests are pinned", "[isa][stagetxn]") {
  // Stage digests are stored in packets and compared across builds: values computed once (XXH3-64
  // of the transaction's little-endian layout, packet format 2.0).
  CHECK(gemm_txn(12, 40, -3).hash() == 0x2779290b46ef650eull);
  StageTxn p = gemm_txn(7, 0x1234, 100);
  p.stage = Stage::Post;
  p.size = 64;
  for (size_t i = 0; i < p.data.size(); ++i) p.data[i] = static_cast<uint8_t>(i * 3);
  CHECK(p.hash() == 0xe7ae0089c8e57928ull);
  StageDigest d;
  d.add(gemm_txn(12, 40, -3));
  d.add(p);
  CHECK(d.count == 2);
  CHECK(d.sum == 0x0f2729950fd4de36ull);  // the sum of the two, mod 2^64
}

TEST_CASE("digests are order independent but see changes", "[isa][stagetxn]") {
  StageDigest d1, d2, d3;
  d1.add(gemm_txn(1, 0, 5));
  d1.add(gemm_txn(1, 1, 6));
  d2.add(gemm_txn(1, 1, 6));
  d2.add(gemm_txn(1, 0, 5));
  CHECK(d1 == d2);
  d3.add(gemm_txn(1, 0, 5));
  d3.add(gemm_txn(1, 1, 7));
  CHECK(d1 != d3);
}

TEST_CASE("to_string names stage, command, buffer and values", "[isa][stagetxn]") {
  CHECK(gemm_txn(12, 40, -3).to_string() == "gemm #12 acc[40] = [-3, 0, 0, 0, 0, 0, 0, 0]");
  StageTxn s;
  s.stage = Stage::Store;
  s.cmd_id = 3;
  s.addr = 0x10040;
  s.size = 8;
  s.data[0] = 0xFF;
  CHECK(s.to_string() == "store #3 dram[0x10040] size 8 = [-1, 0, 0, 0, 0, 0, 0, 0]");
  StageTxn f;
  f.stage = Stage::Fetch;
  f.cmd_id = 7;
  f.size = 32;
  bud::isa::Command c;
  c.opcode = bud::isa::Opcode::Sync;
  c.cmd_id = 7;
  const auto w = c.encode();
  for (int i = 0; i < 4; ++i)
    for (int b = 0; b < 8; ++b)
      f.data[static_cast<size_t>(i * 8 + b)] =
          static_cast<uint8_t>(w[static_cast<size_t>(i)] >> (8 * b));
  CHECK(f.to_string() == "fetch #7 dispatch #7 L0 SYNC");
  CHECK(std::string(bud::emu::stage_name(Stage::Load)) == "load");
}
