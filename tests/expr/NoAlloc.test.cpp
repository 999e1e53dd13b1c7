// Sanity check of the per-cycle contract: arm() and eval() never allocate (tests/AllocCount.cpp
// counts the calls of operator new in this executable).
#include <catch2/catch.hpp>

#include "tests/AllocCount.h"
#include "tests/expr/ExprTestSupport.h"

using namespace bud::debugger;
using namespace bud::debugger::test;

TEST_CASE("arm and eval do not allocate", "[expr][alloc]") {
  TableResolver res = TableResolver::standard();
  Expr e = must_compile(
      "rate(gemm.stall_dep, 1024) > 70% && ratio(macs_useful, cycles, 64) < 0.5 || "
      "held(delta(cycles, 1) == 0, 100) || count(rose(load.state)) > 3 && "
      "fell(tokens[1]) + changed(a) * x / (y % 3) - -delta(b, 7) != 0",
      res);
  ScriptedSampler s;
  s.fallback = 1;  // no script: sample() does a map lookup but never allocates
  const uint64_t before = bud::test::allocations();
  // Sanity check that the counter works at all.
  ::operator delete(::operator new(16));
  REQUIRE(bud::test::allocations() == before + 1);

  const uint64_t start = bud::test::allocations();
  e.arm(s);
  uint64_t truthy = 0;
  for (int cycle = 0; cycle < 20000; ++cycle) {
    s.fallback = static_cast<uint64_t>(cycle) * (cycle % 3);
    truthy += e.eval(s).truthy() ? 1 : 0;
  }
  e.arm(s);
  truthy += e.eval(s).truthy() ? 1 : 0;
  const uint64_t allocated = bud::test::allocations() - start;
  CHECK(allocated == 0);
  CHECK(truthy > 0);  // keep the loop observable
}
