// Every compile error: exact 1-based column, message and suggestions; plus a fuzz sweep that
// compile() never crashes and that whatever compiles also evaluates and round-trips.
#include <catch2/catch.hpp>
#include <random>

#include "tests/expr/ExprTestSupport.h"

using namespace bud::debugger;
using namespace bud::debugger::test;

namespace {

CompileError error_of(std::string_view text) {
  TableResolver res = TableResolver::standard();
  CompileResult r = compile(text, res);
  INFO("compiling: " << text);
  REQUIRE_FALSE(r.ok());
  return r.error;
}

// Checks column and that the message contains `needle`.
void check_error(std::string_view text, uint32_t column, std::string_view needle) {
  const CompileError e = error_of(text);
  INFO("text: " << text << "\nerror: " << e.to_string());
  CHECK(e.column == column);
  CHECK(e.message.find(needle) != std::string::npos);
}

// A random valid expression of the grammar (names from the standard table).
std::string random_expr(std::mt19937_64& rng, int depth) {
  static const char* leaves[] = {"a",    "b",   "x",    "tokens[1]", "gemm.stall_mem", "0",     "3",
                                 "0x10", "0b1", "0.25", "70%",       "1_000",          "cycles"};
  static const char* binops[] = {"+",  "-",  "*",  "/",  "%",  "<",   "<=", ">",
                                 ">=", "==", "!=", "&&", "||", "and", "or"};
  static const char* names[] = {"a", "b", "x", "tokens[3]", "load.state"};
  auto name = [&] { return std::string(names[rng() % 5]); };
  const uint64_t w = 1 + rng() % 20;
  switch (depth <= 0 ? 0 : rng() % 9) {
    case 0:
      return leaves[rng() % 13];
    case 1:
      return "(" + random_expr(rng, depth - 1) + ")";
    case 2:
      return (rng() % 2 ? "-" : "!") + random_expr(rng, 0);
    case 3:
      return "delta(" + name() + ", " + std::to_string(w) + ")";
    case 4:
      return "rate(" + name() + "," + std::to_string(w) + ")";
    case 5:
      return "ratio(" + name() + ", " + name() + ", " + std::to_string(w) + ")";
    case 6:
      return std::string(rng() % 2 ? "rose(" : "changed(") + name() + ")";
    case 7:
      return rng() % 2 ? "count(" + random_expr(rng, depth - 1) + ")"
                       : "held(" + random_expr(rng, depth - 1) + ", " + std::to_string(w) + ")";
    default:
      return "(" + random_expr(rng, depth - 1) + " " + binops[rng() % 15] + " " +
             random_expr(rng, depth - 1) + ")";
  }
}

}  // namespace

TEST_CASE("unknown names come with ranked suggestions", "[expr][errors]") {
  CompileError e = error_of("gemm.stal_mem > 3");
  CHECK(e.column == 1);
  CHECK(e.message == "unknown name 'gemm.stal_mem'");
  REQUIRE_FALSE(e.suggestions.empty());
  CHECK(e.suggestions.size() <= 3);
  CHECK(e.suggestions.front() == "gemm.stall_mem");
  CHECK(e.to_string().rfind("column 1: unknown name 'gemm.stal_mem' (did you mean gemm.stall_mem",
                            0) == 0);

  // A bare last component suggests the dotted names that end with it.
  e = error_of("x > 3 && stall_mem > 0");
  CHECK(e.column == 10);
  CHECK(e.suggestions == std::vector<std::string>{"gemm.stall_mem", "load.stall_mem"});

  // Transpositions count as one edit.
  e = error_of("laod.state == 2");
  CHECK(e.suggestions.front() == "load.state");

  // A name too far from everything gets no suggestion.
  e = error_of("zzzzzzzz");
  CHECK(e.suggestions.empty());
  CHECK(e.to_string() == "column 1: unknown name 'zzzzzzzz'");

  // A function name used without a call says how to call it.
  check_error("rate > 3", 1, "'rate' is a function; call it as rate(X, W)");
}

TEST_CASE("suggest_names ranks by distance, then dotted suffix, then prefix", "[expr][errors]") {
  const std::vector<std::string> names = {"load.stall_mem", "gemm.stall_mem",     "gemm.stall_dep",
                                          "gemm.active",    "pmu.gemm.stall_mem", "cycles"};
  CHECK(suggest_names("gemm.stal_mem", names) ==
        std::vector<std::string>{"gemm.stall_mem", "gemm.stall_dep", "gemm.active"});
  CHECK(suggest_names("cycle", names) == std::vector<std::string>{"cycles"});
  CHECK(suggest_names("top.gemm.stall_mem", names, 2) ==
        std::vector<std::string>{"gemm.stall_mem", "pmu.gemm.stall_mem"});
  CHECK(suggest_names("x", names).empty());
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("ab", "ba") == 1);
  CHECK(edit_distance("", "abc") == 3);
}

