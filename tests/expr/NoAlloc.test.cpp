// Sanity check of the per-cycle contract: arm() and eval() never allocate. Global operator new
// is replaced for this test executable so allocations can be counted.
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <new>

#include "tests/expr/ExprTestSupport.h"

// GCC pairs the replaced operators with the malloc/free inside them and warns about a mismatch
// that cannot happen: every new here is malloc and every delete is free.
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
  const uint64_t before = g_allocations.load();
  // Sanity check that the counter works at all.
  ::operator delete(::operator new(16));
  REQUIRE(g_allocations.load() == before + 1);

  const uint64_t start = g_allocations.load();
  e.arm(s);
  uint64_t truthy = 0;
  for (int cycle = 0; cycle < 20000; ++cycle) {
    s.fallback = static_cast<uint64_t>(cycle) * (cycle % 3);
    truthy += e.eval(s).truthy() ? 1 : 0;
  }
  e.arm(s);
  truthy += e.eval(s).truthy() ? 1 : 0;
  const uint64_t allocated = g_allocations.load() - start;
  CHECK(allocated == 0);
  CHECK(truthy > 0);  // keep the loop observable
}
