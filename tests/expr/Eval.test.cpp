// Stateful functions against an independent brute-force computation over the stored per-cycle
// samples: every function must fire on exactly the cycles the definition says.
#include <catch2/catch.hpp>
#include <functional>
#include <random>

#include "tests/expr/ExprTestSupport.h"

using namespace bud::debugger;
using namespace bud::debugger::test;

namespace {

// Per-cycle scripts: two counters (monotone, random increments) and two small-valued signals.
struct Scripts {
  std::vector<uint64_t> c0, c1, s0, s1;
};

Scripts random_scripts(std::mt19937_64& rng, size_t cycles, double p0, double p1) {
  Scripts sc;
  std::bernoulli_distribution inc0(p0), inc1(p1);
  uint64_t a = rng() % 1000, b = rng() % 1000;
  for (size_t t = 0; t <= cycles; ++t) {
    a += inc0(rng) ? 1 : 0;
    b += inc1(rng) ? 1 + rng() % 3 : 0;
    sc.c0.push_back(a);
    sc.c1.push_back(b);
    sc.s0.push_back(rng() % 3 == 0 ? rng() % 4 : (t > 0 ? sc.s0.back() : 0));
    sc.s1.push_back(rng() % 5 == 0 ? 0 : 1);
  }
  return sc;
}

// Drives `text` from cycle `arm_at` to the end of the scripts and compares every cycle's value
// with brute(t) (exactly: both compute the same doubles from the same integers).
void check_against(const std::string& text, const Scripts& sc, size_t arm_at,
                   const std::function<Value(size_t)>& brute) {
  TableResolver res({{"c0"}, {"c1"}, {"s0"}, {"s1"}});
  Expr e = must_compile(text, res);
  ScriptedSampler s;
  s.set(0, sc.c0);
  s.set(1, sc.c1);
  s.set(2, sc.s0);
  s.set(3, sc.s1);
  s.cycle = arm_at;
  e.arm(s);
  size_t mismatches = 0;
  for (size_t t = arm_at + 1; t < sc.c0.size(); ++t) {
    s.cycle = t;
    const Value got = e.eval(s);
    const Value want = brute(t);
    const bool same = got.is_real == want.is_real &&
                      (got.is_real ? got.real == want.real : got.integer == want.integer) &&
                      got.truthy() == want.truthy();
    if (!same && mismatches++ < 3) {
      INFO(text << " armed at " << arm_at << ", cycle " << t << ": got "
                << (got.is_real ? got.real : static_cast<double>(got.integer)) << ", want "
                << (want.is_real ? want.real : static_cast<double>(want.integer)));
      CHECK(same);
    }
  }
  CHECK(mismatches == 0);
  CHECK(e.cycles_since_arm() == sc.c0.size() - 1 - arm_at);
}

Value I(int64_t v) { return Value::make_int(v); }
Value R(double v) { return Value::make_real(v); }

}  // namespace

TEST_CASE("stateful functions match brute force on random sequences", "[expr][eval]") {
  std::mt19937_64 rng(2024);
  const uint32_t windows[] = {1, 2, 3, 5, 8, 13, 17, 64, 100, 257};
  for (int round = 0; round < 6; ++round) {
    const size_t cycles = 400;
    const Scripts sc = random_scripts(rng, cycles, 0.2 + 0.12 * round, 0.5);
    const size_t a = round % 2 == 0 ? 0 : rng() % 150;  // arm at the start or mid-stream
    const auto& c0 = sc.c0;
    const auto& c1 = sc.c1;
    const auto& s0 = sc.s0;
    const auto& s1 = sc.s1;
    for (uint32_t w : windows) {
      const std::string W = std::to_string(w);
      // Before a full window has elapsed, the window covers the cycles since arming.
      auto covered = [&](size_t t) { return std::min<size_t>(t - a, w); };
      auto delta = [&](const std::vector<uint64_t>& x, size_t t) {
        return static_cast<int64_t>(x[t] - x[t - covered(t)]);
      };
      auto rate = [&](const std::vector<uint64_t>& x, size_t t) {
        return static_cast<double>(delta(x, t)) / static_cast<double>(covered(t));
      };
      check_against("delta(c0, " + W + ")", sc, a, [&](size_t t) { return I(delta(c0, t)); });
      check_against("rate(c0, " + W + ")", sc, a, [&](size_t t) { return R(rate(c0, t)); });
      check_against("rate(c0, " + W + ") > 0.7", sc, a,
                    [&](size_t t) { return I(rate(c0, t) > 0.7); });
      check_against("rate(c1, " + W + ") >= 150%", sc, a,
                    [&](size_t t) { return I(rate(c1, t) >= 1.5); });
      check_against("ratio(c0, c1, " + W + ")", sc, a, [&](size_t t) {
        const double den = static_cast<double>(delta(c1, t));
        return R(den == 0 ? 0.0 : static_cast<double>(delta(c0, t)) / den);
      });
      check_against("held(s1, " + W + ")", sc, a, [&](size_t t) {
        if (t - a < w) return I(0);
        for (size_t k = t - w + 1; k <= t; ++k)
          if (s1[k] == 0) return I(0);
        return I(1);
      });
      // "No progress for W cycles": the counter did not move on each of the last W cycles.
      check_against("held(delta(c0, 1) == 0, " + W + ")", sc, a, [&](size_t t) {
        if (t - a < w) return I(0);
        for (size_t k = t - w + 1; k <= t; ++k)
          if (c0[k] != c0[k - 1]) return I(0);
        return I(1);
      });
      check_against("delta(c0, " + W + ") - delta(c1, " + W + ") + c0 % 7", sc, a, [&](size_t t) {
        return I(delta(c0, t) - delta(c1, t) + static_cast<int64_t>(c0[t] % 7));
      });
    }
    check_against("rose(s0)", sc, a, [&](size_t t) { return I(s0[t - 1] == 0 && s0[t] != 0); });
    check_against("fell(s0)", sc, a, [&](size_t t) { return I(s0[t - 1] != 0 && s0[t] == 0); });
    check_against("changed(s0)", sc, a, [&](size_t t) { return I(s0[t - 1] != s0[t]); });
    check_against("count(s0 == 2)", sc, a, [&](size_t t) {
      int64_t n = 0;
      for (size_t k = a + 1; k <= t; ++k) n += s0[k] == 2;
      return I(n);
    });
    check_against("count(rose(s0)) >= 5", sc, a, [&](size_t t) {
      int64_t n = 0;
      for (size_t k = a + 1; k <= t; ++k) n += s0[k - 1] == 0 && s0[k] != 0;
      return I(n >= 5);
    });
    // No short-circuit: the stateful right operands see every cycle even while s1 is 0.
    check_against("s1 && count(changed(s0)) > 10", sc, a, [&](size_t t) {
      int64_t n = 0;
      for (size_t k = a + 1; k <= t; ++k) n += s0[k - 1] != s0[k];
      return I(s1[t] != 0 && n > 10);
    });
    check_against("count(1) >= 64 && rate(c0, 64) > 0.5", sc, a, [&](size_t t) {
      const size_t cov = std::min<size_t>(t - a, 64);
      const double r =
          static_cast<double>(static_cast<int64_t>(c0[t] - c0[t - cov])) / static_cast<double>(cov);
      return I(t - a >= 64 && r > 0.5);
    });
  }
}

