// The per-cycle contract of the debugger's run: with breakpoints armed (four never-firing
// conditions on counters and a cycle breakpoint) and the golden-model stage check on, a
// `continue` allocates the same whatever the number of cycles it runs: nothing per cycle, only
// per stop (tests/AllocCount.cpp counts every operator new in this executable).
#include "DebuggerTestSupport.h"
#include "tests/AllocCount.h"

using namespace bud;

namespace {

// Allocations made by one `continue` to a cycle breakpoint at `to` (set, run, deleted).
uint64_t allocations_of_continue_to(test::Debugger& d, uint64_t to, int id) {
  d.ok("break " + std::to_string(to));
  const uint64_t before = test::allocations();
  const auto r = d.in->execute("continue");
  const uint64_t n = test::allocations() - before;
  INFO(r.error);
  REQUIRE(r.ok);
  REQUIRE(d.session->emu().cycle() == to);
  d.ok("delete " + std::to_string(id));
  return n;
}

}  // namespace

TEST_CASE("continue with conditions armed allocates nothing per cycle", "[debugger][alloc]") {
  // No automatic checkpoints inside the measured stretches (their state buffers are per
  // checkpoint, not per cycle).
  test::Debugger d("compute_bound", /*interval=*/1ull << 40);
  d.ok("break if gemm.stall_mem > 1000000000");
  d.ok("break if load.stall_mem > 1000000000");
  d.ok("break if store.idle > 1000000000");
  d.ok("break if dram_rd_bytes > 1000000000000");
  // Warm-up: the first continue sizes whatever the run keeps (fan-out lists, checker state).
  (void)allocations_of_continue_to(d, 5'000, 5);
  const uint64_t probe = test::allocations();
  ::operator delete(::operator new(16));
  REQUIRE(test::allocations() == probe + 1);  // the counter counts
  const uint64_t short_run = allocations_of_continue_to(d, 15'000, 6);     // 10,000 cycles
  const uint64_t long_run = allocations_of_continue_to(d, 215'000, 7);     // 200,000 cycles
  INFO("10k cycles: " << short_run << " allocations, 200k cycles: " << long_run);
  CHECK(long_run == short_run);
}
