#include "replay/PacketReader.h"

#include <google/protobuf/stubs/logging.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>

#include "replay/Chunker.h"
#include "replay/Framing.h"
#include "replay/InputFile.h"

namespace bud::replay {

namespace {

// Messages name the packet in printable form (its name may hold any bytes).
std::string at(const std::string& name, uint64_t offset) {
  return printable(name) + ": byte " + std::to_string(offset) + ": ";
}

// The trailer a clean finish writes after the Index record at `index_offset`.
void expected_trailer(uint64_t index_offset, uint8_t (&out)[kTrailerBytes]) {
  put_u64(out, index_offset);
  std::memcpy(out + 8, kTrailerMagic, 8);
}

// Parses the records in [kFileHeaderBytes, end). `index_offset` is the trailer's pointer when the
// file ends in a trailer (then records must fill [.., end) exactly and the index must be at
// index_offset); without one, reading stops at the first incomplete record, and a complete Index
// record followed by a prefix of its trailer is a recording killed while finishing.
bool parse_records(std::span<const uint8_t> bytes, size_t end, std::optional<uint64_t> index_offset,
                   const ReadLimits& limits, Packet& p, std::string& error) {
  const uint8_t* d = bytes.data();
  const std::string& name = p.name;
  size_t off = kFileHeaderBytes;
  bool have_header = false;
  bool saw_index = false;
  while (off < end) {
    const size_t left = end - off;
    if (saw_index) {
      // Only the trailer may follow the index; a prefix of it when the recording was killed.
      uint8_t trailer[kTrailerBytes];
      expected_trailer(p.records.back().offset, trailer);
      if (!index_offset && left < kTrailerBytes && std::memcmp(d + off, trailer, left) == 0) {
        p.incomplete = "byte " + std::to_string(off) + ": trailer truncated (" +
                       std::to_string(left) + " of " + std::to_string(kTrailerBytes) +
                       " bytes; the recording was killed while finishing)";
        break;
      }
      error = at(name, off) + "data after the index record";
      return false;
    }
    if (left < kFrameHeaderBytes) {
      if (index_offset) {
        error = at(name, off) + "record frame truncated";
        return false;
      }
      p.incomplete = "byte " + std::to_string(off) + ": record frame truncated (" +
                     std::to_string(left) + " of " + std::to_string(kFrameHeaderBytes) + " bytes)";
      break;
    }
    const uint32_t len = get_u32(d + off);
    const uint16_t kind = get_u16(d + off + 4);
    const uint16_t flags = get_u16(d + off + 6);
    if (len > limits.max_record_bytes) {
      error = at(name, off) + "record length " + std::to_string(len) + " exceeds the " +
              std::to_string(limits.max_record_bytes) +
              "-byte limit on records: the packet is corrupt";
      return false;
    }
    if (len > left - kFrameHeaderBytes) {
      if (index_offset) {
        error = at(name, off) + "record length " + std::to_string(len) + " runs past the end (" +
                std::to_string(left - kFrameHeaderBytes) + " bytes left): the packet is corrupt";
        return false;
      }
      p.incomplete = "byte " + std::to_string(off) + ": record truncated (" +
                     std::to_string(left - kFrameHeaderBytes) + " of " + std::to_string(len) +
                     " payload bytes)";
      break;
    }
    const std::span<const uint8_t> payload(d + off + kFrameHeaderBytes, len);
    if (get_u32(d + off + 8) != crc32c(payload, crc32c({d + off, 8}))) {
      error = at(name, off) + "checksum mismatch in a " + record_kind_name(kind) + " record (" +
              std::to_string(len) + " bytes): the packet is corrupt";
      return false;
    }
    // Flags are reserved: format 1 writes 0, and a reader must not guess what others mean.
    if (flags != 0) {
      error = at(name, off + 6) + "record flags " + std::to_string(flags) +
              " are not defined in format " + std::to_string(kFormatMajor) + " (must be 0)";
      return false;
    }
    if (!have_header && kind != pb::RECORD_HEADER) {
      error = at(name, off) + "the first record is a " + record_kind_name(kind) +
              " record, expected the header";
      return false;
    }
    auto parse = [&](google::protobuf::MessageLite& m) {
      if (m.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) return true;
      error = at(name, off) + "a " + record_kind_name(kind) + " record does not decode";
      return false;
    };
    switch (kind) {
      case pb::RECORD_HEADER: {
        if (have_header) {
          error = at(name, off) + "a second header record";
          return false;
        }
        if (!parse(p.header)) return false;
        if (p.header.format_major() != p.major) {
          error = at(name, off) + "header says format " + std::to_string(p.header.format_major()) +
                  ", the file header " + std::to_string(p.major);
          return false;
        }
        // Every state of this run holds at most its DRAM plus bookkeeping.
        const uint64_t dram = p.header.memory().size_bytes();
        p.max_state_bytes = std::min(limits.max_state_bytes,
                                     std::min<uint64_t>(dram, 1ull << 40) + kStateOverheadBytes);
        have_header = true;
        break;
      }
      case pb::RECORD_CHUNKS: {
        pb::Chunks c;
        if (!parse(c)) return false;
        if (c.ids_size() != c.sizes_size()) {
          error = at(name, off) + "chunks record lists " + std::to_string(c.ids_size()) +
                  " ids but " + std::to_string(c.sizes_size()) + " sizes";
          return false;
        }
        Packet::ChunkBatch b;
        b.record_offset = off;
        uint64_t pos = 0;
        for (int i = 0; i < c.ids_size(); ++i) {
          if (c.sizes(i) == 0 || c.sizes(i) > kChunkMax) {
            error = at(name, off) + "chunk #" + std::to_string(i) + " of " +
                    std::to_string(c.sizes(i)) + " bytes (chunks are 1.." +
                    std::to_string(kChunkMax) + " bytes)";
            return false;
          }
          pos += c.sizes(i);
        }
        if (pos > p.max_state_bytes) {
          error = at(name, off) + "chunks record claims " + std::to_string(pos) +
                  " bytes, more than the " + std::to_string(p.max_state_bytes) +
                  "-byte limit on states of this packet";
          return false;
        }
        // The zstd frame must declare exactly the listed bytes: checked here, before anything
        // is inflated, so a small frame cannot claim more than its chunk list.
        const auto declared = ZSTD_getFrameContentSize(c.data().data(), c.data().size());
        const size_t frame = ZSTD_findFrameCompressedSize(c.data().data(), c.data().size());
        if (declared != pos || ZSTD_isError(frame) || frame != c.data().size()) {
          error = at(name, off) + "chunk data is not one zstd frame of the " + std::to_string(pos) +
                  " bytes its chunk list declares";
          return false;
        }
        pos = 0;
        for (int i = 0; i < c.ids_size(); ++i) {
          p.chunks.emplace(c.ids(i), Packet::ChunkLoc{p.chunk_batches.size(), pos, c.sizes(i)});
          pos += c.sizes(i);
        }
        b.raw_size = pos;
        b.zstd = std::move(*c.mutable_data());
        p.chunk_batches.push_back(std::move(b));
        break;
      }
      case pb::RECORD_CHECKPOINT: {
        pb::Checkpoint c;
        if (!parse(c)) return false;
        if (!p.checkpoints.empty() && c.cycle() <= p.checkpoints.back().cycle()) {
          error = at(name, off) + "checkpoint cycles are not ascending";
          return false;
        }
        if (p.checkpoints.size() >= limits.max_checkpoints) {
          error = at(name, off) + "more than " + std::to_string(limits.max_checkpoints) +
                  " checkpoints (the limit per packet)";
          return false;
        }
        p.checkpoints.push_back(std::move(c));
        break;
      }
      case pb::RECORD_WINDOW: {
        pb::Window w;
        if (!parse(w)) return false;
        if (w.end_cycle() < w.start_cycle() ||
            (!p.windows.empty() && w.start_cycle() != p.windows.back().end_cycle())) {
          error = at(name, off) + "window " + std::to_string(w.index()) +
                  " does not continue the previous one";
          return false;
        }
        if (w.index() != p.windows.size()) {
          error = at(name, off) + "window " + std::to_string(w.index()) + " is the " +
                  std::to_string(p.windows.size()) + "th window record";
          return false;
        }
        p.windows.push_back(std::move(w));
        break;
      }
      case pb::RECORD_SYMPTOM: {
        pb::Symptom s;
        if (!parse(s)) return false;
        p.symptom = std::move(s);
        break;
      }
      case pb::RECORD_ANNOTATION: {
        pb::Annotation a;
        if (!parse(a)) return false;
        p.annotations.push_back(std::move(a));
        break;
      }
      case pb::RECORD_INTERVENTION: {
        pb::Intervention iv;
        if (!parse(iv)) return false;
        if (!p.interventions.empty() && iv.cycle() < p.interventions.back().cycle()) {
          error = at(name, off) + "intervention at cycle " + std::to_string(iv.cycle()) +
                  " comes after one at cycle " + std::to_string(p.interventions.back().cycle());
          return false;
        }
        p.interventions.push_back(std::move(iv));
        break;
      }
      case pb::RECORD_RESULT: {
        pb::Result r;
        if (!parse(r)) return false;
        p.result = std::move(r);
        break;
      }
      case pb::RECORD_STIMULUS: {
        pb::Stimulus st;
        if (!parse(st)) return false;
        p.stimulus = std::move(st);
        break;
      }
      case pb::RECORD_DESIGN_FILES: {
        pb::DesignFiles f;
        if (!parse(f)) return false;
        if (p.design_files) {
          error = at(name, off) + "a second design-files record";
          return false;
        }
        p.design_files = std::move(f);
        break;
      }
      case pb::RECORD_INDEX: {
        pb::Index ix;
        if (!parse(ix)) return false;
        if (index_offset && *index_offset != off) {
          error = at(name, off) + "index record, but the trailer points at byte " +
                  std::to_string(*index_offset);
          return false;
        }
        saw_index = true;
        break;
      }
      default:
        break;  // a newer minor's record kind: skipped (minor versions are additive)
    }
    p.records.push_back({kind, off, len});
    if (kind < static_cast<int>(p.breakdown.size())) {
      p.breakdown[kind].records += 1;
      p.breakdown[kind].bytes += kFrameHeaderBytes + len;
    }
    off += kFrameHeaderBytes + len;
  }
  if (!have_header) {
    error = at(name, kFileHeaderBytes) + "no complete header record" +
            (p.incomplete.empty() ? "" : " (" + p.incomplete + ")");
    return false;
  }
  if (index_offset && !saw_index) {
    error = at(name, end) + "trailer points at byte " + std::to_string(*index_offset) +
            ", which is not the index record";
    return false;
  }
  p.complete = saw_index && index_offset.has_value();
  if (!p.complete && p.incomplete.empty())
    p.incomplete = "byte " + std::to_string(off) +
                   (saw_index ? ": ends after the index record, without the trailer (the "
                                "recording was killed while finishing)"
                              : ": ends without a footer");
  return true;
}

}  // namespace

uint64_t Packet::last_cycle() const {
  return windows.empty() ? header.start_cycle() : windows.back().end_cycle();
}

std::optional<size_t> Packet::checkpoint_at_or_before(uint64_t cycle) const {
  std::optional<size_t> best;
  for (size_t i = 0; i < checkpoints.size(); ++i)
    if (checkpoints[i].cycle() <= cycle) best = i;
  return best;
}

std::optional<std::vector<uint8_t>> Packet::checkpoint_state(size_t i, std::string& error) const {
  if (i >= checkpoints.size()) {
    error = printable(name) + ": no checkpoint #" + std::to_string(i);
    return std::nullopt;
  }
  uint64_t offset = 0;
  size_t seen = 0;
  for (const auto& r : records)
    if (r.kind == pb::RECORD_CHECKPOINT && seen++ == i) offset = r.offset;
  const auto& cp = checkpoints[i];
  auto s = assemble(cp.chunks(), cp.raw_size(), cp.state_hash(), offset, error);
  if (!s) error += " (checkpoint at cycle " + std::to_string(cp.cycle()) + ")";
  return s;
}

std::optional<std::vector<uint8_t>> Packet::stimulus_bytes(std::string& error) const {
  if (!stimulus) {
    error = printable(name) + ": the packet holds no stimulus record";
    return std::nullopt;
  }
  uint64_t offset = 0;
  for (const auto& r : records)
    if (r.kind == pb::RECORD_STIMULUS) offset = r.offset;
  return assemble(stimulus->chunks(), stimulus->raw_size(), stimulus->hash(), offset, error);
}

std::optional<std::vector<uint8_t>> Packet::assemble(
    const google::protobuf::RepeatedField<uint64_t>& ids, uint64_t raw_size, uint64_t hash,
    uint64_t offset, std::string& error) const {
  if (raw_size > max_state_bytes) {
    error = at(name, offset) + "record claims " + std::to_string(raw_size) +
            " bytes, more than the " + std::to_string(max_state_bytes) +
            "-byte limit on states of this packet";
    return std::nullopt;
  }
  if (major < kFormatMajor) {
    // Format 1 hashed chunks and states with a function this bud no longer has (XXH3 since 2.0):
    // its states cannot be verified, and its digests would not compare with a live run's.
    error = at(name, offset) + "recorded by an older format (" + std::to_string(major) + "." +
            std::to_string(minor) + "): its states and digests use the hash of format " +
            std::to_string(major) + ", this bud writes " + std::to_string(kFormatMajor) +
            ".x; its header, windows and counters still read (bud packet inspect, bud bisect " +
            "--good/--bad on two such packets), record it again to replay it";
    return std::nullopt;
  }
  // Resolve every chunk and check the sizes add up before allocating anything.
  struct Piece {
    const ChunkLoc* loc;
    uint64_t dest;
  };
  std::vector<Piece> pieces;
  pieces.reserve(static_cast<size_t>(ids.size()));
  uint64_t total = 0;
  for (const uint64_t id : ids) {
    auto it = chunks.find(id);
    if (it == chunks.end()) {
      error = at(name, offset) + "refers to a chunk the packet does not hold";
      return std::nullopt;
    }
    pieces.push_back({&it->second, total});
    total += it->second.size;
    if (total > raw_size) {
      error = at(name, offset) + "chunks exceed the recorded size";
      return std::nullopt;
    }
  }
  if (total != raw_size) {
    error = at(name, offset) + "chunks add up to " + std::to_string(total) + " bytes, the record " +
            "says " + std::to_string(raw_size);
    return std::nullopt;
  }
  // One batch inflated at a time: memory stays at the state plus its largest batch.
  std::stable_sort(pieces.begin(), pieces.end(),
                   [](const Piece& a, const Piece& b) { return a.loc->batch < b.loc->batch; });
  std::vector<uint8_t> state(raw_size);
  std::vector<uint8_t> raw;
  for (size_t k = 0; k < pieces.size();) {
    const ChunkBatch& b = chunk_batches[pieces[k].loc->batch];
    raw.resize(b.raw_size);  // checked against the limit and the frame header when parsed
    const size_t n = ZSTD_decompress(raw.data(), raw.size(), b.zstd.data(), b.zstd.size());
    if (ZSTD_isError(n) || n != b.raw_size) {
      error = at(name, b.record_offset) + "chunk data does not decompress (" +
              (ZSTD_isError(n) ? ZSTD_getErrorName(n) : "wrong size") + ")";
      return std::nullopt;
    }
    const size_t batch = pieces[k].loc->batch;
    for (; k < pieces.size() && pieces[k].loc->batch == batch; ++k)
      std::memcpy(state.data() + pieces[k].dest, raw.data() + pieces[k].loc->offset,
                  pieces[k].loc->size);
  }
  if (hash64(state) != hash) {
    error = at(name, offset) + "does not reassemble to the recorded bytes (hash mismatch)";
    return std::nullopt;
  }
  return state;
}

std::optional<Packet> parse_packet(std::span<const uint8_t> bytes, const std::string& name,
                                   std::string& error, const ReadLimits& limits) {
  // A record that does not decode (e.g. a string field that is not UTF-8) is reported here as
  // one line naming the byte offset; libprotobuf would also log its own line to stderr.
  static const bool quiet = [] {
    google::protobuf::SetLogHandler(nullptr);
    return true;
  }();
  (void)quiet;
  Packet p;
  p.name = name;
  p.file_bytes = bytes.size();
  const uint8_t* d = bytes.data();
  const size_t n = bytes.size();
  if (n == 0) {
    error = printable(name) + ": empty file (0 bytes): not a bud replay packet";
    return std::nullopt;
  }
  const size_t magic_len = std::min<size_t>(n, 8);
  if (std::memcmp(d, kFileMagic, magic_len) != 0) {
    error = at(name, 0) + "not a bud replay packet (bad magic)";
    return std::nullopt;
  }
  if (n > limits.max_file_bytes) {
    error = printable(name) + ": " + std::to_string(n) + " bytes, more than the " +
            std::to_string(limits.max_file_bytes) + "-byte limit on packets";
    return std::nullopt;
  }
  if (n < kFileHeaderBytes) {
    error = at(name, n) + "file header truncated (" + std::to_string(n) + " of " +
            std::to_string(kFileHeaderBytes) + " bytes)";
    return std::nullopt;
  }
  if (get_u32(d + 12) != crc32c({d, 12})) {
    error = at(name, 8) + "file header checksum mismatch: the packet is corrupt";
    return std::nullopt;
  }
  p.major = get_u16(d + 8);
  p.minor = get_u16(d + 10);
  if (p.major > kFormatMajor || p.major == 0) {
    error = at(name, 8) + "packet format " + std::to_string(p.major) + "." +
            std::to_string(p.minor) + " is not readable by this bud (reads " +
            std::to_string(kFormatMajor) + ".x)" +
            (p.major > kFormatMajor ? ": it was written by a newer bud; upgrade to read it" : "");
    return std::nullopt;
  }

  // A clean finish ends with a trailer pointing at the Index record. Bytes that only look like
  // one (a recording killed inside a record that happens to end in the magic) read as a packet
  // without footer if they do not hold together as a trailer.
  if (n >= kFileHeaderBytes + kFrameHeaderBytes + kTrailerBytes &&
      std::memcmp(d + n - 8, kTrailerMagic, 8) == 0) {
    Packet q = p;
    if (parse_records(bytes, n - kTrailerBytes, get_u64(d + n - kTrailerBytes), limits, q, error))
      return q;
    std::string ignored;
    if (parse_records(bytes, n, std::nullopt, limits, p, ignored)) return p;
    return std::nullopt;
  }
  if (!parse_records(bytes, n, std::nullopt, limits, p, error)) return std::nullopt;
  return p;
}

std::optional<Packet> read_packet(const std::string& path, std::string& error,
                                  const ReadLimits& limits) {
  auto file = InputFile::open(path, error);
  if (!file) return std::nullopt;
  const uint64_t size = file->size();
  // The magic first: a big file that is not a packet is refused after 16 bytes.
  std::vector<uint8_t> bytes(std::min<uint64_t>(size, kFileHeaderBytes));
  if (!file->read_at(0, bytes, error)) return std::nullopt;
  if (size <= kFileHeaderBytes || std::memcmp(bytes.data(), kFileMagic, 8) != 0)
    return parse_packet(bytes, path, error, limits);
  if (size > limits.max_file_bytes) {
    error = file->name() + ": " + std::to_string(size) + " bytes, more than the " +
            std::to_string(limits.max_file_bytes) + "-byte limit on packets";
    return std::nullopt;
  }
  bytes.resize(size);
  if (!file->read_at(kFileHeaderBytes, std::span<uint8_t>(bytes).subspan(kFileHeaderBytes), error))
    return std::nullopt;
  return parse_packet(bytes, path, error, limits);
}

}  // namespace bud::replay
