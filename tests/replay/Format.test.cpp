// The packet container without an emulator: checksums, chunking, writer/reader round trip,
// dedupe, and every kind of bad input (never a crash; one error naming the byte offset).
#include <catch2/catch.hpp>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "ReplayTestSupport.h"
#include "replay/Chunker.h"
#include "replay/Framing.h"
#include "replay/PacketReader.h"
#include "replay/PacketWriter.h"

using namespace bud;
using namespace bud::replay;

namespace {

using test::pseudo_random;

// A small complete packet: header, stimulus, two checkpoints, two windows, symptom, result.
std::string make_small_packet(const std::string& path, bool finish = true) {
  std::string error;
  auto w = PacketWriter::create(path, error);
  REQUIRE(w);
  pb::Header h;
  h.set_format_major(kFormatMajor);
  h.set_format_minor(kFormatMinor);
  h.set_model_revision("test");
  h.mutable_workload()->set_text("name: \"x\"");
  REQUIRE(w->write(pb::RECORD_HEADER, h));
  REQUIRE(w->write_stimulus(pseudo_random(3000, 9), 1));
  auto state = pseudo_random(40000, 1);
  REQUIRE(w->write_checkpoint(0, state, 1));
  pb::Window win;
  win.set_index(0);
  win.set_start_cycle(0);
  win.set_end_cycle(100);
  auto* d = win.add_digests();
  d->set_cycle(100);
  d->set_digest(42);
  REQUIRE(w->write(pb::RECORD_WINDOW, win));
  state[20000] ^= 1;
  REQUIRE(w->write_checkpoint(100, state, 1));
  win.set_index(1);
  win.set_start_cycle(100);
  win.set_end_cycle(150);
  REQUIRE(w->write(pb::RECORD_WINDOW, win));
  pb::Symptom s;
  s.set_kind(pb::Symptom::HANG);
  s.set_cycle(150);
  s.set_message("stuck");
  REQUIRE(w->write(pb::RECORD_SYMPTOM, s));
  pb::Result r;
  r.set_cycles(150);
  REQUIRE(w->write(pb::RECORD_RESULT, r));
  if (finish) REQUIRE(w->finish());
  return path;
}

}  // namespace

