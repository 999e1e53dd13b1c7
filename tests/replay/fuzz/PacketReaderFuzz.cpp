// libFuzzer target for the replay packet reader: any bytes must give a packet or one error line,
// never a crash, a hang or an unbounded allocation. Built with clang -fsanitize=fuzzer,address
// (tests/replay/CMakeLists.txt) and run for a bounded number of iterations by ctest.
//
// Structure-aware: random bytes rarely get past the CRC of a frame, so the custom mutator splits
// a packet into its records, mutates one (payload bytes, or a decoded protobuf field set to a
// hostile value: sizes, cycles, counts, chunk lists), reorders, duplicates or drops records, cuts
// the footer, and frames everything again with valid checksums and a trailer pointing at the
// index. The reader's checks past the CRC layer (limits, chunk lists, zstd frames, hashes) are
// what it exercises.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "replay/Framing.h"
#include "replay/PacketReader.h"

using namespace bud::replay;

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

struct Record {
  uint16_t kind = 0;
  uint16_t flags = 0;
  std::string payload;
};

// The records of `bytes` as far as their frames go (checksums not checked: the mutator re-frames).
bool split(const uint8_t* d, size_t n, std::vector<Record>& out) {
  if (n < kFileHeaderBytes || std::memcmp(d, kFileMagic, 8) != 0) return false;
  size_t off = kFileHeaderBytes;
  while (off + kFrameHeaderBytes <= n) {
    const uint32_t len = get_u32(d + off);
    if (len > n - off - kFrameHeaderBytes) break;
    out.push_back({get_u16(d + off + 4), get_u16(d + off + 6),
                   std::string(reinterpret_cast<const char*>(d + off + kFrameHeaderBytes), len)});
    off += kFrameHeaderBytes + len;
  }
  return !out.empty();
}

uint64_t hostile(std::minstd_rand& rng, uint64_t v) {
  switch (rng() % 8) {
    case 0:
      return 0;
    case 1:
      return v + 1;
    case 2:
      return v ? v - 1 : 0;
    case 3:
      return uint64_t{1} << (rng() % 64);
    case 4:
      return ~uint64_t{0};
    case 5:
      return 1536ull << 20;  // the 1.5 GiB bomb
    case 6:
      return v * 2;
    default:
      return (uint64_t{rng()} << 32) ^ rng();
  }
}

// Sets one size, cycle or count of a decoded record to a hostile value.
void mutate_fields(Record& r, std::minstd_rand& rng) {
  switch (r.kind) {
    case pb::RECORD_HEADER: {
      pb::Header h;
      if (!h.ParseFromString(r.payload)) return;
      if (rng() % 2)
        h.mutable_memory()->set_size_bytes(hostile(rng, h.memory().size_bytes()));
      else
        h.mutable_intervals()->set_digest(hostile(rng, h.intervals().digest()));
      r.payload = h.SerializeAsString();
      return;
    }
    case pb::RECORD_CHUNKS: {
      pb::Chunks c;
      if (!c.ParseFromString(r.payload) || c.sizes_size() == 0) return;
      const int i = static_cast<int>(rng() % c.sizes_size());
      if (rng() % 3 == 0)
        c.add_sizes(static_cast<uint32_t>(hostile(rng, 0)));
      else
        c.set_sizes(i, static_cast<uint32_t>(hostile(rng, c.sizes(i))));
      r.payload = c.SerializeAsString();
      return;
    }
    case pb::RECORD_CHECKPOINT:
    case pb::RECORD_STIMULUS: {
      pb::Checkpoint c;  // field numbers differ; decode each as itself
      if (r.kind == pb::RECORD_CHECKPOINT) {
        if (!c.ParseFromString(r.payload)) return;
        switch (rng() % 3) {
          case 0:
            c.set_raw_size(hostile(rng, c.raw_size()));
            break;
          case 1:
            c.set_cycle(hostile(rng, c.cycle()));
            break;
          default:
            if (c.chunks_size() > 0)
              c.add_chunks(c.chunks(static_cast<int>(rng() % c.chunks_size())));
        }
        r.payload = c.SerializeAsString();
      } else {
        pb::Stimulus s;
        if (!s.ParseFromString(r.payload)) return;
        s.set_raw_size(hostile(rng, s.raw_size()));
        r.payload = s.SerializeAsString();
      }
      return;
    }
    case pb::RECORD_WINDOW: {
      pb::Window w;
      if (!w.ParseFromString(r.payload)) return;
      switch (rng() % 3) {
        case 0:
          w.set_index(static_cast<uint32_t>(hostile(rng, w.index())));
          break;
        case 1:
          w.set_end_cycle(hostile(rng, w.end_cycle()));
          break;
        default:
          w.set_start_cycle(hostile(rng, w.start_cycle()));
      }
      r.payload = w.SerializeAsString();
      return;
    }
    default:
      return;
  }
}

