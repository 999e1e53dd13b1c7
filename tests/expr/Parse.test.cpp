// Grammar, precedence, number formats and the normalized printing of expressions.
#include <catch2/catch.hpp>

#include "tests/expr/ExprTestSupport.h"

using namespace bud::debugger;
using namespace bud::debugger::test;

namespace {

// Value of a stateless expression with a = 10, b = 3, c = 0, x = 7, tokens[i] = i + 1.
Value value_of(std::string_view text) {
  TableResolver res = TableResolver::standard();
  std::map<uint32_t, uint64_t> v = {
      {res.id("a"), 10}, {res.id("b"), 3}, {res.id("c"), 0}, {res.id("x"), 7}};
  for (uint32_t i = 0; i < 4; ++i) v[res.id("tokens") + i * 1000] = i + 1;
  ConstSampler s(v);
  Expr e = must_compile(text, res);
  e.arm(s);
  return e.eval(s);
}
int64_t int_of(std::string_view text) {
  Value v = value_of(text);
  INFO(text);
  REQUIRE_FALSE(v.is_real);
  return v.integer;
}
double real_of(std::string_view text) {
  Value v = value_of(text);
  INFO(text);
  REQUIRE(v.is_real);
  return v.real;
}
std::string normalized(std::string_view text) {
  TableResolver res = TableResolver::standard();
  return must_compile(text, res).to_string();
}

}  // namespace

TEST_CASE("number formats", "[expr][parse]") {
  CHECK(int_of("42") == 42);
  CHECK(int_of("0x2A") == 42);
  CHECK(int_of("0xff_ff") == 0xffff);
  CHECK(int_of("0b101010") == 42);
  CHECK(int_of("0b1010_1010") == 0xaa);
  CHECK(int_of("1_000_000") == 1000000);
  CHECK(int_of("007") == 7);
  CHECK(real_of("0.7") == 0.7);
  CHECK(real_of("1_000.5") == 1000.5);
  CHECK(real_of("70%") == 0.7);
  CHECK(real_of("12.5%") == 0.125);
  CHECK(real_of("100%") == 1.0);
  // A '%' followed by an operand is the modulo operator.
  CHECK(int_of("10%3") == 1);
  CHECK(int_of("10 % 3") == 1);
  CHECK(int_of("a%b") == 1);
  CHECK(real_of("50% + 1") == 1.5);
  // The largest literal is 2^64-1; it wraps to int64 -1 like an all-ones 64-bit signal.
  CHECK(int_of("0xffff_ffff_ffff_ffff") == -1);
  CHECK(int_of("18446744073709551615") == -1);
}

TEST_CASE("precedence and associativity", "[expr][parse]") {
  CHECK(int_of("2 + 3 * 4") == 14);
  CHECK(int_of("(2 + 3) * 4") == 20);
  CHECK(int_of("10 - 3 - 2") == 5);    // left-associative
  CHECK(real_of("8 / 4 / 2") == 1.0);  // left-associative, and '/' is always real
  CHECK(int_of("17 % 5 * 2") == 4);
  CHECK(int_of("-2 * 3") == -6);
  CHECK(int_of("--5") == 5);
  CHECK(int_of("2 - -3") == 5);
  CHECK(int_of("1 + 2 < 4") == 1);    // arithmetic binds tighter than comparison
  CHECK(int_of("!c && a") == 1);      // '!' binds tighter than '&&'
  CHECK(int_of("!a < b") == 1);       // ...but looser than comparison: !(10 < 3)
  CHECK(int_of("c || a && c") == 0);  // '&&' binds tighter than '||'
  CHECK(int_of("a || b && c") == 1);
  CHECK(int_of("not c and a or c") == 1);
  CHECK(int_of("a > 5 and b > 5") == 0);
  CHECK(int_of("a > 5 or b > 5") == 1);
  CHECK(int_of("not not a") == 1);
  CHECK(int_of("!!a") == 1);
  CHECK(int_of("tokens[2] + tokens[0]") == 4);
  CHECK(int_of("x") == 7);
  CHECK(int_of("  x\t") == 7);
  CHECK(int_of("a>=10&&b<=3&&x!=8&&a==10") == 1);
}

