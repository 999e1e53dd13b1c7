// bud's one 64-bit hash (XXH3-64, xxHash) and its CRC32C (Boost.CRC) against published vectors.
// Their values are stored in packets and saved states: a change fails here first.
#include "emu/core/Hash.h"

#include <catch2/catch.hpp>
#include <string_view>
#include <vector>

namespace {

// Views a string literal (static storage: the span never dangles).
std::span<const uint8_t> bytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

}  // namespace

TEST_CASE("CRC32C matches the RFC 3720 vectors", "[isa][hash]") {
  CHECK(bud::crc32c(bytes("123456789")) == 0xE3069283u);  // the CRC catalogue check value
  // RFC 3720 appendix B.4: 32 zeros, 32 x 0xFF, 0x00..0x1F, 0x1F..0x00.
  std::vector<uint8_t> zeros(32, 0), ones(32, 0xFF), up(32), down(32);
  for (int i = 0; i < 32; ++i)
    up[i] = static_cast<uint8_t>(i), down[i] = static_cast<uint8_t>(31 - i);
  CHECK(bud::crc32c(zeros) == 0x8A9136AAu);
  CHECK(bud::crc32c(ones) == 0x62A8AB43u);
  CHECK(bud::crc32c(up) == 0x46DD794Eu);
  CHECK(bud::crc32c(down) == 0x113FDB5Cu);
  CHECK(bud::crc32c({}) == 0u);
}

TEST_CASE("CRC32C continues from a previous value", "[isa][hash]") {
  const auto b = bytes("123456789");
  for (size_t cut = 0; cut <= b.size(); ++cut)
    CHECK(bud::crc32c(b.subspan(cut), bud::crc32c(b.subspan(0, cut))) == 0xE3069283u);
}

TEST_CASE("hash64 is XXH3-64", "[isa][hash]") {
  CHECK(bud::hash64({}) == 0x2D06800538D394C2ull);  // XXH3_64bits of the empty input
  CHECK(bud::hash64(bytes("abc")) == 0x78AF5F94892F3950ull);
  CHECK(bud::hash64(bytes("123456789")) == 0x72DCB18B67A17DFFull);
  // Against the library called directly, at every length class XXH3 has (0, 1-3, 4-8, 9-16,
  // 17-128, 129-240, long).
  std::vector<uint8_t> data(5000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 131 + 7);
  for (size_t n : {0, 1, 3, 4, 8, 9, 16, 17, 128, 129, 240, 241, 1024, 5000}) {
    INFO(n);
    CHECK(bud::hash64(std::span(data).first(n)) == XXH3_64bits(data.data(), n));
    CHECK(bud::hash64(std::span(data).first(n), 42) == XXH3_64bits_withSeed(data.data(), n, 42));
  }
}

TEST_CASE("the streaming hasher equals the one-shot hash", "[isa][hash]") {
  std::vector<uint8_t> data(3000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i ^ (i >> 3));
  bud::Hasher h(7);
  h.add(std::span(data).first(1000)).add(std::span(data).subspan(1000));
  CHECK(h.digest() == bud::hash64(data, 7));
  const uint64_t words[] = {1, 2, 0xFFFFFFFFFFFFFFFFull};
  bud::Hasher w;
  for (uint64_t v : words) w.add_u64(v);
  CHECK(w.digest() == bud::hash_words(words));
}