// Frames `records` into a packet with valid checksums; a trailer if the last record is an index
// and `trailer`.
std::vector<uint8_t> frame(const std::vector<Record>& records, bool trailer) {
  std::vector<uint8_t> out(kFileHeaderBytes);
  uint8_t fh[kFileHeaderBytes];
  encode_file_header(fh);
  std::memcpy(out.data(), fh, kFileHeaderBytes);
  uint64_t last = 0;
  for (const auto& r : records) {
    last = out.size();
    const std::span<const uint8_t> payload(reinterpret_cast<const uint8_t*>(r.payload.data()),
                                           r.payload.size());
    uint8_t h[kFrameHeaderBytes];
    put_u32(h, static_cast<uint32_t>(payload.size()));
    put_u16(h + 4, r.kind);
    put_u16(h + 6, r.flags);
    put_u32(h + 8, crc32c(payload, crc32c({h, 8})));
    out.insert(out.end(), h, h + kFrameHeaderBytes);
    out.insert(out.end(), payload.begin(), payload.end());
  }
  if (trailer && !records.empty() && records.back().kind == pb::RECORD_INDEX) {
    uint8_t t[kTrailerBytes];
    put_u64(t, last);
    std::memcpy(t + 8, kTrailerMagic, 8);
    out.insert(out.end(), t, t + kTrailerBytes);
  }
  return out;
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  std::minstd_rand rng(seed);
  std::vector<Record> records;
  if (!split(data, size, records) || rng() % 16 == 0) return LLVMFuzzerMutate(data, size, max_size);
  Record& r = records[rng() % records.size()];
  bool trailer = rng() % 8 != 0;
  switch (rng() % 8) {
    case 0:
    case 1:
    case 2: {
      std::string buf = r.payload;
      buf.resize(r.payload.size() * 2 + 64);
      const size_t n =
          LLVMFuzzerMutate(reinterpret_cast<uint8_t*>(buf.data()), r.payload.size(), buf.size());
      buf.resize(n);
      r.payload = std::move(buf);
      break;
    }
    case 3:
    case 4:
      mutate_fields(r, rng);
      break;
    case 5:
      if (rng() % 2)
        records.push_back(r);
      else
        records.erase(records.begin() + static_cast<long>(rng() % records.size()));
      break;
    case 6:
      if (rng() % 2)
        r.kind = static_cast<uint16_t>(rng() % 12);
      else
        r.flags = static_cast<uint16_t>(1u << (rng() % 16));
      break;
    default:
      records.resize(1 + rng() % records.size());
      trailer = false;
  }
  auto out = frame(records, trailer);
  if (out.size() > max_size) return size;  // keep the input as it was
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string error;
  // Small limits keep every accepted allocation small under the fuzzer's RSS limit, and make
  // the limits themselves reachable.
  ReadLimits limits;
  limits.max_state_bytes = 64u << 20;
  limits.max_checkpoints = 64;
  auto p = parse_packet(std::span<const uint8_t>(data, size), "fuzz", error, limits);
  if (!p) {
    if (error.empty()) __builtin_trap();  // a failure must say why
    return 0;
  }
  // Reassemble: chunk lookups, zstd frames and hashes are checked too; every size is bounded by
  // the limits above, so nothing is skipped.
  for (size_t i = 0; i < p->checkpoints.size() && i < 4; ++i) (void)p->checkpoint_state(i, error);
  if (p->stimulus) (void)p->stimulus_bytes(error);
  (void)p->last_cycle();
  (void)p->checkpoint_at_or_before(1000);
  return 0;
}
