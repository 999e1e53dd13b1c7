// Save/restore: a state saved at any cycle and restored (into a fresh emulator or into the same
// one after it ran on) continues bit-identically; bad state bytes are rejected without touching
// the emulator.
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "tests/npu/NpuTestSupport.h"

namespace {

using bud::emu::NpuConfig;
using bud::emu::NpuEmulator;
using bud::emu::RunState;

/// Everything that must match between two runs.
struct Snapshot {
  uint64_t cycle = 0;
  uint64_t digest = 0;
  RunState state = RunState::Ready;
  std::array<uint64_t, bud::isa::kNumCounters> counters{};
  std::array<bud::emu::StageDigest, bud::emu::kNumStages> stages{};
  bud::emu::DramStats dram_stats;
  bool operator==(const Snapshot&) const = default;
};

Snapshot snapshot(NpuEmulator& emu) {
  Snapshot s;
  s.cycle = emu.cycle();
  s.digest = emu.digest();
  s.state = emu.state();
  for (int i = 0; i < bud::isa::kNumCounters; ++i) s.counters[i] = emu.counter(i);
  for (int i = 0; i < bud::emu::kNumStages; ++i)
    s.stages[i] = emu.stage_digest(static_cast<bud::emu::Stage>(i));
  s.dram_stats = emu.dram().stats();
  return s;
}

void run_to_end(NpuEmulator& emu) {
  while (emu.state() == RunState::Ready && emu.cycle() < 5'000'000) emu.step(1u << 20);
  REQUIRE(emu.state() == RunState::Finished);
}

/// Jitter, reordering and bursts: the memory model's RNGs and queues are part of the state.
NpuConfig busy_memory() {
  NpuConfig c;
  c.dram.base_latency = 25;
  c.dram.jitter = 40;
  c.dram.bursty = true;
  c.dram.seed = 17;
  return c;
}

/// A new emulator in `fleet` (emulators that live side by side must be destroyed oldest first).
NpuEmulator* loaded(bud::test::Fleet& fleet, const bud::run::PreparedRun& p, const NpuConfig& c) {
  return &fleet.make(p.job, c);
}

/// Steps one cycle at a time from `from` until DRAM requests are in flight while a scratchpad is
/// being written: the middle of a LOAD burst.
uint64_t find_mid_burst(const bud::run::PreparedRun& p, const NpuConfig& c, uint64_t from) {
  bud::test::Fleet fleet;
  auto emu = loaded(fleet, p, c);
  emu->step(from);
  const auto ld_valid = emu->find_signal("obs_ld_valid");
  REQUIRE(ld_valid);
  while (emu->state() == RunState::Ready) {
    emu->step(1);
    if (emu->dram().outstanding() >= 2 && emu->read_signal(*ld_valid).low() == 1)
      return emu->cycle();
  }
  FAIL("no LOAD burst found after cycle " << from);
  return 0;
}

void check_save_restore_at(const bud::run::PreparedRun& p, const NpuConfig& c, uint64_t n) {
  INFO("save at cycle " << n);
  bud::test::Fleet fleet;
  auto a = loaded(fleet, p, c);
  a->step(n);
  REQUIRE(a->cycle() == n);
  REQUIRE(a->state() == RunState::Ready);
  const Snapshot at_n = snapshot(*a);
  std::vector<uint8_t> bytes;
  a->save(bytes);
  REQUIRE(!bytes.empty());
  // Saving does not disturb the run.
  CHECK(snapshot(*a) == at_n);
  run_to_end(*a);
  const Snapshot end = snapshot(*a);
  CHECK(end.cycle > n);

  // A fresh emulator with the same config and job.
  auto b = loaded(fleet, p, c);
  std::string err;
  REQUIRE(b->restore(bytes, err));
  CHECK(err.empty());
  CHECK(snapshot(*b) == at_n);
  run_to_end(*b);
  CHECK(snapshot(*b) == end);

  // The same emulator, after it ran to the end: back to N and on to the same end.
  REQUIRE(a->restore(bytes, err));
  CHECK(snapshot(*a) == at_n);
  run_to_end(*a);
  CHECK(snapshot(*a) == end);

  // And the run still passes every check after the restore.
  auto r = bud::run::finish(p, bud::test::options_for(p.workload.name, std::nullopt, c), *b);
  INFO(bud::test::failures_text(r));
  CHECK(r.passed);
}

}  // namespace

TEST_CASE("save at cycle N, restore and continue is bit-identical", "[npu][save_restore]") {
  const NpuConfig c = busy_memory();
  for (const std::string name : {"gemm_small", "mlp"}) {
    const auto& p = bud::test::prepared(name);
    const uint64_t total =
        bud::run::execute(p, bud::test::options_for(name, std::nullopt, c)).cycles;
    REQUIRE(total > 400);
    const uint64_t mid_burst = find_mid_burst(p, c, 150);
    // 1 and 4: during the host's CSR setup; mid-burst; mid-run; a few cycles before the end.
    for (uint64_t n : {uint64_t{1}, uint64_t{4}, mid_burst, total / 2, total - 3}) {
      DYNAMIC_SECTION(name << " at cycle " << n) { check_save_restore_at(p, c, n); }
    }
  }
}

