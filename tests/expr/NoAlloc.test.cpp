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

namespace {

// Work of compiling and printing `text`: bytes allocated plus allocations (every copy of a
// growing operand string shows up in the bytes).
uint64_t compile_work(const std::string& text, NameResolver& res) {
  const uint64_t b0 = bud::test::allocated_bytes(), a0 = bud::test::allocations();
  CompileResult r = compile(text, res);
  REQUIRE(r.ok());
  const std::string printed = r.expr->to_string();
  CHECK(printed.size() > text.size() / 4);
  return (bud::test::allocated_bytes() - b0) + (bud::test::allocations() - a0);
}

}  // namespace

TEST_CASE("compiling and printing a condition is linear in its size", "[expr][alloc][limits]") {
  // Issue 12: 200k terms took 25 s (each operator copied its operands' text). Four times the
  // terms must cost about four times the work (quadratic would be sixteen).
  TableResolver res({{"a"}, {"b"}, {"big", 1u << 20}});
  using Make = std::string (*)(int);
  const Make shapes[] = {
      [](int n) {  // one long left-associative chain
        std::string s = "a";
        for (int i = 1; i < n; ++i) s += i % 2 ? " + b" : " || a";
        return s;
      },
      [](int n) {  // distinct names and rings: every term adds a ref, a name and a ring
        std::string s = "delta(big[0], 1) > 0";
        for (int i = 1; i < n; ++i) s += " || delta(big[" + std::to_string(i) + "], 1) > 0";
        return s;
      },
      [](int n) {  // right-leaning nests 50 deep (within the nesting limit), one after another
        std::string s;
        for (int g = 0; g < n / 51; ++g) {
          s += g ? " + a" : "a";
          for (int j = 0; j < 50; ++j) s += " - (b";
          s += std::string(50, ')');
        }
        return s;
      },
  };
  for (Make make : shapes) {
    const uint64_t small = compile_work(make(10'000), res);
    const uint64_t large = compile_work(make(40'000), res);
    INFO("work for 10k terms " << small << ", for 40k terms " << large);
    CHECK(large < 6 * small);
  }
  // The size of issue 12 compiles (and the nodes stay under the limit).
  CHECK(compile_work(shapes[0](200'000), res) > 0);
}
