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

#include "replay/Framing.h"
#include "replay/PacketWriter.h"
#include "replay/packet.pb.h"

namespace bud::replay {

/// What a reader accepts (docs/packets.md, "Limits"): every allocation made while reading a
/// packet is bounded by these and by what the header declares, and each is checked before the
/// allocation (a zstd frame's content size is checked against its chunk list before it is
/// inflated). Defaults are the documented limits; tests lower them.
struct ReadLimits {
  /// Largest packet file read (the file is read whole, after its magic is checked).
  uint64_t max_file_bytes = 1ull << 30;
  /// Largest record payload.
  uint32_t max_record_bytes = kMaxPayloadBytes;
  /// Largest reassembled emulator state, host job or chunk batch. A packet's states are also
  /// bounded by its header: DRAM size + kStateOverheadBytes.
  uint64_t max_state_bytes = 1ull << 30;
  /// Most checkpoint records in one packet.
  uint32_t max_checkpoints = 1u << 16;
};
/// Bytes a saved state may hold beyond the DRAM size its header declares (Verilated model,
/// DRAM model bookkeeping, host driver; the serialised host job's commands).
inline constexpr uint64_t kStateOverheadBytes = 64ull << 20;

/// Where one record sits in the file.
struct RecordInfo {
  int kind = 0;
  uint64_t offset = 0;  ///< byte offset of the frame
  uint32_t payload_bytes = 0;
};

/// A decoded packet. Checkpoint states are reassembled on demand (checkpoint_state()).
struct Packet {
  std::string name;  ///< file name as given (messages print it with printable())
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
  /// A design packet's files (format 2.4; design/DesignPacket.h inflates and checks them).
  std::optional<pb::DesignFiles> design_files;
  std::vector<RecordInfo> records;
  SizeBreakdown breakdown{};
  /// Largest state assemble() builds: min(limits.max_state_bytes, DRAM size + overhead).
  uint64_t max_state_bytes = 0;
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
                                   std::string& error, const ReadLimits& limits = {});
/// Reads and decodes the file at `path`: a readable regular file (replay/InputFile.h) whose magic
/// is checked before more than 16 bytes are read and whose size is checked against the limit
/// before the rest is.
std::optional<Packet> read_packet(const std::string& path, std::string& error,
                                  const ReadLimits& limits = {});

}  // namespace bud::replay
