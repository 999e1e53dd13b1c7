// Content-defined chunking of emulator states, so that the mostly-unchanged DRAM pages and model
// state of successive checkpoints are stored once per packet (docs/packets.md, "Checkpoints").
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace bud::replay {

/// Chunk size bounds in bytes. Boundaries depend only on content (a gear rolling hash), so an
/// insertion or a changed page moves at most the boundaries around it.
inline constexpr size_t kChunkMin = 1024;
inline constexpr size_t kChunkAvg = 4096;  ///< power of two
inline constexpr size_t kChunkMax = 32768;

/// One chunk of a buffer: [offset, offset + size).
struct ChunkSpan {
  size_t offset = 0;
  size_t size = 0;
};

/// Splits `bytes` into content-defined chunks covering it exactly, in order.
std::vector<ChunkSpan> split_chunks(std::span<const uint8_t> bytes);

}  // namespace bud::replay
