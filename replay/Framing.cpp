#include "replay/Framing.h"

#include <cstring>

namespace bud::replay {

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
