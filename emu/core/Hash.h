// bud's one 64-bit hash and its one CRC, both from maintained libraries: XXH3-64 (xxHash,
// Debian's libxxhash-dev) for digests, fingerprints, chunk ids and state checksums, and CRC32C
// (Castagnoli, Boost.CRC) for packet framing. Every value either produces is stored in packets or
// saved states: changing one is a packet-format major bump and a state-format bump
// (replay/packet.proto, docs/packets.md). Pinned vectors: tests/isa/Hash.test.cpp.
#pragma once

#include <cstdint>
#include <span>

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t by value: the streaming hasher never allocates
#include <xxhash.h>

namespace bud {

/// XXH3-64 of `bytes` with `seed` (XXH3_64bits_withSeed; seed 0 is plain XXH3_64bits).
uint64_t hash64(std::span<const uint8_t> bytes, uint64_t seed = 0);

/// XXH3-64 of the little-endian bytes of `words` with `seed`: combines already-hashed values.
uint64_t hash_words(std::span<const uint64_t> words, uint64_t seed = 0);

/// CRC32C (Castagnoli, reflected, as in RFC 3720 / iSCSI), continuing from `crc` (0 to start):
/// crc32c(b, crc32c(a)) == crc32c(a + b).
uint32_t crc32c(std::span<const uint8_t> bytes, uint32_t crc = 0);

/// Streaming XXH3-64: the same value as hash64() of everything added, in order. Holds its state
/// inline (no allocation).
class Hasher {
 public:
  explicit Hasher(uint64_t seed = 0);
  Hasher& add(std::span<const uint8_t> bytes);
  /// Adds the 8 little-endian bytes of `v`.
  Hasher& add_u64(uint64_t v);
  uint64_t digest() const;

 private:
  XXH3_state_t state_;
};

}  // namespace bud
