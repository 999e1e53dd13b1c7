// The per-cycle contract of the driver: once a run is set up, driving it (steps, the fan-out of
// hooks and observers, pauses of participants that do not allocate) never allocates. Global
// operator new is replaced for this test executable so allocations can be counted.
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <new>

#include "emu/drive/Intervention.h"
#include "tests/drive/DriveTestSupport.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace {
std::atomic<uint64_t> g_allocations{0};
}

void* operator new(std::size_t n) {
  ++g_allocations;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return ::operator new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  ++g_allocations;
  return std::malloc(n == 0 ? 1 : n);
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept {
  return ::operator new(n, t);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

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

  ::operator delete(::operator new(16));  // the counter works
  const uint64_t before = g_allocations.load();
  const auto s = d.run_until(200'000);
  const uint64_t allocations = g_allocations.load() - before;
  CHECK(s.reached_target);
  CHECK(a.seen == 200'000);
  CHECK(obs.txns > 1000);
  CHECK(pacer.n > 3000);
  CHECK(allocations == 0);
}