TEST_CASE("a state saved at the end restores as finished", "[npu][save_restore]") {
  const auto& p = bud::test::prepared("gemm_small");
  bud::test::Fleet fleet;
  auto a = loaded(fleet, p, {});
  run_to_end(*a);
  const Snapshot end = snapshot(*a);
  std::vector<uint8_t> bytes;
  a->save(bytes);
  auto b = loaded(fleet, p, {});
  std::string err;
  REQUIRE(b->restore(bytes, err));
  CHECK(snapshot(*b) == end);
  CHECK(b->state() == RunState::Finished);
  CHECK(b->step(10).cycles == 0);
}

TEST_CASE("bad state bytes are rejected and leave the emulator unchanged", "[npu][save_restore]") {
  const auto& p = bud::test::prepared("gemm_small");
  const NpuConfig c = busy_memory();
  bud::test::Fleet fleet;
  auto src = loaded(fleet, p, c);
  src->step(300);
  std::vector<uint8_t> good;
  src->save(good);
  REQUIRE(good.size() > 64);

  // The victim is at another cycle, so an accidental restore would show.
  auto victim = loaded(fleet, p, c);
  victim->step(123);
  const Snapshot before = snapshot(*victim);
  std::vector<uint8_t> victim_at_123;
  victim->save(victim_at_123);

  auto expect_rejected = [&](const std::vector<uint8_t>& bytes, const char* what) {
    INFO(what);
    std::string err;
    CHECK_FALSE(victim->restore(bytes, err));
    INFO("error: " << err);
    CHECK(err.find("byte") != std::string::npos);
    CHECK(snapshot(*victim) == before);
    // Still runs normally from where it was.
  };

  SECTION("flipped byte in the payload") {
    auto bytes = good;
    bytes[bytes.size() / 2] ^= 0x40;
    expect_rejected(bytes, "corrupt");
  }
  SECTION("flipped byte in the checksum") {
    auto bytes = good;
    bytes.back() ^= 1;
    expect_rejected(bytes, "checksum");
  }
  SECTION("truncated at several lengths") {
    for (size_t len : {size_t{0}, size_t{5}, size_t{12}, good.size() / 3, good.size() - 1}) {
      std::vector<uint8_t> bytes(good.begin(), good.begin() + static_cast<ptrdiff_t>(len));
      expect_rejected(bytes, "truncated");
    }
  }
  SECTION("foreign bytes") {
    std::vector<uint8_t> bytes(good.size());
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 37 + 11);
    expect_rejected(bytes, "foreign");
  }
  SECTION("a valid state of another program") {
    const auto& other = bud::test::prepared("mlp");
    auto o = loaded(fleet, other, c);
    o->step(300);
    std::vector<uint8_t> bytes;
    o->save(bytes);
    expect_rejected(bytes, "other program");
  }
  // After the rejections the victim continues exactly as from its own saved state (the same
  // instance: digests of two instances differ, see Determinism.test.cpp).
  run_to_end(*victim);
  const Snapshot after_rejections = snapshot(*victim);
  std::string err;
  REQUIRE(victim->restore(victim_at_123, err));
  run_to_end(*victim);
  CHECK(snapshot(*victim) == after_rejections);
}

// Emulator::restore promises an error naming the byte offset on every failure. A state from
// another model revision is rejected, but the message names only the two revisions.
TEST_CASE("a state from another model revision is rejected naming a byte offset",
          "[npu][save_restore]") {
  const auto& p = bud::test::prepared("gemm_small");
  bud::test::Fleet fleet;
  auto a = loaded(fleet, p, {});
  a->step(50);
  std::vector<uint8_t> bytes;
  a->save(bytes);
  // The revision string follows the 8-byte magic and its 4-byte length.
  bytes[12] = bytes[12] == '0' ? '1' : '0';
  auto b = loaded(fleet, p, {});
  b->step(7);
  const Snapshot before = snapshot(*b);
  std::string err;
  REQUIRE_FALSE(b->restore(bytes, err));
  CHECK(snapshot(*b) == before);
  INFO("error: " << err);
  CHECK(err.find("revision") != std::string::npos);
  CHECK(err.find("byte") != std::string::npos);
}

namespace {

/// The header fields of a BUDNPU04 state that locate its DRAM pages.
struct StateLayout {
  size_t len_at = 0;  ///< byte offset of payload_len (pages_at and page_count follow)
  uint64_t pages_at = 0;
  uint32_t page_count = 0;
};

StateLayout layout_of(const std::vector<uint8_t>& bytes) {
  StateLayout l;
  uint32_t rev_len = 0;
  std::memcpy(&rev_len, bytes.data() + 8, 4);
  l.len_at = 12 + rev_len;
  std::memcpy(&l.pages_at, bytes.data() + l.len_at + 8, 8);
  std::memcpy(&l.page_count, bytes.data() + l.len_at + 16, 4);
  return l;
}

}  // namespace

