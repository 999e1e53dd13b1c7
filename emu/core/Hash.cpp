// Wrappers over xxHash and Boost.CRC (emu/core/Hash.h). Built as part of bud::isa.
#include "emu/core/Hash.h"

#include <bit>
#include <boost/crc.hpp>

namespace bud {
namespace {

uint32_t reflect32(uint32_t x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0F0F0F0Fu) | ((x & 0x0F0F0F0Fu) << 4);
  return __builtin_bswap32(x);
}

}  // namespace

static_assert(std::endian::native == std::endian::little,
              "hash_words/add_u64 hash the native bytes of 64-bit words as little-endian");

uint64_t hash64(std::span<const uint8_t> bytes, uint64_t seed) {
  return XXH3_64bits_withSeed(bytes.data(), bytes.size(), seed);
}

uint64_t hash_words(std::span<const uint64_t> words, uint64_t seed) {
  return XXH3_64bits_withSeed(words.data(), words.size_bytes(), seed);
}

uint32_t crc32c(std::span<const uint8_t> bytes, uint32_t crc) {
  // crc_optimal takes its initial remainder un-reflected: continuing from a finished CRC means
  // undoing the final xor and the output reflection.
  using Crc32c = boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true>;
  Crc32c c(reflect32(crc ^ 0xFFFFFFFFu));
  c.process_bytes(bytes.data(), bytes.size());
  return c.checksum();
}

Hasher::Hasher(uint64_t seed) { XXH3_64bits_reset_withSeed(&state_, seed); }

Hasher& Hasher::add(std::span<const uint8_t> bytes) {
  XXH3_64bits_update(&state_, bytes.data(), bytes.size());
  return *this;
}

Hasher& Hasher::add_u64(uint64_t v) {
  XXH3_64bits_update(&state_, &v, sizeof v);
  return *this;
}

uint64_t Hasher::digest() const { return XXH3_64bits_digest(&state_); }

}  // namespace bud
