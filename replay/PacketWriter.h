// Appends framed records to a replay packet as a run goes (docs/packets.md). Every record is
// handed to the kernel with one write() as soon as it is complete, so a process killed at any
// point leaves a packet whose complete records all read back. finish() writes the Index and the
// trailer. Not used on the per-cycle path.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "replay/packet.pb.h"

namespace bud::replay {

/// Bytes and records written per record kind (index = pb::RecordKind).
struct KindTotals {
  uint64_t records = 0;
  uint64_t bytes = 0;  ///< frame + payload bytes
};
using SizeBreakdown = std::array<KindTotals, 12>;
/// "header", "chunks", "checkpoint", "window", "symptom", "annotation", "result", "index",
/// "stimulus", "intervention", "design-files".
const char* record_kind_name(int kind);

class PacketWriter {
 public:
  /// Creates (truncates) `path` and writes the file header. Nullptr and `error` on failure.
  static std::unique_ptr<PacketWriter> create(const std::string& path, std::string& error);
  ~PacketWriter();
  PacketWriter(const PacketWriter&) = delete;
  PacketWriter& operator=(const PacketWriter&) = delete;

  /// Appends one record. `cycle` goes into the index. False (see error()) if the write failed.
  bool write(pb::RecordKind kind, const google::protobuf::MessageLite& message, uint64_t cycle = 0);
  /// Appends an emulator state as a checkpoint: content-defined chunks not yet in the packet are
  /// written (zstd level `zstd_level`) in one Chunks record, then the Checkpoint record.
  bool write_checkpoint(uint64_t cycle, std::span<const uint8_t> state, int zstd_level);
  /// Appends the serialised host job the same way (chunks shared with checkpoints).
  bool write_stimulus(std::span<const uint8_t> job, int zstd_level);
  /// Writes the Index record and the trailer, and closes the file.
  bool finish();

  const std::string& error() const { return error_; }
  const std::string& path() const { return path_; }
  uint64_t bytes() const { return offset_; }
  const SizeBreakdown& breakdown() const { return breakdown_; }
  /// Raw (uncompressed) state bytes offered to write_checkpoint, and those stored as new chunks.
  uint64_t state_bytes() const { return state_bytes_; }
  uint64_t new_chunk_bytes() const { return new_chunk_bytes_; }

 private:
  PacketWriter(int fd, std::string path);
  /// Writes the chunks of `bytes` not yet in the packet; appends every chunk id to `ids`.
  bool store_chunks(std::span<const uint8_t> bytes, uint64_t cycle, int zstd_level,
                    google::protobuf::RepeatedField<uint64_t>& ids);
  bool append(const uint8_t* p, size_t n);
  /// Frames `message` as a `kind` record into frame_.
  bool encode(pb::RecordKind kind, const google::protobuf::MessageLite& message);

  int fd_ = -1;
  std::string path_;
  std::string error_;
  uint64_t offset_ = 0;
  pb::Index index_;
  SizeBreakdown breakdown_{};
  std::unordered_set<uint64_t> chunks_;  // ids already in the packet
  uint64_t state_bytes_ = 0;
  uint64_t new_chunk_bytes_ = 0;
  std::string scratch_;
  std::vector<uint8_t> frame_;
};

}  // namespace bud::replay
