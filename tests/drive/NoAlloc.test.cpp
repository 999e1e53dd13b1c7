// The per-cycle contract of the driver: once a run is set up, driving it (steps, the fan-out of
// hooks and observers, pauses of participants that do not allocate) never allocates
// (tests/AllocCount.cpp counts).
#include <catch2/catch.hpp>

#include "emu/drive/Intervention.h"
#include "tests/AllocCount.h"
#include "tests/drive/DriveTestSupport.h"

using namespace bud;
using namespace bud::drive;
using namespace bud::drive::test;

TEST_CASE("driving a run does not allocate per cycle or per pause", "[drive][alloc]") {
  emu::MockEmulator m({.seed = 13, .length = 1'000'000});
  struct Observer final : Participant, emu::TxnObserver {
    uint64_t txns = 0;
    emu::TxnObserver* txn_observer() override { return this; }
    void on_txn(const emu::StageTxn&) override { ++txns; }
  } obs;
  Counter a, b;  // two hooks: the fan-out path
  struct Quiet final : Participant {
    uint64_t n = 0;
    uint64_t next_pause(uint64_t now) const override { return (now / 64 + 1) * 64; }
    PauseAction on_pause(uint64_t) override {
      ++n;
      return PauseAction::Continue;
    }
  } pacer;
  std::vector<Intervention> log(1);
  log[0].kind = Intervention::Kind::Deposit;
  log[0].cycle = 150'000;
  log[0].signal = *m.find_signal("acc");
  log[0].value.width = 64;
  InterventionActor actor(m, log);
  Driver d(m);
  d.add(a);
  d.add(b);
  d.add(obs);
  d.add(pacer);
  d.add(actor);
  d.run_until(1000);  // set-up: the fan-out lists take their capacity

  const uint64_t probe = bud::test::allocations();
  ::operator delete(::operator new(16));
  REQUIRE(bud::test::allocations() == probe + 1);  // the counter works
  const uint64_t before = bud::test::allocations();
  const auto s = d.run_until(200'000);
  const uint64_t allocations = bud::test::allocations() - before;
  CHECK(s.reached_target);
  CHECK(a.seen == 200'000);
  CHECK(obs.txns > 1000);
  CHECK(pacer.n > 3000);
  CHECK(allocations == 0);
}
