#include "emu/numeric/Float.h"

#include <algorithm>
#include <bit>

namespace bud::numeric {

namespace {

constexpr uint32_t kSign = 0x80000000u;
constexpr uint32_t kExpMask = 0x7f800000u;
constexpr uint32_t kFracMask = 0x007fffffu;
constexpr uint32_t kInf = 0x7f800000u;
constexpr int kBias = 127;

bool is_nan(uint32_t x) { return (x & kExpMask) == kExpMask && (x & kFracMask) != 0; }
bool is_inf(uint32_t x) { return (x & ~kSign) == kInf; }

/// An fp32 operand after DAZ: sign, biased exponent (0 = zero) and the 24-bit significand with
/// its hidden bit.
struct Unpacked {
  uint32_t sign;
  int exp;
  uint32_t sig;
};

Unpacked unpack(uint32_t x) {
  const uint32_t sign = x & kSign;
  const int exp = static_cast<int>((x & kExpMask) >> 23);
  if (exp == 0) return {sign, 0, 0};  // zero or subnormal: DAZ
  return {sign, exp, (x & kFracMask) | 0x00800000u};
}

/// Packs sign | value where value = sig x 2^(exp - kBias - 23 - extra) and sig carries `extra`
/// bits below fp32's 24: rounds to 24 bits (nearest even), then applies overflow and FTZ.
uint32_t round_pack(uint32_t sign, int exp, uint64_t sig, int extra) {
  if (sig == 0) return sign;
  // Normalise so that the leading one is at bit 23 + extra.
  const int top = 63 - std::countl_zero(sig);
  const int want = 23 + extra;
  if (top > want) {
    const int shift = top - want;
    const uint64_t lost = sig & ((uint64_t{1} << shift) - 1);
    sig >>= shift;
    if (lost) sig |= 1;  // sticky
    exp += shift;
  } else if (top < want) {
    sig <<= (want - top);
    exp -= (want - top);
  }
  // Round away the `extra` low bits: guard is the highest of them, the rest are sticky.
  if (extra > 0) {
    const uint64_t half = uint64_t{1} << (extra - 1);
    const uint64_t rem = sig & ((uint64_t{1} << extra) - 1);
    sig >>= extra;
    if (rem > half || (rem == half && (sig & 1))) ++sig;
    if (sig == (uint64_t{1} << 24)) {  // rounding carried out: 1.0 x 2^(exp+1)
      sig >>= 1;
      ++exp;
    }
  }
  if (exp >= 0xff) return sign | kInf;
  if (exp <= 0) return sign;  // below the smallest normal after rounding: FTZ
  return sign | (static_cast<uint32_t>(exp) << 23) | (static_cast<uint32_t>(sig) & kFracMask);
}

}  // namespace

uint32_t bf16_to_fp32(uint16_t x) {
  const uint32_t f = uint32_t{x} << 16;
  if (is_nan(f)) return kFp32CanonicalNan;
  if ((f & kExpMask) == 0) return f & kSign;  // DAZ
  return f;
}

uint32_t mul_bf16(uint16_t a16, uint16_t b16) {
  const uint32_t a = bf16_to_fp32(a16), b = bf16_to_fp32(b16);
  if (is_nan(a) || is_nan(b)) return kFp32CanonicalNan;
  const uint32_t sign = (a ^ b) & kSign;
  const Unpacked ua = unpack(a), ub = unpack(b);
  if (is_inf(a) || is_inf(b)) {
    if (ua.exp == 0 || ub.exp == 0) return kFp32CanonicalNan;  // Inf x 0
    return sign | kInf;
  }
  if (ua.exp == 0 || ub.exp == 0) return sign;
  // 24-bit x 24-bit significands (bf16's low 16 bits are zero): a 48-bit product whose value is
  // prod x 2^(ea + eb - 2 kBias - 46); as round_pack's (exp, sig, extra) with extra = 23.
  const uint64_t prod = uint64_t{ua.sig} * ub.sig;
  return round_pack(sign, ua.exp + ub.exp - kBias, prod, 23);
}

uint32_t add_fp32(uint32_t a, uint32_t b) {
  if (is_nan(a) || is_nan(b)) return kFp32CanonicalNan;
  if (is_inf(a) || is_inf(b)) {
    if (is_inf(a) && is_inf(b) && ((a ^ b) & kSign)) return kFp32CanonicalNan;  // Inf - Inf
    return is_inf(a) ? a : b;
  }
  Unpacked x = unpack(a), y = unpack(b);
  if (x.exp == 0 && y.exp == 0) return (x.sign & y.sign);  // -0 only for (-0) + (-0)
  if (x.exp == 0) return b & (kSign | kExpMask | kFracMask);
  if (y.exp == 0) return a;
  if (y.exp > x.exp || (y.exp == x.exp && y.sig > x.sig)) std::swap(x, y);
  // |x| >= |y|. Work with 3 extra bits (guard, round, sticky) below the 24-bit significands.
  constexpr int kExtra = 3;
  uint64_t sx = uint64_t{x.sig} << kExtra, sy = uint64_t{y.sig} << kExtra;
  const int shift = x.exp - y.exp;
  if (shift > 0) {
    if (shift >= 24 + kExtra) {
      sy = 1;  // only sticky survives
    } else {
      const uint64_t lost = sy & ((uint64_t{1} << shift) - 1);
      sy = (sy >> shift) | (lost ? 1 : 0);
    }
  }
  const bool subtract = (x.sign ^ y.sign) != 0;
  const uint64_t sum = subtract ? sx - sy : sx + sy;
  if (sum == 0) return 0;  // exact cancellation: +0 under round to nearest
  return round_pack(x.sign, x.exp, sum, kExtra);
}

uint32_t dot_bf16(const std::array<uint16_t, kDotWidth>& a,
                  const std::array<uint16_t, kDotWidth>& b) {
  return dot_bf16(a.data(), b.data(), kDotWidth);
}

uint32_t dot_bf16(const uint16_t* a, const uint16_t* b, int width) {
  std::array<uint32_t, 64> level;  // the widest array (64 rows) has 32 products per lane
  for (int i = 0; i < width; ++i) level[static_cast<size_t>(i)] = mul_bf16(a[i], b[i]);
  for (int w = width; w > 1; w /= 2)
    for (int i = 0; i < w / 2; ++i)
      level[static_cast<size_t>(i)] =
          add_fp32(level[static_cast<size_t>(2 * i)], level[static_cast<size_t>(2 * i + 1)]);
  return level[0];
}

uint32_t int32_to_fp32(int32_t x) {
  if (x == 0) return 0;
  const uint32_t sign = x < 0 ? kSign : 0;
  const uint64_t mag = x < 0 ? uint64_t{0} - static_cast<uint64_t>(static_cast<int64_t>(x))
                             : static_cast<uint64_t>(x);
  // round_pack's value is sig x 2^(exp - kBias - 23 - extra): sig = mag << 8 with 8 extra bits
  // and exp = kBias + 23 is mag itself.
  return round_pack(sign, kBias + 23, mag << 8, 8);
}

int8_t fp32_to_int8(uint32_t x, bool* saturated) {
  bool sat = false;
  int8_t out = 0;
  const Unpacked u = unpack(x);
  const int e = u.exp - kBias;  // value = sig x 2^(e - 23)
  if (is_nan(x)) {
    sat = true;
  } else if (is_inf(x) || e >= 8) {
    sat = true;
    out = u.sign ? int8_t{-128} : int8_t{127};
  } else if (u.exp != 0 && e >= -1) {
    const int shift = 23 - e;  // 16..24
    const uint32_t whole = u.sig >> shift, rem = u.sig & ((1u << shift) - 1),
                   half = 1u << (shift - 1);
    const uint32_t mag = whole + ((rem > half || (rem == half && (whole & 1))) ? 1 : 0);
    const int32_t v = u.sign ? -static_cast<int32_t>(mag) : static_cast<int32_t>(mag);
    sat = v > 127 || v < -128;
    out = static_cast<int8_t>(std::clamp(v, -128, 127));
  }
  if (saturated) *saturated = sat;
  return out;
}

uint16_t fp32_to_bf16(uint32_t x) {
  if (is_nan(x)) return kBf16CanonicalNan;
  const Unpacked u = unpack(x);
  if (is_inf(x)) return static_cast<uint16_t>((u.sign | kInf) >> 16);
  if (u.exp == 0) return static_cast<uint16_t>(u.sign >> 16);
  // Keep 8 significant bits: the 24-bit significand has 16 extra bits. round_pack rounds to 24
  // bits, so scale the question: round sig to 8 bits by hand (nearest even) and repack.
  uint32_t sig = u.sig >> 16;
  const uint32_t rem = u.sig & 0xffffu;
  int exp = u.exp;
  if (rem > 0x8000u || (rem == 0x8000u && (sig & 1))) ++sig;
  if (sig == 0x100u) {
    sig >>= 1;
    ++exp;
  }
  if (exp >= 0xff) return static_cast<uint16_t>((u.sign | kInf) >> 16);
  return static_cast<uint16_t>((u.sign >> 16) | (static_cast<uint32_t>(exp) << 7) | (sig & 0x7fu));
}

uint16_t bf16_from_float(float f) { return fp32_to_bf16(std::bit_cast<uint32_t>(f)); }

float fp32_as_float(uint32_t x) { return std::bit_cast<float>(x); }

}  // namespace bud::numeric