TEST_CASE("syntax errors point at the offending column", "[expr][errors]") {
  check_error("", 1, "empty expression");
  check_error("   \t", 1, "empty expression");
  check_error("x +", 4, "unexpected end of the expression");
  check_error("x > > 3", 5, "but found '>'");
  check_error("x $ 3", 3, "unexpected character '$'");
  check_error("x > 3 \x01", 7, "unexpected character '\\x01'");
  check_error("(x + 1 > 3", 11, "missing ')' to close the '(' at column 1");
  check_error("(x + 1 3)", 8, "missing ')' to close the '(' at column 1 (found '3')");
  check_error("x > 3 y", 7, "unexpected 'y' after the end of the expression");
  check_error("x > 3)", 6, "unmatched ')'");
  check_error("a < b < x", 7, "comparisons do not chain");
  check_error("x = 3", 3, "use '=='");
  check_error("a & b", 3, "use '&&'");
  check_error("a | b", 3, "use '||'");
  check_error("gemm. > 1", 5, "expected a name part after '.'");
  check_error("a + !b", 5, "put it in parentheses");
  check_error("a and", 6, "unexpected end");
  check_error("x > ,", 5, "but found ','");
}

TEST_CASE("malformed numbers", "[expr][errors]") {
  check_error("x > 0x", 5, "malformed number '0x'");
  check_error("x > 0xfg", 5, "malformed number '0xfg'");
  check_error("0b102", 1, "malformed number '0b102'");
  check_error("12abc", 1, "malformed number '12abc'");
  check_error("1__0", 1, "malformed number");
  check_error("1_", 1, "malformed number");
  check_error("1.", 1, "malformed number '1.'");
  check_error("1.2.3", 1, "malformed number");
  check_error("x > 18446744073709551616", 5, "does not fit in 64 bits");
  check_error("0x1_0000_0000_0000_0000", 1, "does not fit in 64 bits");
}

TEST_CASE("function errors: unknown, argument count, argument kind", "[expr][errors]") {
  CompileError e = error_of("x + rat(x, 8)");
  CHECK(e.column == 5);
  CHECK(e.message == "unknown function 'rat'");
  CHECK(e.suggestions == std::vector<std::string>{"rate", "ratio"});
  check_error("foo(x) > 1", 1, "unknown function 'foo'");
  check_error("x(1)", 1, "'x' is a signal, not a function");

  check_error("rate(x)", 1, "rate() takes 2 arguments, rate(X, W), but got 1");
  check_error("a + delta(x, 1, 2)", 5, "delta() takes 2 arguments");
  check_error("rose()", 1, "rose() takes 1 argument, rose(X), but got 0");
  check_error("ratio(a, b)", 1, "ratio() takes 3 arguments");
  check_error("held(a)", 1, "held() takes 2 arguments");

  check_error("rate(x + 1, 8)", 6, "first argument of rate() must be a signal or counter name");
  check_error("rose(1)", 6, "first argument of rose() must be a signal or counter name");
  check_error("ratio(a, 2, 8)", 10, "second argument of ratio() must be a signal");
  check_error("rate(x, 0)", 9, "window of rate() must be an integer constant from 1 to 16777216");
  check_error("rate(x, 16777217)", 9, "window of rate()");
  check_error("rate(x, 8.0)", 9, "window of rate()");
  check_error("rate(x, 50%)", 9, "window of rate()");
  check_error("rate(x, y)", 9, "window of rate()");
  check_error("rate(x, -8)", 9, "window of rate()");
  check_error("rate(x, 4 + 4)", 9, "window of rate()");
  check_error("held(a, 0)", 9, "cycle count N of held() must be an integer constant");
  check_error("rate(x, 8", 10, "missing ')' to close the '(' of rate() at column 5");
  check_error("rate(x 8)", 8, "expected ',' or ')' in the call of rate()");
  check_error("rate(gemm.stal_mem, 8)", 6, "unknown name 'gemm.stal_mem'");
  // Windows up to the maximum compile, but total history is capped.
  TableResolver res = TableResolver::standard();
  CHECK(compile("rate(x, 16777216) > 0", res).ok());
  const std::string big =
      "rate(x, 16777216) + rate(y, 16777216) + rate(a, 16777216) + "
      "rate(b, 16777216)";
  e = error_of(big);
  CHECK(e.column == big.rfind("rate") + 1);
  CHECK(e.message.find("history") != std::string::npos);
}

