#include "emu/numeric/Float.h"

#include <xmmintrin.h>

#include <algorithm>
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>

using namespace bud::numeric;

namespace {

// The host's SSE unit in the NPU's mode: round to nearest even, FTZ and DAZ. Restored on exit.
struct HostFtzDaz {
  unsigned saved = _mm_getcsr();
  HostFtzDaz() { _mm_setcsr((saved & ~0x6000u) | 0x8040u); }
  ~HostFtzDaz() { _mm_setcsr(saved); }
};

bool is_nan32(uint32_t x) { return (x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffffu) != 0; }

// The host's answer with NaNs made canonical (the NPU does not propagate payloads).
uint32_t host(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  return is_nan32(x) ? kFp32CanonicalNan : x;
}

// Operands that reach every path: zeros, subnormals, Inf, NaN, the extreme exponents, and
// ordinary values; exponents drawn from the whole range.
uint32_t interesting32(std::mt19937_64& rng) {
  const uint32_t sign = (rng() & 1) ? 0x80000000u : 0;
  switch (rng() % 10) {
    case 0: return sign;                                  // zero
    case 1: return sign | (rng() & 0x7fffffu);            // subnormal
    case 2: return sign | 0x7f800000u;                    // Inf
    case 3: return 0x7f800000u | 1 | (rng() & 0x7fffffu); // NaN
    case 4: return sign | (uint32_t(1 + rng() % 3) << 23) | (rng() & 0x7fffffu);   // tiny normal
    case 5: return sign | (uint32_t(252 + rng() % 3) << 23) | (rng() & 0x7fffffu); // huge
    default: return sign | (uint32_t(rng() % 256) << 23) | (rng() & 0x7fffffu);
  }
}
uint16_t interesting16(std::mt19937_64& rng) { return static_cast<uint16_t>(interesting32(rng) >> 16); }

}  // namespace

TEST_CASE("fp32 addition matches IEEE hardware in flush-to-zero mode", "[numeric][bf16]") {
  HostFtzDaz mode;
  std::mt19937_64 rng(2026);
  for (int i = 0; i < 2'000'000; ++i) {
    uint32_t a = interesting32(rng), b = interesting32(rng);
    if (i % 4 == 1) b = a ^ 0x80000000u ^ (rng() & 0xffu);  // near cancellation
    if (i % 4 == 2) b = (a & 0xff800000u) - ((rng() % 30) << 23) | (rng() & 0x7fffffu);
    const uint32_t want = host(fp32_as_float(a) + fp32_as_float(b));
    const uint32_t got = add_fp32(a, b);
    if (got != want) FAIL_CHECK(std::hex << a << " + " << b << ": " << got << ", host " << want);
    if (got != want) break;
  }
}

TEST_CASE("bf16 products match IEEE hardware in flush-to-zero mode", "[numeric][bf16]") {
  HostFtzDaz mode;
  std::mt19937_64 rng(16);
  // Every pair of a dense sample of bf16 patterns, plus random ones.
  for (int i = 0; i < 2'000'000; ++i) {
    const uint16_t a = interesting16(rng), b = interesting16(rng);
    const float fa = fp32_as_float(uint32_t{a} << 16), fb = fp32_as_float(uint32_t{b} << 16);
    const uint32_t want = host(fa * fb);
    const uint32_t got = mul_bf16(a, b);
    if (got != want) FAIL_CHECK(std::hex << a << " * " << b << ": " << got << ", host " << want);
    if (got != want) break;
  }
}

