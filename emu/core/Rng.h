// bud's only source of randomness: a seeded, platform-independent generator (xoshiro256**
// seeded through splitmix64). std:: distributions are implementation-defined, so bud never uses
// them for anything that affects simulation, data or packets.
#pragma once

#include <array>
#include <cstdint>

namespace bud::emu {

/// Deterministic PRNG. Same seed, same sequence on every platform and compiler.
class Rng {
 public:
  explicit Rng(uint64_t seed = 0) { reseed(seed); }

  void reseed(uint64_t seed) {
    uint64_t x = seed;
    for (auto& w : s_) w = splitmix64(x);
  }
  /// Next 64 random bits.
  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  /// Uniform integer in [0, bound) (bound > 0), by 128-bit multiply (Lemire, without rejection:
  /// the bias is below 2^-32 for the bounds bud uses and the result stays deterministic).
  uint64_t below(uint64_t bound) {
    __extension__ using u128 = unsigned __int128;  // GCC/Clang; silences -Wpedantic
    return static_cast<uint64_t>((static_cast<u128>(next()) * bound) >> 64);
  }
  /// Uniform integer in [lo, hi].
  int64_t range(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(below(static_cast<uint64_t>(hi - lo) + 1));
  }
  /// True with probability num/den.
  bool chance(uint32_t num, uint32_t den) { return below(den) < num; }

  /// The full state, for save/restore.
  const std::array<uint64_t, 4>& state() const { return s_; }
  void set_state(const std::array<uint64_t, 4>& s) { s_ = s; }

  static uint64_t splitmix64(uint64_t& x) {
    uint64_t z = (x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::array<uint64_t, 4> s_{};
};

}  // namespace bud::emu
