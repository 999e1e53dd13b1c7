// The RTL's floating-point functions (rtl/npu_fp_pkg.sv) against the golden model's
// (emu/numeric), bit for bit, on operands biased to every special case.
#include <catch2/catch.hpp>
#include <random>

#include "Vfp_unit_top.h"
#include "emu/numeric/Float.h"
#include "verilated.h"

using namespace bud::numeric;

namespace {

uint32_t operand32(std::mt19937_64& rng) {
  const uint32_t sign = (rng() & 1) ? 0x80000000u : 0;
  switch (rng() % 8) {
    case 0: return sign;
    case 1: return sign | (rng() & 0x7fffffu);                 // subnormal
    case 2: return sign | 0x7f800000u;                         // Inf
    case 3: return 0x7f800000u | 1 | (rng() & 0x7fffffu);      // NaN
    case 4: return sign | (uint32_t(1 + rng() % 3) << 23) | (rng() & 0x7fffffu);
    case 5: return sign | (uint32_t(252 + rng() % 3) << 23) | (rng() & 0x7fffffu);
    default: return sign | (uint32_t(rng() % 256) << 23) | (rng() & 0x7fffffu);
  }
}

// Mostly ordinary magnitudes within a few binades of each other (sums cancel and round), some
// special.
uint16_t operand16(std::mt19937_64& rng) {
  if (rng() % 8 == 0) return static_cast<uint16_t>(operand32(rng) >> 16);
  const uint32_t sign = (rng() & 1) ? 0x8000u : 0;
  return static_cast<uint16_t>(sign | (uint32_t(120 + rng() % 16) << 7) | (rng() & 0x7fu));
}

}  // namespace

TEST_CASE("the RTL's bf16 and fp32 arithmetic equals the golden model's bit for bit",
          "[numeric][bf16][rtl]") {
  VerilatedContext ctx;
  Vfp_unit_top top(&ctx);
  std::mt19937_64 rng(1616);
  uint64_t mismatches = 0;
  for (int n = 0; n < 300'000 && mismatches < 5; ++n) {
    std::array<uint16_t, kDotWidth> a, b;
    for (int i = 0; i < kDotWidth; ++i) {
      a[i] = operand16(rng);
      b[i] = operand16(rng);
      // Packed [7:0][15:0]: element i in bits 16i..16i+15.
      top.a[i / 2] = (top.a[i / 2] & ~(0xffffu << (16 * (i % 2)))) | (uint32_t{a[i]} << (16 * (i % 2)));
      top.b[i / 2] = (top.b[i / 2] & ~(0xffffu << (16 * (i % 2)))) | (uint32_t{b[i]} << (16 * (i % 2)));
    }
    const uint32_t acc = n % 3 ? dot_bf16(a, b) ^ 0x80000000u : operand32(rng);  // cancel often
    // Every fifth x near int8's range (exponents 2^-7 .. 2^12), where the int8 conversion rounds.
    const uint32_t x = n % 5 == 2 ? ((rng() & 1) ? 0x80000000u : 0u) |
                                        (uint32_t(120 + rng() % 20) << 23) | (rng() & 0x7fffffu)
                                  : operand32(rng);
    const uint32_t y = n % 4 == 1 ? x ^ 0x80000000u ^ (rng() & 0xffu) : operand32(rng);
    top.acc = acc;
    top.x = x;
    top.y = y;
    top.eval();
    const uint32_t want_dot = add_fp32(acc, dot_bf16(a, b));
    const uint32_t want_mul = mul_bf16(a[0], b[0]);
    const uint32_t want_add = add_fp32(x, y);
    const uint16_t want_bf16 = fp32_to_bf16(x);
    const uint32_t want_from_int = int32_to_fp32(static_cast<int32_t>(x));
    bool sat = false;
    const uint8_t q = static_cast<uint8_t>(fp32_to_int8(x, &sat));
    const uint32_t want_int8 = (sat ? 0x100u : 0u) | q;
    if (top.dot_acc != want_dot || top.mul_out != want_mul || top.add_out != want_add ||
        top.bf16_out != want_bf16 || top.from_int != want_from_int || top.to_int8 != want_int8) {
      ++mismatches;
      FAIL_CHECK(std::hex << "vector " << std::dec << n << std::hex << ": dot " << top.dot_acc
                          << " want " << want_dot << "; mul " << a[0] << "x" << b[0] << " = "
                          << top.mul_out << " want " << want_mul << "; add " << x << "+" << y
                          << " = " << top.add_out << " want " << want_add << "; bf16 "
                          << top.bf16_out << " want " << want_bf16 << "; int->fp32 "
                          << top.from_int << " want " << want_from_int << "; int8 "
                          << top.to_int8 << " want " << want_int8);
    }
  }
  CHECK(mismatches == 0);
}
