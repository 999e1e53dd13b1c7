// The per-cycle contract of the attribution and host-track observers: a profiled stretch of run
// allocates the same whatever its length (nothing per cycle, nothing per holder change;
// tests/AllocCount.cpp counts).
#include <catch2/catch.hpp>

#include "emu/run/Designs.h"
#include "emu/run/RunJob.h"
#include "profile/Attribution.h"
#include "profile/HostTrack.h"
#include "tests/AllocCount.h"

using namespace bud;
namespace run = bud::run;

namespace {

// Allocations made while driving from the current cycle to `to` with `p` taking part.
uint64_t allocations_driving(drive::Driver& d, uint64_t to) {
  const uint64_t before = bud::test::allocations();
  const auto s = d.run_until(to, uint64_t{1} << 40);
  const uint64_t n = bud::test::allocations() - before;
  REQUIRE(s.reached_target);
  return n;
}

}  // namespace

TEST_CASE("the attribution observer allocates nothing per cycle", "[profile][alloc]") {
  run::RunOptions o;
  o.workload = "compute_bound";  // 165 commands over 274k cycles
  auto prepared = run::prepare(o);
  REQUIRE(prepared);
  auto emu = emu::make_emulator(o.emulator);
  REQUIRE(run::start(*prepared, o, *emu).empty());
  std::string error;
  auto a = profile::Attribution::attach(*emu, prepared->program, error);
  REQUIRE(a);
  drive::Driver d(*emu);
  d.add(*a);
  (void)allocations_driving(d, 1'000);  // set-up: the fan-out takes its capacity
  const uint64_t probe = bud::test::allocations();
  ::operator delete(::operator new(16));
  REQUIRE(bud::test::allocations() == probe + 1);  // the counter counts
  const uint64_t changes_before = a->changes();
  const uint64_t short_run = allocations_driving(d, 11'000);
  const uint64_t long_run = allocations_driving(d, 211'000);
  INFO("10k cycles: " << short_run << ", 200k cycles: " << long_run);
  CHECK(a->changes() - changes_before > 100);  // the attributing path ran too
  CHECK(short_run == 0);
  CHECK(long_run == 0);
}

TEST_CASE("the host-track observer allocates nothing per cycle or per access", "[profile][alloc]") {
  run::RunOptions o;
  o.workload = "gemm_small";
  auto prepared = run::prepare(o);
  REQUIRE(prepared);
  auto emu = emu::make_emulator(o.emulator);
  REQUIRE(run::start(*prepared, o, *emu).empty());
  std::string error;
  auto h = profile::HostTrack::attach(*emu, prepared->program.commands.size(), error);
  INFO(error);
  REQUIRE(h);
  drive::Driver d(*emu);
  d.add(*h);
  (void)allocations_driving(d, 1);  // set-up: the fan-out takes its capacity
  const uint64_t before = bud::test::allocations();
  const auto s = d.run_until(uint64_t{1} << 40, uint64_t{1} << 40);  // to the end of the run
  const uint64_t n = bud::test::allocations() - before;
  CHECK(s.state == emu::RunState::Finished);
  CHECK(n == 0);
  // It recorded during that stretch: the doorbell, the interrupt, STATUS read and IRQ ack.
  REQUIRE(h->events().size() >= 4);
  CHECK(h->events().back().kind == profile::HostActivity::IrqAck);
  CHECK(h->interrupts().size() == 1);
  CHECK(h->dropped() == 0);
}
