#include "replay/Framing.h"

#include <array>
#include <cstring>

namespace bud::replay {

namespace {

constexpr std::array<uint32_t, 256> make_crc_table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    t[i] = c;
  }
  return t;
}
constexpr auto kCrcTable = make_crc_table();

inline uint64_t mix(uint64_t x) {
  x ^= x >> 32;
  x *= 0xD6E8FEB86659FD93ull;
  x ^= x >> 32;
  x *= 0xD6E8FEB86659FD93ull;
  x ^= x >> 32;
  return x;
}

}  // namespace

uint32_t crc32c(std::span<const uint8_t> bytes, uint32_t crc) {
  crc = ~crc;
  for (uint8_t b : bytes) crc = kCrcTable[(crc ^ b) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

uint64_t hash64(std::span<const uint8_t> bytes) {
  // Four independent lanes of multiply-rotate over 8-byte words keep it near memory speed.
  uint64_t h[4] = {0x9E3779B97F4A7C15ull, 0xC2B2AE3D27D4EB4Full, 0x165667B19E3779F9ull,
                   0x27D4EB2F165667C5ull};
  const uint8_t* p = bytes.data();
  size_t n = bytes.size();
  while (n >= 32) {
    for (int l = 0; l < 4; ++l) {
      uint64_t w;
      std::memcpy(&w, p + 8 * l, 8);
      h[l] = (h[l] ^ w) * 0x9FB21C651E98DF25ull;
      h[l] = (h[l] << 29) | (h[l] >> 35);
    }
    p += 32;
    n -= 32;
  }
  uint64_t tail = 0x2545F4914F6CDD1Dull ^ bytes.size();
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    tail = mix(tail ^ w);
    p += 8;
    n -= 8;
  }
  uint64_t last = 0;
  for (size_t i = 0; i < n; ++i) last |= uint64_t(p[i]) << (8 * i);
  tail = mix(tail ^ last ^ (uint64_t(n) << 56));
  return mix(h[0] ^ mix(h[1] + 1) ^ mix(h[2] + 2) ^ mix(h[3] + 3) ^ tail);
}

void put_u16(uint8_t* p, uint16_t v) {
  p[0] = uint8_t(v);
  p[1] = uint8_t(v >> 8);
}
void put_u32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i));
}
void put_u64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = uint8_t(v >> (8 * i));
}
uint16_t get_u16(const uint8_t* p) { return uint16_t(p[0] | (p[1] << 8)); }
uint32_t get_u32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t(p[i]) << (8 * i);
  return v;
}
uint64_t get_u64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(p[i]) << (8 * i);
  return v;
}

void encode_file_header(uint8_t (&out)[kFileHeaderBytes]) {
  std::memcpy(out, kFileMagic, 8);
  put_u16(out + 8, kFormatMajor);
  put_u16(out + 10, kFormatMinor);
  put_u32(out + 12, crc32c({out, 12}));
}

void encode_frame_header(uint16_t kind, std::span<const uint8_t> payload,
                         uint8_t (&out)[kFrameHeaderBytes]) {
  put_u32(out, static_cast<uint32_t>(payload.size()));
  put_u16(out + 4, kind);
  put_u16(out + 6, 0);
  put_u32(out + 8, crc32c(payload, crc32c({out, 8})));
}

}  // namespace bud::replay