TEST_CASE("a dot product sums its products as a balanced tree", "[numeric][bf16]") {
  HostFtzDaz mode;
  std::mt19937_64 rng(8);
  for (int n = 0; n < 200'000; ++n) {
    std::array<uint16_t, kDotWidth> a, b;
    std::array<float, kDotWidth> p;
    for (int i = 0; i < kDotWidth; ++i) {
      // Mostly ordinary magnitudes so that the order of the sum matters (cancellation).
      a[i] = n % 8 ? bf16_from_float(std::ldexp(float(int(rng() % 2001) - 1000), int(rng() % 20) - 10))
                   : interesting16(rng);
      b[i] = n % 8 ? bf16_from_float(std::ldexp(float(int(rng() % 2001) - 1000), int(rng() % 20) - 10))
                   : interesting16(rng);
      p[i] = fp32_as_float(uint32_t{a[i]} << 16) * fp32_as_float(uint32_t{b[i]} << 16);
    }
    const float want = ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]));
    REQUIRE(dot_bf16(a, b) == host(want));
  }
  // The order is observable: a left-to-right sum gives another answer here.
  const std::array<uint16_t, kDotWidth> a = {bf16_from_float(1.0f), bf16_from_float(1.0f),
                                             bf16_from_float(1.0f), bf16_from_float(1.0f),
                                             bf16_from_float(1.0f), bf16_from_float(1.0f),
                                             bf16_from_float(1.0f), bf16_from_float(1.0f)};
  const std::array<uint16_t, kDotWidth> b = {bf16_from_float(16777216.0f), bf16_from_float(1.0f),
                                             bf16_from_float(1.0f), bf16_from_float(0.0f),
                                             bf16_from_float(-16777216.0f), bf16_from_float(0.0f),
                                             bf16_from_float(0.0f), bf16_from_float(0.0f)};
  // Tree: (2^24 + 1) rounds to 2^24 (a tie, to even), + (1 + 0) rounds to 2^24 again, then
  // + (-2^24 + 0) = 0: both ones are lost.
  CHECK(dot_bf16(a, b) == 0u);
  // With the ones in the same pair they add first and survive:
  const std::array<uint16_t, kDotWidth> b2 = {bf16_from_float(1.0f), bf16_from_float(1.0f),
                                              bf16_from_float(16777216.0f), bf16_from_float(0.0f),
                                              bf16_from_float(-16777216.0f), bf16_from_float(0.0f),
                                              bf16_from_float(0.0f), bf16_from_float(0.0f)};
  CHECK(fp32_as_float(dot_bf16(a, b2)) == 2.0f);
}

TEST_CASE("fp32 to bf16 rounds to nearest even", "[numeric][bf16]") {
  std::mt19937_64 rng(32);
  for (int i = 0; i < 2'000'000; ++i) {
    const uint32_t x = interesting32(rng);
    const uint16_t got = fp32_to_bf16(x);
    if (is_nan32(x)) {
      REQUIRE(got == kBf16CanonicalNan);
      continue;
    }
    if ((x & 0x7f800000u) == 0) {  // DAZ: a zero of the sign
      REQUIRE(got == static_cast<uint16_t>((x >> 16) & 0x8000u));
      continue;
    }
    // Independently: the two bf16 neighbours in double precision, the nearer one, ties to even.
    const uint16_t lo = static_cast<uint16_t>(x >> 16);
    const uint16_t hi = static_cast<uint16_t>(lo + 1);
    const double v = std::fabs(double(fp32_as_float(x)));
    const double dlo = v - std::fabs(double(fp32_as_float(uint32_t{lo} << 16)));
    // Past the largest bf16 the next step up is 2^128 (Inf when rounded to).
    const double up = (hi & 0x7fffu) == 0x7f80u ? std::ldexp(1.0, 128)
                                                : std::fabs(double(fp32_as_float(uint32_t{hi} << 16)));
    const double dhi = up - v;
    const uint16_t want = dlo < dhi ? lo : dhi < dlo ? hi : (lo & 1) ? hi : lo;
    REQUIRE(got == want);
  }
  CHECK(fp32_to_bf16(0x7f7fffffu) == 0x7f80u);  // FLT_MAX rounds up to Inf
  CHECK(fp32_to_bf16(0x3f808000u) == 0x3f80u);  // tie, even stays
  CHECK(fp32_to_bf16(0x3f818000u) == 0x3f82u);  // tie, odd rounds up
}

TEST_CASE("special values follow the documented rules", "[numeric][bf16]") {
  const uint16_t inf = 0x7f80, ninf = 0xff80, zero = 0, nzero = 0x8000, one = 0x3f80;
  const uint16_t sub = 0x0001, nan = 0x7fa1;
  CHECK(mul_bf16(inf, zero) == kFp32CanonicalNan);
  CHECK(mul_bf16(inf, sub) == kFp32CanonicalNan);  // a subnormal is a zero (DAZ)
  CHECK(mul_bf16(ninf, one) == 0xff800000u);
  CHECK(mul_bf16(nan, one) == kFp32CanonicalNan);
  CHECK(mul_bf16(nzero, one) == 0x80000000u);
  CHECK(add_fp32(0x7f800000u, 0xff800000u) == kFp32CanonicalNan);
  CHECK(add_fp32(0x80000000u, 0x80000000u) == 0x80000000u);
  CHECK(add_fp32(0x80000000u, 0x00000000u) == 0x00000000u);
  CHECK(add_fp32(0x3f800000u, 0xbf800000u) == 0x00000000u);
  // 1.5 x 2^-126 - 2^-126 = 2^-127 is subnormal: flushed to a zero of its sign.
  CHECK(add_fp32(0x00c00000u, 0x80800000u) == 0x00000000u);
  CHECK(add_fp32(0x80c00000u, 0x00800000u) == 0x80000000u);
  CHECK(add_fp32(0x00800000u, 0x80400000u) == 0x00800000u);  // a subnormal operand is a zero
  CHECK(mul_bf16(0x0080, 0x3f00) == 0u);          // 2^-126 x 0.5: underflow, FTZ
  CHECK(mul_bf16(0x7f00, 0x4000) == 0x7f800000u);  // 2^127 x 2: overflow to Inf
  CHECK(bf16_to_fp32(sub) == 0u);
}

