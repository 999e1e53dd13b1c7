#include "replay/PacketWriter.h"

#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include <cerrno>
#include <cstring>

#include "replay/Chunker.h"
#include "replay/Framing.h"

namespace bud::replay {

const char* record_kind_name(int kind) {
  switch (kind) {
    case pb::RECORD_HEADER:
      return "header";
    case pb::RECORD_CHUNKS:
      return "chunks";
    case pb::RECORD_CHECKPOINT:
      return "checkpoint";
    case pb::RECORD_WINDOW:
      return "window";
    case pb::RECORD_SYMPTOM:
      return "symptom";
    case pb::RECORD_ANNOTATION:
      return "annotation";
    case pb::RECORD_RESULT:
      return "result";
    case pb::RECORD_INDEX:
      return "index";
    case pb::RECORD_STIMULUS:
      return "stimulus";
    case pb::RECORD_INTERVENTION:
      return "intervention";
    case pb::RECORD_DESIGN_FILES:
      return "design-files";
    default:
      return "unknown";
  }
}

std::unique_ptr<PacketWriter> PacketWriter::create(const std::string& path, std::string& error) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    error = path + ": cannot create: " + std::strerror(errno);
    return nullptr;
  }
  std::unique_ptr<PacketWriter> w(new PacketWriter(fd, path));
  uint8_t header[kFileHeaderBytes];
  encode_file_header(header);
  if (!w->append(header, sizeof header)) {
    error = w->error();
    return nullptr;
  }
  return w;
}

PacketWriter::PacketWriter(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}

PacketWriter::~PacketWriter() {
  if (fd_ >= 0) ::close(fd_);
}

bool PacketWriter::append(const uint8_t* p, size_t n) {
  if (fd_ < 0) {
    if (error_.empty()) error_ = path_ + ": packet already closed";
    return false;
  }
  while (n > 0) {
    const ssize_t k = ::write(fd_, p, n);
    if (k < 0) {
      if (errno == EINTR) continue;
      error_ =
          path_ + ": write failed at byte " + std::to_string(offset_) + ": " + std::strerror(errno);
      return false;
    }
    p += k;
    n -= static_cast<size_t>(k);
    offset_ += static_cast<uint64_t>(k);
  }
  return true;
}

bool PacketWriter::encode(pb::RecordKind kind, const google::protobuf::MessageLite& message) {
  scratch_.clear();
  if (!message.SerializeToString(&scratch_)) {
    error_ = path_ + ": cannot serialise a " + record_kind_name(kind) + " record";
    return false;
  }
  const std::span<const uint8_t> payload(reinterpret_cast<const uint8_t*>(scratch_.data()),
                                         scratch_.size());
  uint8_t fh[kFrameHeaderBytes];
  encode_frame_header(static_cast<uint16_t>(kind), payload, fh);
  frame_.assign(fh, fh + kFrameHeaderBytes);
  frame_.insert(frame_.end(), payload.begin(), payload.end());
  return true;
}

bool PacketWriter::write(pb::RecordKind kind, const google::protobuf::MessageLite& message,
                         uint64_t cycle) {
  if (!encode(kind, message)) return false;
  // One write() per record: header and payload together.
  const uint64_t at = offset_;
  if (!append(frame_.data(), frame_.size())) return false;
  auto* e = index_.add_entries();
  e->set_kind(kind);
  e->set_offset(at);
  e->set_cycle(cycle);
  if (kind >= 0 && kind < static_cast<int>(breakdown_.size())) {
    breakdown_[kind].records += 1;
    breakdown_[kind].bytes += frame_.size();
  }
  return true;
}

bool PacketWriter::write_checkpoint(uint64_t cycle, std::span<const uint8_t> state,
                                    int zstd_level) {
  state_bytes_ += state.size();
  pb::Checkpoint cp;
  cp.set_cycle(cycle);
  cp.set_raw_size(state.size());
  cp.set_state_hash(hash64(state));
  if (!store_chunks(state, cycle, zstd_level, *cp.mutable_chunks())) return false;
  return write(pb::RECORD_CHECKPOINT, cp, cycle);
}

bool PacketWriter::write_stimulus(std::span<const uint8_t> job, int zstd_level) {
  pb::Stimulus s;
  s.set_raw_size(job.size());
  s.set_hash(hash64(job));
  if (!store_chunks(job, 0, zstd_level, *s.mutable_chunks())) return false;
  return write(pb::RECORD_STIMULUS, s, 0);
}

bool PacketWriter::store_chunks(std::span<const uint8_t> state, uint64_t cycle, int zstd_level,
                                google::protobuf::RepeatedField<uint64_t>& ids) {
  pb::Chunks fresh;
  std::vector<uint8_t> raw;
  for (const auto& c : split_chunks(state)) {
    const auto bytes = state.subspan(c.offset, c.size);
    const uint64_t id = hash64(bytes);
    ids.Add(id);
    if (!chunks_.insert(id).second) continue;
    fresh.add_ids(id);
    fresh.add_sizes(static_cast<uint32_t>(c.size));
    raw.insert(raw.end(), bytes.begin(), bytes.end());
  }
  if (fresh.ids_size() > 0) {
    new_chunk_bytes_ += raw.size();
    std::string z(ZSTD_compressBound(raw.size()), '\0');
    const size_t n = ZSTD_compress(z.data(), z.size(), raw.data(), raw.size(), zstd_level);
    if (ZSTD_isError(n)) {
      error_ = path_ + ": zstd: " + ZSTD_getErrorName(n);
      return false;
    }
    z.resize(n);
    fresh.set_data(std::move(z));
    if (!write(pb::RECORD_CHUNKS, fresh, cycle)) return false;
  }
  return true;
}

bool PacketWriter::finish() {
  if (fd_ < 0) return error_.empty();
  const uint64_t index_at = offset_;
  // The Index record and the trailer in one write(): the footer lands whole or not at all (and
  // a reader still recovers every record from a packet cut anywhere inside it).
  if (!encode(pb::RECORD_INDEX, index_)) return false;
  const size_t index_bytes = frame_.size();
  uint8_t trailer[kTrailerBytes];
  put_u64(trailer, index_at);
  std::memcpy(trailer + 8, kTrailerMagic, 8);
  frame_.insert(frame_.end(), trailer, trailer + kTrailerBytes);
  if (!append(frame_.data(), frame_.size())) return false;
  breakdown_[pb::RECORD_INDEX].records += 1;
  breakdown_[pb::RECORD_INDEX].bytes += index_bytes;
  if (::close(fd_) != 0) {
    fd_ = -1;
    error_ = path_ + ": close failed: " + std::strerror(errno);
    return false;
  }
  fd_ = -1;
  return true;
}

}  // namespace bud::replay