TEST_CASE("CRC32C and hash64 are the documented functions", "[replay][format]") {
  // The framing's CRC32C and chunk hash are bud's one CRC and hash (emu/core/Hash.h,
  // tests/isa/Hash.test.cpp); format 2.0 on.
  const std::string s = "123456789";
  const std::span<const uint8_t> b(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  CHECK(crc32c(b) == 0xE3069283u);  // the standard CRC32C check value
  CHECK(crc32c(b.subspan(4), crc32c(b.subspan(0, 4))) == crc32c(b));
  // RFC 3720 B.4 test vectors: 32 bytes of zeros, 32 bytes of 0xFF.
  const std::vector<uint8_t> zeros(32, 0), ones(32, 0xFF);
  CHECK(crc32c(zeros) == 0x8A9136AAu);
  CHECK(crc32c(ones) == 0x62A8AB43u);
  CHECK(crc32c({}) == 0u);
  // hash64 names chunks and is stored in packets: XXH3-64, so a change of the function (which
  // would orphan every stored chunk id) fails here.
  CHECK(hash64(b) == 0x72DCB18B67A17DFFull);
  CHECK(hash64({}) == 0x2D06800538D394C2ull);  // XXH3_64bits of the empty input
  const auto r = pseudo_random(4096, 7);
  CHECK(hash64(r) == XXH3_64bits(r.data(), r.size()));
  CHECK(hash64(b) != hash64(b.subspan(1)));
}

TEST_CASE("content-defined chunk boundaries are pinned", "[replay][format]") {
  // Boundaries decide which chunk ids packets store and share: computed once, written here.
  const auto data = pseudo_random(1 << 18, 3);
  const auto chunks = split_chunks(data);
  std::vector<size_t> sizes;
  for (const auto& c : chunks) sizes.push_back(c.size);
  const std::vector<size_t> pinned{
      10635, 3070, 3255, 5572, 3612, 12110, 7318, 30388, 5168, 1573, 4748, 4688,
      9973, 4756, 1648, 3524, 6944, 4763, 4297, 5251, 1140, 3161, 1540, 2827,
      8968, 1107, 1464, 2018, 3822, 7346, 2138, 21458, 1358, 1213, 2298, 2559,
      5227, 5552, 1258, 3809, 2731, 2732, 6043, 6668, 9213, 21201};
  CHECK(sizes == pinned);
  REQUIRE(!chunks.empty());
  CHECK(hash64(std::span(data).subspan(chunks[0].offset, chunks[0].size)) ==
        XXH3_64bits(data.data() + chunks[0].offset, chunks[0].size));
}

TEST_CASE("content-defined chunks cover the input and survive an insertion", "[replay][format]") {
  auto data = pseudo_random(1 << 20, 3);
  const auto a = split_chunks(data);
  size_t pos = 0;
  for (const auto& c : a) {
    CHECK(c.offset == pos);
    CHECK(c.size <= kChunkMax);
    pos += c.size;
  }
  CHECK(pos == data.size());
  CHECK(a.size() > data.size() / kChunkMax);
  // Insert 7 bytes near the front: nearly every later chunk keeps its content (dedupe works).
  auto shifted = data;
  shifted.insert(shifted.begin() + 100, 7, uint8_t{0x5A});
  std::set<uint64_t> ids;
  for (const auto& c : a) ids.insert(hash64(std::span(data).subspan(c.offset, c.size)));
  size_t shared = 0;
  const auto b = split_chunks(shifted);
  for (const auto& c : b) shared += ids.count(hash64(std::span(shifted).subspan(c.offset, c.size)));
  CHECK(shared + 3 >= b.size());
}

TEST_CASE("a packet written record by record reads back", "[replay][format]") {
  const auto dir = test::temp_dir("format_roundtrip");
  const auto path = make_small_packet((dir / "p.bpk").string());
  std::string error;
  auto p = read_packet(path, error);
  REQUIRE(p);
  CHECK(p->complete);
  CHECK(p->major == kFormatMajor);
  CHECK(p->header.model_revision() == "test");
  REQUIRE(p->checkpoints.size() == 2);
  REQUIRE(p->windows.size() == 2);
  CHECK(p->last_cycle() == 150);
  REQUIRE(p->symptom);
  CHECK(p->symptom->message() == "stuck");
  auto s1 = p->checkpoint_state(1, error);
  REQUIRE(s1);
  auto expect = pseudo_random(40000, 1);
  expect[20000] ^= 1;
  CHECK(*s1 == expect);
  CHECK(p->checkpoint_at_or_before(99) == 0u);
  CHECK(p->checkpoint_at_or_before(120) == 1u);
  // The second checkpoint differs in one byte: only the chunk holding it is stored again.
  CHECK(p->breakdown[pb::RECORD_CHUNKS].records == 3);  // stimulus, checkpoint 0, the change
  CHECK(p->breakdown[pb::RECORD_CHUNKS].bytes < 40000 + 3000 + 2 * kChunkMax);
}

TEST_CASE("a packet without footer reads up to its last complete record", "[replay][format]") {
  const auto dir = test::temp_dir("format_nofooter");
  const auto path = make_small_packet((dir / "p.bpk").string(), false);
  std::string error;
  auto p = read_packet(path, error);
  REQUIRE(p);
  CHECK_FALSE(p->complete);
  CHECK(p->incomplete.find("without a footer") != std::string::npos);
  // Cut in the middle of the last record: still readable, the partial record is reported.
  auto bytes = test::read_bytes(path);
  bytes.resize(bytes.size() - 3);
  auto q = parse_packet(bytes, "cut", error);
  REQUIRE(q);
  CHECK_FALSE(q->complete);
  CHECK_FALSE(q->result);
  CHECK(q->incomplete.find("record truncated") != std::string::npos);
}

TEST_CASE("bad packets give one error naming the byte offset", "[replay][format][bad]") {
  const auto dir = test::temp_dir("format_bad");
  const auto good = test::read_bytes(make_small_packet((dir / "p.bpk").string()));
  std::string error;
  SECTION("empty") {
    CHECK_FALSE(parse_packet({}, "e", error));
    CHECK(error == "e: empty file (0 bytes): not a bud replay packet");
  }
  SECTION("wrong magic") {
    auto b = good;
    b[1] = 'X';
    CHECK_FALSE(parse_packet(b, "m", error));
    CHECK(error == "m: byte 0: not a bud replay packet (bad magic)");
  }
  SECTION("future major version") {
    auto b = good;
    put_u16(b.data() + 8, kFormatMajor + 1);
    put_u32(b.data() + 12, crc32c({b.data(), 12}));
    CHECK_FALSE(parse_packet(b, "f", error));
    // The minor stays this bud's (the test bumps the major only).
    CHECK(error.find("f: byte 8: packet format 3." + std::to_string(kFormatMinor) +
                     " is not readable by this bud") == 0);
    CHECK(error.find("newer bud") != std::string::npos);
  }
  SECTION("header truncated") {
    std::vector<uint8_t> b(good.begin(), good.begin() + 10);
    CHECK_FALSE(parse_packet(b, "t", error));
    CHECK(error.find("t: byte 10: file header truncated") == 0);
  }
  SECTION("a flipped bit in a record of a complete packet") {
    auto b = good;
    b[200] ^= 0x10;
    CHECK_FALSE(parse_packet(b, "b", error));
    CHECK(error.find("b: byte ") == 0);
    CHECK(error.find("corrupt") != std::string::npos);
  }
}

TEST_CASE("every truncation and every single-bit flip is handled", "[replay][format][bad]") {
  const auto dir = test::temp_dir("format_sweep");
  const auto good = test::read_bytes(make_small_packet((dir / "p.bpk").string()));
  std::string error;
  size_t readable_truncations = 0;
  for (size_t n = 0; n < good.size(); n += 7) {
    std::vector<uint8_t> b(good.begin(), good.begin() + n);
    error.clear();
    auto p = parse_packet(b, "t", error);
    if (p) {
      CHECK_FALSE(p->complete);
      ++readable_truncations;
    } else {
      CHECK(error.find("byte") != std::string::npos);
    }
  }
  CHECK(readable_truncations > 0);
  size_t rejected = 0, flips = 0;
  for (size_t i = 0; i < good.size(); i += 3) {
    auto b = good;
    b[i] ^= uint8_t(1u << (i % 8));
    ++flips;
    error.clear();
    auto p = parse_packet(b, "f", error);
    if (!p) {
      ++rejected;
      CHECK(error.find("byte") != std::string::npos);
    } else {
      // A flip that still parses must be caught when the state is reassembled, or sit in a
      // trailer byte that only marks the packet incomplete.
      bool caught = !p->complete;
      for (size_t c = 0; c < p->checkpoints.size(); ++c) caught |= !p->checkpoint_state(c, error);
      caught |= !p->stimulus_bytes(error);
      CHECK(caught);
    }
  }
  CHECK(rejected > flips * 9 / 10);
}