TEST_CASE("index errors", "[expr][errors]") {
  check_error("tokens[4] > 0", 8, "index 4 is out of range for 'tokens' (4 elements, 0..3)");
  check_error("tokens[0x1_0000_0000]", 8, "out of range");
  check_error("x[0] > 0", 2, "'x' is not an array and cannot be indexed");
  check_error("tokens > 0", 1, "'tokens' is an array of 4 elements; pick one, e.g. tokens[0]");
  check_error("delta(tokens, 4)", 7, "'tokens' is an array");
  check_error("tokens[x]", 8, "must be a non-negative integer constant");
  check_error("tokens[-1]", 8, "must be a non-negative integer constant");
  check_error("tokens[1.5]", 8, "must be a non-negative integer constant");
  check_error("tokens[1", 9, "missing ']' to close the '[' at column 7");
}

TEST_CASE("nesting depth is bounded", "[expr][errors]") {
  TableResolver res = TableResolver::standard();
  const std::string ok = std::string(200, '(') + "x" + std::string(200, ')');
  CHECK(compile(ok, res).ok());
  const std::string deep = std::string(100000, '(') + "x" + std::string(100000, ')');
  CompileError e = error_of(deep);
  CHECK(e.column == kMaxNesting + 1);
  CHECK(e.message.find("nested too deeply") != std::string::npos);
  check_error(std::string(100000, '!') + "x", kMaxNesting + 1, "nested too deeply");
  check_error(std::string(100000, '-') + "x", kMaxNesting + 1, "nested too deeply");
  std::string calls;
  for (int i = 0; i < 1000; ++i) calls += "count(";
  check_error(calls + "x", kMaxNesting * 6 + 6, "nested too deeply");  // the 257th '('
}

TEST_CASE("fuzz: compile never crashes, what compiles evaluates and round-trips",
          "[expr][errors][fuzz]") {
  const std::vector<std::string> pieces = {"a",
                                           "b",
                                           "x",
                                           "tokens",
                                           "[",
                                           "]",
                                           "[2]",
                                           "gemm.stall_mem",
                                           "(",
                                           ")",
                                           "(",
                                           ")",
                                           ",",
                                           "+",
                                           "-",
                                           "*",
                                           "/",
                                           "%",
                                           "<",
                                           "<=",
                                           ">",
                                           ">=",
                                           "==",
                                           "!=",
                                           "&&",
                                           "||",
                                           "!",
                                           "and",
                                           "or",
                                           "not",
                                           "0",
                                           "1",
                                           "7",
                                           "0x1f",
                                           "0b11",
                                           "1_000",
                                           "0.5",
                                           "70%",
                                           "16777216",
                                           "delta(",
                                           "rate(",
                                           "ratio(",
                                           "rose(",
                                           "fell(",
                                           "changed(",
                                           "count(",
                                           "held(",
                                           "foo(",
                                           " ",
                                           "  ",
                                           ".",
                                           "_",
                                           "=",
                                           "&",
                                           "|",
                                           "$",
                                           "\"",
                                           "\xff",
                                           "9999999999999999999999",
                                           "load.state"};
  std::mt19937_64 rng(12345);
  TableResolver res = TableResolver::standard();
  int compiled = 0;
  for (int iter = 0; iter < 6000; ++iter) {
    std::string text;
    const int n = static_cast<int>(rng() % 12);
    if (iter % 3 == 2) {
      // A valid expression, sometimes damaged by one random byte inserted or removed.
      text = random_expr(rng, 4);
      const size_t at = rng() % (text.size() + 1);
      if (rng() % 3 == 0)
        text.insert(text.begin() + at, static_cast<char>(rng() % 128));
      else if (rng() % 3 == 0 && at < text.size())
        text.erase(at, 1);
    } else {
      for (int i = 0; i < n; ++i) {
        if (iter % 3 == 0) {
          text.push_back(static_cast<char>(rng() % 256));  // raw bytes
        } else {
          text += pieces[rng() % pieces.size()];
        }
      }
    }
    CompileResult r = compile(text, res);
    INFO("text: '" << text << "'");
    if (!r.ok()) {
      CHECK(r.error.column >= 1);
      CHECK(r.error.column <= text.size() + 1);
      CHECK_FALSE(r.error.message.empty());
      continue;
    }
    ++compiled;
    ScriptedSampler s;
    s.fallback = rng();
    r.expr->arm(s);
    for (int c = 0; c < 5; ++c) {
      s.fallback = rng() % 4;
      (void)r.expr->eval(s);
    }
    const std::string once = r.expr->to_string();
    CompileResult again = compile(once, res);
    INFO("normalized: '" << once << "'");
    REQUIRE(again.ok());
    CHECK(again.expr->to_string() == once);
  }
  // The sweep is only meaningful if a fair share of inputs were valid expressions.
  CHECK(compiled > 1000);
}
