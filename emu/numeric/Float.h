// The NPU's floating-point arithmetic, bit for bit (docs/isa.md, "BF16 arithmetic"): bf16 x bf16
// products accumulated in fp32. The golden model, the direct reference and the RTL compute
// exactly this; values travel as bit patterns (bf16 in uint16_t, fp32 in uint32_t) so that no
// host floating-point mode can change a result.
//
// The rules, once:
//  - Rounding: round to nearest, ties to even, on every product, sum and conversion.
//  - Subnormals flush to zero: a subnormal operand is read as a zero of its sign (DAZ), and a
//    result whose magnitude after rounding is below the smallest normal (2^-126) is a zero of its
//    sign (FTZ).
//  - NaN: any NaN operand, Inf x 0 and Inf - Inf give the one canonical NaN (fp32 0x7fc00000,
//    bf16 0x7fc0); NaN payloads and signs are not propagated.
//  - Infinities: overflow rounds to Inf of the result's sign; Inf operands propagate.
//  - Zeros: x + (-x) = +0; (-0) + (-0) = -0; the sign of a product is the XOR of the signs.
#pragma once

#include <array>
#include <cstdint>

namespace bud::numeric {

inline constexpr uint32_t kFp32CanonicalNan = 0x7fc00000u;
inline constexpr uint16_t kBf16CanonicalNan = 0x7fc0u;
/// Products of the fixed-width dot_bf16 overload (the unit tests' lane).
inline constexpr int kDotWidth = 8;

/// The fp32 value of a bf16 (exact; DAZ and NaN canonicalisation applied).
uint32_t bf16_to_fp32(uint16_t x);

/// a x b as fp32. The product of two bf16 significands fits fp32's, so only overflow (Inf) and
/// underflow (flush to zero) change the exact value.
uint32_t mul_bf16(uint16_t a, uint16_t b);

/// a + b in fp32 under the rules above.
uint32_t add_fp32(uint32_t a, uint32_t b);

/// One output lane of one array cycle: the products a[i] x b[i] summed as a balanced tree,
/// ((p0+p1)+(p2+p3))+((p4+p5)+(p6+p7)), each + an add_fp32. The accumulator is added after.
uint32_t dot_bf16(const std::array<uint16_t, kDotWidth>& a,
                  const std::array<uint16_t, kDotWidth>& b);

/// One output lane of one bf16 MAC-array iteration of `width` products (a power of two: the
/// array's rows / 2, docs/isa.md "BF16 GEMM"): a[i] x b[i] summed as a balanced tree, level by
/// level, pairs (2i, 2i+1); width 1 is the product itself.
uint32_t dot_bf16(const uint16_t* a, const uint16_t* b, int width);

/// An int32 as fp32, rounding to nearest even (|x| > 2^24 loses low bits).
uint32_t int32_to_fp32(int32_t x);

/// fp32 to int8, rounding to nearest even and saturating to [-128, 127]; NaN gives 0. `saturated`
/// (if given) is set when the rounded value did not fit int8 or x was NaN or infinite.
int8_t fp32_to_int8(uint32_t x, bool* saturated = nullptr);

/// fp32 to bf16, rounding to nearest even (FTZ, canonical NaN, overflow to Inf).
uint16_t fp32_to_bf16(uint32_t x);

/// The bf16 nearest to a host float (for tests and data generation; same rules as
/// fp32_to_bf16).
uint16_t bf16_from_float(float f);
/// The host float of an fp32 bit pattern.
float fp32_as_float(uint32_t x);

}  // namespace bud::numeric
