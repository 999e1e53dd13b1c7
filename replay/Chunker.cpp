#include "replay/Chunker.h"

#include <array>

namespace bud::replay {

namespace {

constexpr std::array<uint64_t, 256> make_gear() {
  // splitmix64 of the index: fixed forever (changing it changes chunk ids: a major version bump).
  std::array<uint64_t, 256> g{};
  uint64_t s = 0x5EED0B0DBEEFull;
  for (auto& v : g) {
    s += 0x9E3779B97F4A7C15ull;
    uint64_t z = s;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    v = z ^ (z >> 31);
  }
  return g;
}
constexpr auto kGear = make_gear();
// Boundary when the top bits of the rolling hash are zero: log2(kChunkAvg) bits.
constexpr uint64_t kMask = ~((~0ull) >> 12);
static_assert(kChunkAvg == 4096);

}  // namespace

std::vector<ChunkSpan> split_chunks(std::span<const uint8_t> bytes) {
  std::vector<ChunkSpan> out;
  out.reserve(bytes.size() / kChunkAvg + 1);
  size_t start = 0;
  const size_t n = bytes.size();
  while (start < n) {
    const size_t left = n - start;
    if (left <= kChunkMin) {
      out.push_back({start, left});
      break;
    }
    const size_t limit = left < kChunkMax ? left : kChunkMax;
    uint64_t h = 0;
    size_t i = kChunkMin;
    // The hash only needs the last 64 bytes before a candidate boundary.
    for (size_t k = kChunkMin - 64; k < kChunkMin; ++k) h = (h << 1) + kGear[bytes[start + k]];
    size_t cut = limit;
    for (; i < limit; ++i) {
      h = (h << 1) + kGear[bytes[start + i]];
      if ((h & kMask) == 0) {
        cut = i + 1;
        break;
      }
    }
    out.push_back({start, cut});
    start += cut;
  }
  return out;
}

}  // namespace bud::replay