TEST_CASE("segmented saves: DRAM pages are versioned, the rest is always new",
          "[npu][save_restore]") {
  const auto& p = bud::test::prepared("gemm_small");
  bud::test::Fleet fleet;
  auto a = loaded(fleet, p, {});
  a->step(400);
  bud::emu::StateSegments s1;
  a->save_segments(s1);
  std::vector<uint8_t> bytes;
  a->save(bytes);
  std::vector<uint8_t> joined;
  s1.append_to(joined);
  CHECK(joined == bytes);
  // Head, one segment per stored page (borrowed in place, 4 KiB each), tail.
  const StateLayout l = layout_of(bytes);
  REQUIRE(l.page_count >= 2);
  REQUIRE(s1.count() == l.page_count + 2);
  CHECK(s1.at(0).version == 0);
  CHECK(s1.at(0).bytes.size() == l.pages_at);
  CHECK(s1.at(s1.count() - 1).version == 0);
  std::vector<uint64_t> versions;
  for (size_t i = 1; i + 1 < s1.count(); ++i) {
    CHECK(s1.at(i).bytes.size() == bud::emu::kDramPageBytes);
    CHECK(s1.at(i).version != 0);
    versions.push_back(s1.at(i).version);
  }

  // A scratchpad write changes no page; a DRAM write changes exactly its page.
  REQUIRE(a->write_memory("acc", 0, std::vector<uint8_t>(32, 0x11)));
  bud::emu::StateSegments s2;
  a->save_segments(s2);
  REQUIRE(s2.count() == s1.count());
  for (size_t i = 1; i + 1 < s2.count(); ++i) CHECK(s2.at(i).version == versions[i - 1]);
  // The lowest stored page, found from where its bytes are borrowed from.
  const auto page = static_cast<uint64_t>(s1.at(1).bytes.data() - a->dram().page_bytes(0).data()) /
                    bud::emu::kDramPageBytes;
  REQUIRE(a->write_memory("dram", page * bud::emu::kDramPageBytes + 8,
                          std::vector<uint8_t>{0x42}));
  bud::emu::StateSegments s3;
  a->save_segments(s3);
  REQUIRE(s3.count() == s1.count());
  CHECK(s3.at(1).version != versions[0]);
  for (size_t i = 2; i + 1 < s3.count(); ++i) CHECK(s3.at(i).version == versions[i - 1]);

  // What the segments say is what restore() accepts, and it is exact.
  std::vector<uint8_t> later;
  s3.append_to(later);
  auto b = loaded(fleet, p, {});
  std::string err;
  REQUIRE(b->restore(later, err));
  CHECK(snapshot(*b) == snapshot(*a));
}

TEST_CASE("corrupt bytes in any segment of a state are rejected naming a byte offset",
          "[npu][save_restore]") {
  const auto& p = bud::test::prepared("gemm_small");
  bud::test::Fleet fleet;
  auto src = loaded(fleet, p, busy_memory());
  src->step(700);
  std::vector<uint8_t> good;
  src->save(good);
  const StateLayout l = layout_of(good);
  REQUIRE(l.page_count > 0);
  const size_t pages_end = l.pages_at + size_t{l.page_count} * bud::emu::kDramPageBytes;
  REQUIRE(pages_end + 16 < good.size());

  auto victim = loaded(fleet, p, busy_memory());
  victim->step(55);
  const Snapshot before = snapshot(*victim);
  auto rejected = [&](const std::vector<uint8_t>& bytes, const std::string& want) {
    std::string err;
    CHECK_FALSE(victim->restore(bytes, err));
    INFO("error: " << err);
    CHECK(err.find("byte") != std::string::npos);
    CHECK(err.find(want) != std::string::npos);
  };

  SECTION("a flipped bit in the first page, the last page, the head and the tail") {
    for (size_t at : {size_t{l.pages_at + 100}, pages_end - 1, size_t{l.pages_at - 1},
                      l.len_at + 30, pages_end + 3}) {
      INFO("flipped byte " << at);
      auto bytes = good;
      bytes[at] ^= 0x04;
      rejected(bytes, "checksum");
    }
  }
  SECTION("a single-byte change every 509 bytes, through every segment") {
    for (size_t at = 0; at < good.size(); at += 509) {
      INFO("changed byte " << at);
      auto bytes = good;
      bytes[at] = static_cast<uint8_t>(bytes[at] + 1);
      rejected(bytes, "");
    }
  }
  SECTION("DRAM pages that do not fit the payload") {
    auto bytes = good;
    const uint64_t far = good.size();
    std::memcpy(bytes.data() + l.len_at + 8, &far, 8);
    rejected(bytes, "do not fit");
    bytes = good;
    const uint32_t many = l.page_count + 100000;
    std::memcpy(bytes.data() + l.len_at + 16, &many, 4);
    rejected(bytes, "do not fit");
  }
  SECTION("a state of the previous format") {
    auto bytes = good;
    bytes[7] = '2';
    rejected(bytes, "BUDNPU02");
  }
  CHECK(snapshot(*victim) == before);
  victim->step(100);  // and it still runs
  CHECK(victim->cycle() == 155);
}