TEST_CASE("value kinds: int64 unless a fraction, '/' or a rate is involved", "[expr][parse]") {
  CHECK_FALSE(value_of("a + b * 2 - x % 4").is_real);
  CHECK(value_of("a / b").is_real);
  CHECK(real_of("a / b") == Approx(10.0 / 3.0));
  CHECK(real_of("a / 4") == 2.5);
  CHECK(real_of("a + 0.5") == 10.5);
  CHECK(real_of("a * 50%") == 5.0);
  CHECK(real_of("-0.25") == -0.25);
  CHECK(real_of("7.5 % 2") == 1.5);
  CHECK_FALSE(value_of("a / b > 3").is_real);  // comparisons and logic give 0/1 integers
  CHECK(int_of("a / b > 3") == 1);
  CHECK(int_of("1 == 1.0") == 1);
  CHECK(int_of("0.5 && a") == 1);
  CHECK(int_of("0.0 || c") == 0);
  // Division and modulo by zero yield 0, never a trap.
  CHECK(real_of("a / c") == 0.0);
  CHECK(real_of("a / 0.0") == 0.0);
  CHECK(int_of("a % c") == 0);
  CHECK(real_of("a % 0.0") == 0.0);
  CHECK(int_of("(0 - 0x7fff_ffff_ffff_ffff - 1) % -1") == 0);
  CHECK(int_of("-7 % 3") == -1);  // C++ truncation: the sign of the dividend
  // Integer arithmetic wraps modulo 2^64 instead of overflowing.
  CHECK(int_of("0x7fff_ffff_ffff_ffff + 1") == INT64_MIN);
  CHECK(int_of("0x8000_0000_0000_0000 * 2") == 0);
  CHECK(int_of("-(0 - 0x7fff_ffff_ffff_ffff - 1)") == INT64_MIN);
}

TEST_CASE("to_string prints the normalized expression", "[expr][parse]") {
  CHECK(normalized("a+b*x") == "a + b * x");
  CHECK(normalized("(a+b)*x") == "(a + b) * x");
  CHECK(normalized("a - (b - x)") == "a - (b - x)");
  CHECK(normalized("(a - b) - x") == "a - b - x");
  CHECK(normalized("not a and b or x") == "!a && b || x");
  CHECK(normalized("a or (b and x)") == "a || b && x");
  CHECK(normalized("(a or b) and x") == "(a || b) && x");
  CHECK(normalized("!a < b") == "!(a < b)");
  CHECK(normalized("(!a) < b") == "(!a) < b");
  CHECK(normalized("-(a+b)") == "-(a + b)");
  CHECK(normalized("- - a") == "--a");
  CHECK(normalized("!!a") == "!!a");
  CHECK(normalized("0x1F > 0b101 + 1_000") == "0x1f > 0b101 + 1000");
  CHECK(normalized("70%") == "0.7");
  CHECK(normalized("2.0") == "2.0");
  CHECK(normalized("rate( gemm.stall_dep ,1_024 )>70%") == "rate(gemm.stall_dep, 1024) > 0.7");
  CHECK(normalized("ratio(macs_useful,cycles,0x100)") == "ratio(macs_useful, cycles, 256)");
  CHECK(normalized("held(delta(cycles,1)==0, 100)") == "held(delta(cycles, 1) == 0, 100)");
  CHECK(normalized("count(rose(tokens[1]))>=3") == "count(rose(tokens[1])) >= 3");
  CHECK(normalized("fell(a) || changed(b)") == "fell(a) || changed(b)");
  CHECK(normalized("(a < b) == (b < x)") == "(a < b) == (b < x)");
}

TEST_CASE("to_string round-trips through compile", "[expr][parse]") {
  const char* cases[] = {
      "a+b*x-(a%b)/x",
      "!(a<b)&&-x>=-3||c",
      "(a == b) != (b == x)",
      "rate(gemm.stall_dep,1024)>0.7 and count(a>3)<5",
      "12.5% * a - 0.001",
      "held(!changed(load.state), 64)",
      "delta(tokens[3], 8) > tokens[2]",
      "-(-(-a))",
      "(((a)))",
      "a - (b + x) - (a * b)",
      "0.1 + 0.2",
  };
  for (const char* text : cases) {
    TableResolver res = TableResolver::standard();
    const std::string once = must_compile(text, res).to_string();
    const std::string twice = must_compile(once, res).to_string();
    INFO(text << " -> " << once);
    CHECK(once == twice);
  }
}

TEST_CASE("introspection: refs, stateful, windows, memory", "[expr][parse]") {
  TableResolver res = TableResolver::standard();
  Expr plain = must_compile("a + tokens[2] > a", res);
  CHECK_FALSE(plain.stateful());
  CHECK(plain.windows().empty());
  CHECK(plain.memory_bytes() == 0);
  REQUIRE(plain.refs().size() == 2);
  CHECK(plain.refs()[0].id == res.id("a"));
  CHECK(plain.refs()[1].id == res.id("tokens"));
  CHECK(plain.refs()[1].element == 2);

  Expr e = must_compile(
      "rate(gemm.stall_dep, 1024) > 0.7 && delta(gemm.stall_dep, 1024) > 0 && "
      "ratio(macs_useful, cycles, 16) > 0.5 && held(a > 0, 100) && rose(b) && fell(b)",
      res);
  CHECK(e.stateful());
  CHECK(e.windows() == std::vector<uint32_t>{1, 16, 100, 1024});
  // Rings per distinct (name, W): stall_dep/1024 (shared by rate and delta), macs_useful/16,
  // cycles/16, b/1 (shared by rose and fell).
  CHECK(e.memory_bytes() == 8 * (1025 + 17 + 17 + 2));
  CHECK(e.refs().size() == 5);
  CHECK(must_compile("count(a)", res).stateful());
  CHECK(must_compile("count(a)", res).memory_bytes() == 0);
}
