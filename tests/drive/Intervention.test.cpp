// The intervention log lands each change exactly before its cycle's edge, whatever else pauses
// the run, and the same way again after a trip back.
#include <catch2/catch.hpp>

#include "emu/drive/Intervention.h"
#include "tests/drive/DriveTestSupport.h"

using namespace bud;
using namespace bud::drive;
using namespace bud::drive::test;

namespace {

std::vector<Intervention> sample_log(const emu::Emulator& m) {
  std::vector<Intervention> log;
  Intervention a;
  a.kind = Intervention::Kind::Deposit;
  a.cycle = 300;
  a.signal = *m.find_signal("acc");
  a.value.width = 64;
  a.value.words[0] = 0x1234;
  log.push_back(a);
  Intervention w;
  w.kind = Intervention::Kind::MemoryWrite;
  w.cycle = 301;
  w.memory = "ram";
  w.offset = 17;
  w.bytes = {1, 2, 3, 4};
  log.push_back(w);
  Intervention f = a;
  f.kind = Intervention::Kind::Force;
  f.cycle = 640;
  f.value.words[0] = 7;
  log.push_back(f);
  Intervention r = f;
  r.kind = Intervention::Kind::Release;
  r.cycle = 700;
  log.push_back(r);
  return log;
}

// The same changes made by hand, stepping to each cycle.
uint64_t by_hand(uint64_t until) {
  emu::MockEmulator m({.seed = 11, .length = 5000});
  for (const auto& iv : sample_log(m)) {
    m.step(iv.cycle - m.cycle());
    REQUIRE(iv.apply(m));
  }
  m.step(until - m.cycle());
  return m.digest();
}

}  // namespace

TEST_CASE("interventions land before their cycle's edge whatever else pauses the run",
          "[drive][intervention]") {
  const uint64_t want = by_hand(1000);
  for (uint64_t every : {1, 7, 64, 1000}) {
    emu::MockEmulator m({.seed = 11, .length = 5000});
    const auto log = sample_log(m);
    Driver d(m);
    InterventionActor actor(m, log);
    Pacer p(every);
    d.add(p);
    d.add(actor);
    const auto s = d.run_until(1000);
    CHECK_FALSE(s.failed);
    CHECK(m.digest() == want);
  }
}

TEST_CASE("interventions are applied again the same way after a rewind", "[drive][intervention]") {
  const uint64_t want = by_hand(1000);
  emu::MockEmulator m({.seed = 11, .length = 5000});
  const auto log = sample_log(m);
  InterventionActor replay_actor(m, log);
  StateRewinder back(m, &replay_actor);
  struct Late final : Participant {
    explicit Late(const emu::Emulator& e) : emu(e) {}
    const emu::Emulator& emu;
    bool done = false;
    std::optional<uint64_t> settle() override {
      if (done || emu.cycle() <= 500) return std::nullopt;
      done = true;
      return 500;  // between the deposit and the force
    }
  } late(m);
  InterventionActor actor(m, log);
  Driver d(m);
  d.add(actor);
  d.add(late);
  d.set_rewinder(&back);
  const auto s = d.run_until(1000, 600);  // the first pause is at 300 (the deposit); then 600
  CHECK_FALSE(s.failed);
  CHECK(back.calls == 1);
  CHECK(m.cycle() == 1000);
  CHECK(m.digest() == want);
}

TEST_CASE("a refused intervention fails the run naming the change and its cycle",
          "[drive][intervention]") {
  emu::MockEmulator m({.seed = 11, .length = 5000});
  std::vector<Intervention> log(1);
  log[0].kind = Intervention::Kind::MemoryWrite;
  log[0].cycle = 42;
  log[0].memory = "no-such-memory";
  log[0].bytes = {1};
  InterventionActor actor(m, log);
  Driver d(m);
  d.add(actor);
  const auto s = d.run_until(100);
  CHECK(s.failed);
  CHECK(s.cycle == 42);
  CHECK(s.detail == "could not re-apply a memory-write at cycle 42");
}