TEST_CASE("int32 to fp32 and fp32 to int8 round to nearest even like the host", "[numeric][bf16]") {
  std::mt19937_64 rng(1617);
  for (int n = 0; n < 200'000; ++n) {
    const int32_t i = static_cast<int32_t>(rng() >> (rng() % 40));
    // The host converts int -> float under round to nearest even (the default mode).
    REQUIRE(int32_to_fp32(i) == std::bit_cast<uint32_t>(static_cast<float>(i)));
    const float f = std::ldexp(static_cast<float>(static_cast<int32_t>(rng() % 200'001) - 100'000),
                               -static_cast<int>(rng() % 12));
    bool sat = false;
    const int8_t q = fp32_to_int8(std::bit_cast<uint32_t>(f), &sat);
    const float r = std::nearbyint(f);  // ties to even in the default mode
    REQUIRE(sat == (r > 127 || r < -128));
    REQUIRE(q == static_cast<int8_t>(std::clamp(r, -128.0f, 127.0f)));
  }
  CHECK(int32_to_fp32(INT32_MIN) == 0xcf000000u);
  CHECK(int32_to_fp32(16777217) == 0x4b800000u);  // 2^24 + 1: the tie rounds to even
  bool sat = false;
  CHECK(fp32_to_int8(0x3f000000u, &sat) == 0);    // 0.5 -> 0 (even)
  CHECK(fp32_to_int8(0x3fc00000u, &sat) == 2);    // 1.5 -> 2
  CHECK(fp32_to_int8(0xc3010000u, &sat) == -128);  // -129 saturates
  CHECK(sat);
  CHECK(fp32_to_int8(0xc3000000u, &sat) == -128);  // -128 fits
  CHECK_FALSE(sat);
  CHECK(fp32_to_int8(kFp32CanonicalNan, &sat) == 0);
  CHECK(sat);
  CHECK(fp32_to_int8(0x7f800000u, &sat) == 127);
  CHECK(fp32_to_int8(0x00400000u, &sat) == 0);  // subnormal: zero (DAZ)
  CHECK_FALSE(sat);
}

TEST_CASE("a dot product of any power-of-two width is a balanced tree", "[numeric][bf16]") {
  std::mt19937_64 rng(1618);
  for (int width : {1, 2, 4, 8, 16}) {
    std::array<uint16_t, 16> a{}, b{};
    for (int i = 0; i < width; ++i) {
      a[static_cast<size_t>(i)] = bf16_from_float(static_cast<float>(int(rng() % 64) - 32) / 4);
      b[static_cast<size_t>(i)] = bf16_from_float(static_cast<float>(int(rng() % 64) - 32) / 8);
    }
    // Small dyadic values: every partial sum is exact, so any order gives the exact sum.
    float want = 0;
    for (int i = 0; i < width; ++i)
      want += fp32_as_float(bf16_to_fp32(a[static_cast<size_t>(i)])) *
              fp32_as_float(bf16_to_fp32(b[static_cast<size_t>(i)]));
    CHECK(fp32_as_float(dot_bf16(a.data(), b.data(), width)) == want);
  }
  // The order shows when sums round: the tree gives (2^24 + 1) + (1 - 2^24) = 2^24 - 16777215 =
  // 1 (2^24 + 1 rounds to 2^24, 1 - 2^24 is exact); left to right would give 0.
  const std::array<uint16_t, 4> a = {bf16_from_float(16777216.0f), bf16_from_float(1.0f),
                                     bf16_from_float(1.0f), bf16_from_float(-16777216.0f)};
  const std::array<uint16_t, 4> one = {bf16_from_float(1.0f), bf16_from_float(1.0f),
                                       bf16_from_float(1.0f), bf16_from_float(1.0f)};
  CHECK(fp32_as_float(dot_bf16(a.data(), one.data(), 4)) == 1.0f);
}
