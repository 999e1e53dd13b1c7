// Reads and validates a replay packet (docs/packets.md). Every failure is one line naming the
// file and the byte offset at fault; nothing here throws or aborts on any input (fuzzed by
// tests/replay/fuzz). A packet without its footer (the recording was killed) reads up to its
// last complete record and says so in `incomplete`.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "replay/PacketWriter.h"
#include "replay/packet.pb.h"

namespace bud::replay {

/// Where one record sits in the file.
struct RecordInfo {
  int kind = 0;
  uint64_t offset = 0;  ///< byte offset of the frame
  uint32_t payload_bytes = 0;
};

/// A decoded packet. Checkpoint states are reassembled on demand (checkpoint_state()).
struct Packet {
  std::string name;  ///< file name used in messages
  uint16_t major = 0, minor = 0;
  uint64_t file_bytes = 0;
  pb::Header header;
  std::vector<pb::Checkpoint> checkpoints;  ///< ascending cycle
  std::vector<pb::Window> windows;          ///< ascending index
  std::optional<pb::Symptom> symptom;
  std::optional<pb::Result> result;
  std::optional<pb::Stimulus> stimulus;
  std::vector<pb::Annotation> annotations;
  std::vector<pb::Intervention> interventions;  ///< in file (= cycle) order
  std::vector<RecordInfo> records;
  SizeBreakdown breakdown{};
  /// Footer (Index + trailer) present: the recording finished cleanly.
  bool complete = false;
  /// For an incomplete packet: why reading stopped ("byte N: ..."), or "no footer".
  std::string incomplete;

  /// Cycle range covered by windows: [header.start_cycle, last window's end_cycle].
  uint64_t last_cycle() const;
  /// Index into `checkpoints` of the latest checkpoint at or before `cycle` (nullopt: none).
  std::optional<size_t> checkpoint_at_or_before(uint64_t cycle) const;
  /// Reassembles checkpoint `i`'s emulator state. nullopt and `error` (naming the byte offset of
  /// the record at fault) if a chunk is missing or corrupt.
  std::optional<std::vector<uint8_t>> checkpoint_state(size_t i, std::string& error) const;
  /// Reassembles the serialised host job of the Stimulus record.
  std::optional<std::vector<uint8_t>> stimulus_bytes(std::string& error) const;
  /// Concatenates `ids` (the record at `offset` refers to them) and checks size and hash.
  std::optional<std::vector<uint8_t>> assemble(const google::protobuf::RepeatedField<uint64_t>& ids,
                                               uint64_t raw_size, uint64_t hash, uint64_t offset,
                                               std::string& error) const;

  struct ChunkLoc {
    size_t batch = 0;   ///< index into chunk_batches
    size_t offset = 0;  ///< within the batch's decompressed bytes
    uint32_t size = 0;
  };
  struct ChunkBatch {
    uint64_t record_offset = 0;
    uint64_t raw_size = 0;
    std::string zstd;
  };
  std::vector<ChunkBatch> chunk_batches;
  std::unordered_map<uint64_t, ChunkLoc> chunks;
};

/// Decodes a packet held in memory. `name` is used in messages.
std::optional<Packet> parse_packet(std::span<const uint8_t> bytes, const std::string& name,
                                   std::string& error);
/// Reads and decodes the file at `path`.
std::optional<Packet> read_packet(const std::string& path, std::string& error);

}  // namespace bud::replay
