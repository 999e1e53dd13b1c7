// The byte layout of a replay packet around its protobuf records (docs/packets.md):
//
//   file header  16 bytes  magic "\x89BUDPKT\n", u16 major, u16 minor, u32 CRC32C of bytes 0..11
//   record       12 bytes  u32 payload length, u16 kind, u16 flags (0), u32 CRC32C of the first
//                          8 frame bytes followed by the payload; then the payload
//   ...
//   trailer      16 bytes  u64 byte offset of the Index record, magic "BUDPKEND"
//
// All integers are little-endian. A recording that was killed leaves every complete record
// readable; the trailer is only written by a clean finish.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "emu/core/Hash.h"

namespace bud::replay {

/// Packet format version. Bump the major on any incompatible change (framing, chunking, the
/// meaning of any field); the minor for additive changes only (docs/packets.md).
/// 2.0: XXH3-64 chunk ids, state hashes and digests; counter names in the Header; Intervention
/// records (changes made from outside the design, applied again by replay).
inline constexpr uint16_t kFormatMajor = 2;
inline constexpr uint16_t kFormatMinor = 4;  // 2.1: Header.thermal; 2.2: WorkloadSpec.precision;
// 2.3: Symptom STAGE_MISMATCH (prefixes), WorkloadSpec.onnx_model; 2.4: design packets
// (Header.design_run, DesignFiles records, Result.design)

inline constexpr size_t kFileHeaderBytes = 16;
inline constexpr size_t kFrameHeaderBytes = 12;
inline constexpr size_t kTrailerBytes = 16;
/// Largest payload a reader accepts (a sanity bound against corrupt lengths).
inline constexpr uint32_t kMaxPayloadBytes = 256u << 20;
inline constexpr char kFileMagic[8] = {'\x89', 'B', 'U', 'D', 'P', 'K', 'T', '\n'};
inline constexpr char kTrailerMagic[8] = {'B', 'U', 'D', 'P', 'K', 'E', 'N', 'D'};

/// CRC32C of frames and XXH3-64 of chunk ids and state hashes: bud's one CRC and one hash
/// (emu/core/Hash.h).
using bud::crc32c;
using bud::hash64;

void put_u16(uint8_t* p, uint16_t v);
void put_u32(uint8_t* p, uint32_t v);
void put_u64(uint8_t* p, uint64_t v);
uint16_t get_u16(const uint8_t* p);
uint32_t get_u32(const uint8_t* p);
uint64_t get_u64(const uint8_t* p);

/// The 16-byte file header for the current version.
void encode_file_header(uint8_t (&out)[kFileHeaderBytes]);
/// A 12-byte frame header for `payload` of `kind`.
void encode_frame_header(uint16_t kind, std::span<const uint8_t> payload,
                         uint8_t (&out)[kFrameHeaderBytes]);

}  // namespace bud::replay
