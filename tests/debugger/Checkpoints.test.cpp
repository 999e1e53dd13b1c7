// Incremental checkpoints (Timeline over Emulator::save_segments): a checkpoint taken after memory
// writes and deposits restores bit-exactly, also when the change lands between two checkpoints
// of the same cycle, and a checkpoint stores only what changed since the previous one.
#include <random>

#include "debugger/session/Timeline.h"
#include "tests/debugger/DebuggerTestSupport.h"

using bud::test::Debugger;

namespace {

const bud::debugger::CheckpointInfo& named(const bud::debugger::Timeline& t,
                                           const std::string& name) {
  static bud::debugger::CheckpointInfo none;
  static std::vector<bud::debugger::CheckpointInfo> list;
  list = t.list();
  for (const auto& c : list)
    if (c.name == name) return c;
  FAIL("no checkpoint " << name);
  return none;
}

}  // namespace

TEST_CASE("checkpoints after memory writes and deposits restore bit-exactly",
          "[debugger][timeline]") {
  Debugger d("conv", 1000);
  d.ok("until 2500");
  d.ok("deposit dram 0x300000 0x5a");
  d.ok("deposit pmu.cycles 100000");
  d.ok("checkpoint a");
  const uint64_t at_a = d.digest();
  // Changed again at the same cycle, after a checkpoint: the next one must see the new bytes.
  d.ok("deposit dram 0x300000 0x77");
  d.ok("deposit dram 0x300001 0x01");
  d.ok("checkpoint b");
  const uint64_t at_b = d.digest();
  CHECK(at_b != at_a);
  d.ok("step 3000");  // automatic checkpoints at 3000, 4000 and 5000 carry the change
  const uint64_t at_5500 = d.digest();

  d.ok("restore a");
  CHECK(d.digest() == at_a);
  CHECK(d.ok("x dram 0x300000 2").lines.at(0) == "dram+0x300000: 5a 00");
  d.ok("restore b");
  CHECK(d.digest() == at_b);
  CHECK(d.ok("x dram 0x300000 2").lines.at(0) == "dram+0x300000: 77 01");
  d.ok("goto 5500");
  CHECK(d.digest() == at_5500);

  // The same changes made on a run that never travelled: the same states.
  Debugger f("conv", 1000);
  f.ok("until 2500");
  f.ok("deposit dram 0x300000 0x77");
  f.ok("deposit dram 0x300001 0x01");
  f.ok("deposit pmu.cycles 100000");
  f.ok("until 4321");
  const uint64_t forward_4321 = f.digest();
  d.ok("goto 4321");  // restores the automatic checkpoint at 4000
  CHECK(d.session->timeline().last_resimulated() == 321);
  CHECK(d.digest() == forward_4321);
}

TEST_CASE("a checkpoint stores only what changed since the previous one", "[debugger][timeline]") {
  Debugger d("conv", 1'000'000);
  d.ok("until 1000");
  // A megabyte of incompressible DRAM contents, so that re-storing it would show.
  auto& emu = d.session->emu();
  std::mt19937_64 rng(5);
  std::vector<uint8_t> noise(1 << 20);
  for (auto& b : noise) b = static_cast<uint8_t>(rng());
  REQUIRE(emu.write_memory("dram", 0x800000, noise));
  auto& t = d.session->timeline();
  t.save_named("filled");
  CHECK(named(t, "filled").bytes > 1'000'000);
  CHECK(named(t, "filled").raw_bytes > 1'100'000);

  t.save_named("same");  // nothing changed: nothing new
  CHECK(named(t, "same").bytes == 0);

  REQUIRE(emu.write_memory("acc", 0, std::vector<uint8_t>(32, 0x3c)));  // design state only
  t.save_named("scratchpad");
  CHECK(named(t, "scratchpad").bytes > 0);
  CHECK(named(t, "scratchpad").bytes < 16'384);

  REQUIRE(emu.write_memory("dram", 0x800000 + 5 * 4096 + 17, std::vector<uint8_t>{1, 2, 3}));
  t.save_named("one_page");
  CHECK(named(t, "one_page").bytes > 0);
  CHECK(named(t, "one_page").bytes < 8'192);  // one page, stored whole

  // Each restores exactly.
  const uint64_t now = d.digest();
  REQUIRE(t.restore_named("filled").empty());
  std::vector<uint8_t> back(noise.size());
  REQUIRE(emu.read_memory("dram", 0x800000, back));
  CHECK(back == noise);
  REQUIRE(t.restore_named("one_page").empty());
  CHECK(d.digest() == now);
}