TEST_CASE("re-arming restarts windows, counts and runs", "[expr][eval]") {
  TableResolver res({{"c"}, {"s"}});
  ScriptedSampler smp;
  std::vector<uint64_t> c, s;
  for (uint64_t t = 0; t < 100; ++t) {
    c.push_back(t * 2);  // +2 per cycle
    s.push_back(1);
  }
  smp.set(0, c);
  smp.set(1, s);
  Expr e = must_compile("delta(c, 10) + 1000 * count(s) + 1000000 * held(s, 5)", res);
  CHECK_FALSE(e.armed());
  smp.cycle = 0;
  e.arm(smp);
  for (smp.cycle = 1; smp.cycle <= 20; ++smp.cycle) (void)e.eval(smp);
  smp.cycle = 21;
  CHECK(e.eval(smp).integer == 20 + 1000 * 21 + 1000000);
  e.arm(smp);  // re-armed at cycle 21
  smp.cycle = 22;
  CHECK(e.eval(smp).integer == 2 + 1000 * 1 + 0);
  smp.cycle = 25;
  CHECK(e.eval(smp).integer == 8 + 1000 * 2 + 0);  // window covers cycles since arming: 21..25
  CHECK(e.cycles_since_arm() == 2);
}

TEST_CASE("eval arms on first use, each name is sampled once per cycle", "[expr][eval]") {
  TableResolver res({{"c"}});
  ScriptedSampler smp;
  smp.set(0, {5, 6, 8, 11});
  Expr e = must_compile("delta(c, 2) + rate(c, 2) + c + c + changed(c) + delta(c, 3)", res);
  smp.cycle = 0;
  const Value v0 = e.eval(smp);  // arms from this sample, then counts as the first cycle
  CHECK(e.armed());
  CHECK(v0.as_double() == 0 + 0 + 5 + 5 + 0 + 0);
  const uint64_t before = smp.samples;
  smp.cycle = 1;
  CHECK(e.eval(smp).as_double() == 1 + 1.0 / 2 + 6 + 6 + 1 + 1);
  CHECK(smp.samples - before == 1);
  smp.cycle = 2;
  CHECK(e.eval(smp).as_double() == 3 + 3.0 / 2 + 8 + 8 + 1 + 3);
}

TEST_CASE("an empty Expr evaluates to 0", "[expr][eval]") {
  Expr e;
  ScriptedSampler s;
  CHECK(e.eval(s).integer == 0);
  CHECK_FALSE(e.eval(s).truthy());
  CHECK(e.to_string().empty());
}

TEST_CASE("values wider than int64 and truthiness", "[expr][eval]") {
  TableResolver res({{"w"}});
  ScriptedSampler s;
  s.set(0, {0xffff'ffff'ffff'ffffULL});
  // An all-ones 64-bit value wraps to -1 in int64 arithmetic and equals the all-ones literal.
  CHECK(must_compile("w == 0xffff_ffff_ffff_ffff", res).eval(s).integer == 1);
  CHECK(must_compile("w + 1", res).eval(s).integer == 0);
  CHECK(must_compile("w < 0", res).eval(s).integer == 1);
  CHECK(Value::make_real(std::nan("")).truthy() == false);
  CHECK(Value::make_real(-0.5).truthy());
  CHECK_FALSE(Value::make_real(0.0).truthy());
}
