#include "replay/PacketReader.h"

#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>

#include "replay/Framing.h"

namespace bud::replay {

namespace {

// Largest state a checkpoint may claim (sanity bound against corrupt sizes).
constexpr uint64_t kMaxStateBytes = 1ull << 32;

std::string at(const std::string& name, uint64_t offset) {
  return name + ": byte " + std::to_string(offset) + ": ";
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
    error = name + ": no checkpoint #" + std::to_string(i);
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
    error = name + ": the packet holds no stimulus record";
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
  if (raw_size > kMaxStateBytes) {
    error = at(name, offset) + "record claims " + std::to_string(raw_size) + " bytes";
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
  std::vector<uint8_t> state;
  state.reserve(raw_size);
  std::unordered_map<size_t, std::vector<uint8_t>> cache;  // decompressed batches
  for (const uint64_t id : ids) {
    auto it = chunks.find(id);
    if (it == chunks.end()) {
      error = at(name, offset) + "refers to a chunk the packet does not hold";
      return std::nullopt;
    }
    const ChunkLoc& loc = it->second;
    const ChunkBatch& b = chunk_batches[loc.batch];
    auto c = cache.find(loc.batch);
    if (c == cache.end()) {
      // Trust no size before the zstd frame header agrees with it.
      const auto declared = ZSTD_getFrameContentSize(b.zstd.data(), b.zstd.size());
      if (declared != b.raw_size) {
        error = at(name, b.record_offset) + "chunk data size does not match its chunk list";
        return std::nullopt;
      }
      std::vector<uint8_t> raw(b.raw_size);
      const size_t n = ZSTD_decompress(raw.data(), raw.size(), b.zstd.data(), b.zstd.size());
      if (ZSTD_isError(n) || n != b.raw_size) {
        error = at(name, b.record_offset) + "chunk data does not decompress (" +
                (ZSTD_isError(n) ? ZSTD_getErrorName(n) : "wrong size") + ")";
        return std::nullopt;
      }
      c = cache.emplace(loc.batch, std::move(raw)).first;
    }
    if (state.size() + loc.size > raw_size) {
      error = at(name, offset) + "chunks exceed the recorded size";
      return std::nullopt;
    }
    state.insert(state.end(), c->second.begin() + loc.offset,
                 c->second.begin() + loc.offset + loc.size);
  }
  if (state.size() != raw_size || hash64(state) != hash) {
    error = at(name, offset) + "does not reassemble to the recorded bytes (hash mismatch)";
    return std::nullopt;
  }
  return state;
}

std::optional<Packet> parse_packet(std::span<const uint8_t> bytes, const std::string& name,
                                   std::string& error) {
  Packet p;
  p.name = name;
  p.file_bytes = bytes.size();
  const uint8_t* d = bytes.data();
  const size_t n = bytes.size();
  if (n == 0) {
    error = name + ": empty file (0 bytes): not a bud replay packet";
    return std::nullopt;
  }
  const size_t magic_len = std::min<size_t>(n, 8);
  if (std::memcmp(d, kFileMagic, magic_len) != 0) {
    error = at(name, 0) + "not a bud replay packet (bad magic)";
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

  // A clean finish ends with a trailer pointing at the Index record.
  size_t end = n;
  std::optional<uint64_t> index_offset;
  if (n >= kFileHeaderBytes + kFrameHeaderBytes + kTrailerBytes &&
      std::memcmp(d + n - 8, kTrailerMagic, 8) == 0) {
    index_offset = get_u64(d + n - kTrailerBytes);
    end = n - kTrailerBytes;
  }

  size_t off = kFileHeaderBytes;
  bool have_header = false;
  bool saw_index = false;
  while (off < end) {
    const size_t left = end - off;
    if (saw_index) {
      error = at(name, off) + "data after the index record";
      return std::nullopt;
    }
    if (left < kFrameHeaderBytes) {
      if (index_offset) {
        error = at(name, off) + "record frame truncated";
        return std::nullopt;
      }
      p.incomplete = "byte " + std::to_string(off) + ": record frame truncated (" +
                     std::to_string(left) + " of " + std::to_string(kFrameHeaderBytes) + " bytes)";
      break;
    }
    const uint32_t len = get_u32(d + off);
    const uint16_t kind = get_u16(d + off + 4);
    if (len > kMaxPayloadBytes || len > left - kFrameHeaderBytes) {
      if (index_offset || len > kMaxPayloadBytes) {
        error = at(name, off) + "record length " + std::to_string(len) + " runs past the end (" +
                std::to_string(left - kFrameHeaderBytes) + " bytes left): the packet is corrupt";
        return std::nullopt;
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
      return std::nullopt;
    }
    if (!have_header && kind != pb::RECORD_HEADER) {
      error = at(name, off) + "the first record is a " + record_kind_name(kind) +
              " record, expected the header";
      return std::nullopt;
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
          return std::nullopt;
        }
        if (!parse(p.header)) return std::nullopt;
        if (p.header.format_major() != p.major) {
          error = at(name, off) + "header says format " + std::to_string(p.header.format_major()) +
                  ", the file header " + std::to_string(p.major);
          return std::nullopt;
        }
        have_header = true;
        break;
      }
      case pb::RECORD_CHUNKS: {
        pb::Chunks c;
        if (!parse(c)) return std::nullopt;
        if (c.ids_size() != c.sizes_size()) {
          error = at(name, off) + "chunks record lists " + std::to_string(c.ids_size()) +
                  " ids but " + std::to_string(c.sizes_size()) + " sizes";
          return std::nullopt;
        }
        Packet::ChunkBatch b;
        b.record_offset = off;
        size_t pos = 0;
        for (int i = 0; i < c.ids_size(); ++i) {
          p.chunks.emplace(c.ids(i), Packet::ChunkLoc{p.chunk_batches.size(), pos, c.sizes(i)});
          pos += c.sizes(i);
        }
        b.raw_size = pos;
        if (pos > kMaxStateBytes) {
          error = at(name, off) + "chunks record claims " + std::to_string(pos) + " bytes";
          return std::nullopt;
        }
        b.zstd = std::move(*c.mutable_data());
        p.chunk_batches.push_back(std::move(b));
        break;
      }
      case pb::RECORD_CHECKPOINT: {
        pb::Checkpoint c;
        if (!parse(c)) return std::nullopt;
        if (!p.checkpoints.empty() && c.cycle() <= p.checkpoints.back().cycle()) {
          error = at(name, off) + "checkpoint cycles are not ascending";
          return std::nullopt;
        }
        p.checkpoints.push_back(std::move(c));
        break;
      }
      case pb::RECORD_WINDOW: {
        pb::Window w;
        if (!parse(w)) return std::nullopt;
        if (w.end_cycle() < w.start_cycle() ||
            (!p.windows.empty() && w.start_cycle() != p.windows.back().end_cycle())) {
          error = at(name, off) + "window " + std::to_string(w.index()) +
                  " does not continue the previous one";
          return std::nullopt;
        }
        p.windows.push_back(std::move(w));
        break;
      }
      case pb::RECORD_SYMPTOM: {
        pb::Symptom s;
        if (!parse(s)) return std::nullopt;
        p.symptom = std::move(s);
        break;
      }
      case pb::RECORD_ANNOTATION: {
        pb::Annotation a;
        if (!parse(a)) return std::nullopt;
        p.annotations.push_back(std::move(a));
        break;
      }
      case pb::RECORD_RESULT: {
        pb::Result r;
        if (!parse(r)) return std::nullopt;
        p.result = std::move(r);
        break;
      }
      case pb::RECORD_STIMULUS: {
        pb::Stimulus st;
        if (!parse(st)) return std::nullopt;
        p.stimulus = std::move(st);
        break;
      }
      case pb::RECORD_INDEX: {
        pb::Index ix;
        if (!parse(ix)) return std::nullopt;
        if (!index_offset || *index_offset != off) {
          error = at(name, off) + "index record without a matching trailer";
          return std::nullopt;
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
    return std::nullopt;
  }
  if (index_offset && !saw_index) {
    error = at(name, n - kTrailerBytes) + "trailer points at byte " +
            std::to_string(*index_offset) + ", which is not the index record";
    return std::nullopt;
  }
  p.complete = saw_index;
  if (!p.complete && p.incomplete.empty())
    p.incomplete = "byte " + std::to_string(off) + ": ends without a footer";
  return p;
}

std::optional<Packet> read_packet(const std::string& path, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = path + ": cannot open";
    return std::nullopt;
  }
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  if (in.bad()) {
    error = path + ": read error";
    return std::nullopt;
  }
  return parse_packet(bytes, path, error);
}

}  // namespace bud::replay
