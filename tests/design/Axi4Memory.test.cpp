// design/Axi4Memory against a plain byte array: bursts with strobes and narrow beats, WRAP and
// FIXED, same-ID order under the DRAM model's reordering, seeds changing timing but not data,
// run errors, and save/restore.
#include <catch2/catch.hpp>

#include <cstring>
#include <deque>
#include <map>

#include "design/Axi4Memory.h"

using namespace bud::design;

namespace {

constexpr uint64_t kBase = 0x10000, kSize = 0x4000;

Axi4Memory make_memory(uint64_t seed, bool reorder = true, uint32_t jitter = 30) {
  Axi4Memory::Config c;
  c.port = "mem";
  c.region = "ddr";
  c.base = kBase;
  c.size = kSize;
  c.bus_bytes = 8;
  c.id_bits = 4;
  c.dram.base_latency = 10;
  c.dram.jitter = jitter;
  c.dram.max_outstanding = 16;
  c.dram.reorder = reorder;
  c.dram.seed = seed;
  std::vector<uint8_t> init(kSize);
  for (size_t i = 0; i < init.size(); ++i) init[i] = static_cast<uint8_t>(i * 7 + (i >> 8));
  std::string error;
  auto m = Axi4Memory::make(c, init, error);
  REQUIRE(m);
  return std::move(*m);
}

struct Burst {
  uint64_t addr;
  uint8_t len, size, burst;
  uint32_t id;
  std::vector<uint64_t> data, strb;  // writes: per beat
};
struct Beat {
  uint32_t id;
  std::array<uint8_t, 8> data;
  bool last;
};

// A simple AXI4 master: all reads issued back to back (AR), writes one burst at a time (AW, then
// its W beats, then B); rready/bready always high. Returns the cycles taken.
uint64_t run(Axi4Memory& m, std::deque<Burst> reads, std::deque<Burst> writes, std::vector<Beat>& r_beats,
             uint64_t limit = 100000) {
  uint64_t cycle = 0;
  bool aw_sent = false;
  size_t w_beat = 0;
  std::array<uint8_t, 8> wbuf{};
  size_t reads_left = reads.size(), beats_seen = 0, expected_beats = 0;
  for (const auto& b : reads) expected_beats += b.len + 1u;
  while ((reads_left > 0 || !writes.empty() || beats_seen < expected_beats || !m.idle()) && cycle < limit &&
         !m.error()) {
    const Axi4SlaveDrive d = m.drive();
    Axi4MasterPins p;
    if (!reads.empty()) {
      const Burst& b = reads.front();
      p.arvalid = true, p.araddr = b.addr, p.arlen = b.len, p.arsize = b.size, p.arburst = b.burst, p.arid = b.id;
    }
    if (!writes.empty()) {
      const Burst& b = writes.front();
      if (!aw_sent) p.awvalid = true, p.awaddr = b.addr, p.awlen = b.len, p.awsize = b.size, p.awburst = b.burst, p.awid = b.id;
      if (aw_sent && w_beat <= b.len) {
        p.wvalid = true;
        std::memcpy(wbuf.data(), &b.data[w_beat], 8);
        p.wdata = wbuf.data();
        p.wstrb = b.strb[w_beat];
        p.wlast = w_beat == b.len;
      }
    }
    p.rready = p.bready = true;
    m.sample(p);
    if (d.arready && p.arvalid) reads.pop_front(), --reads_left;
    if (d.rvalid) {
      r_beats.push_back(Beat{d.rid, {}, d.rlast});
      std::memcpy(r_beats.back().data.data(), d.rdata.data(), 8);
      ++beats_seen;
    }
    if (d.awready && p.awvalid) aw_sent = true;
    if (d.wready && p.wvalid) ++w_beat;
    if (d.bvalid) {
      REQUIRE(!writes.empty());
      CHECK(d.bid == writes.front().id);
      writes.pop_front();
      aw_sent = false;
      w_beat = 0;
    }
    m.tick();
    ++cycle;
  }
  REQUIRE(cycle < limit);
  return cycle;
}

// What an INCR/FIXED/WRAP burst touches, beat by beat, for the oracle (the AXI spec's formulas).
uint64_t beat_address(const Burst& b, uint32_t i) {
  const uint64_t n = 1ull << b.size;
  if (b.burst == 0) return b.addr;
  if (b.burst == 1) return i == 0 ? b.addr : (b.addr / n) * n + i * n;
  const uint64_t total = n * (b.len + 1u), lo = b.addr / total * total;
  return lo + (b.addr - lo + i * n) % total;
}

}  // namespace

TEST_CASE("Axi4Memory: bursts with strobes and narrow beats match a byte array", "[design][axi4]") {
  Axi4Memory m = make_memory(3);
  std::vector<uint8_t> ref(m.bytes().begin(), m.bytes().end());
  std::deque<Burst> writes;
  // Full-width INCR with a strobe pattern, a narrow (4-byte) INCR from an odd lane, a FIXED and a WRAP.
  writes.push_back({kBase + 0x100, 7, 3, 1, 1, {}, {}});
  writes.push_back({kBase + 0x204, 5, 2, 1, 2, {}, {}});
  writes.push_back({kBase + 0x300, 3, 3, 0, 3, {}, {}});
  writes.push_back({kBase + 0x418, 3, 3, 2, 4, {}, {}});
  uint64_t k = 1;
  for (Burst& b : writes)
    for (uint32_t i = 0; i <= b.len; ++i) {
      b.data.push_back(0x0102030405060708ull * (k += 0x9E37));
      b.strb.push_back(i % 3 == 0 ? 0xFF : (0xA5 >> (i & 1)));
    }
  for (const Burst& b : writes)
    for (uint32_t i = 0; i <= b.len; ++i) {
      const uint64_t a = beat_address(b, i), n = 1ull << b.size;
      for (uint64_t at = a; at < a / n * n + n; ++at) {
        const uint32_t lane = at % 8;
        if ((b.strb[i] >> lane) & 1) ref[at - kBase] = static_cast<uint8_t>(b.data[i] >> (8 * lane));
      }
    }
  std::vector<Beat> none;
  run(m, {}, writes, none);
  REQUIRE(m.error() == nullptr);
  CHECK(std::equal(ref.begin(), ref.end(), m.bytes().begin()));
  CHECK(m.stats().write_bursts == 4);
  // Read the same ranges back with the same burst shapes: every active byte as the oracle has it.
  std::deque<Burst> reads;
  for (const Burst& b : writes) reads.push_back({b.addr, b.len, b.size, b.burst, 0, {}, {}});
  std::vector<Beat> beats;
  run(m, reads, {}, beats);
  REQUIRE(beats.size() == 8 + 6 + 4 + 4);
  size_t at = 0;
  for (const Burst& b : reads)
    for (uint32_t i = 0; i <= b.len; ++i, ++at) {
      const uint64_t a = beat_address(b, i), n = 1ull << b.size;
      CHECK(beats[at].last == (i == b.len));
      for (uint64_t x = a; x < a / n * n + n; ++x) CHECK(beats[at].data[x % 8] == ref[x - kBase]);
    }
  CHECK(m.stats().read_bursts == 4);
  CHECK(m.stats().read_latency_max >= 10);
  CHECK(m.idle());
}

TEST_CASE("Axi4Memory: same-ID bursts stay in order while other IDs overtake", "[design][axi4]") {
  Axi4Memory m = make_memory(11, true, 60);
  std::deque<Burst> reads;
  for (uint32_t i = 0; i < 48; ++i) reads.push_back({kBase + i * 64, 1, 3, 1, i % 4, {}, {}});
  std::vector<Beat> beats;
  run(m, reads, {}, beats);
  REQUIRE(beats.size() == 96);
  // Which burst each first beat belongs to, from its data (the region's pattern is unique per 64 bytes).
  std::map<uint32_t, std::vector<uint32_t>> order;  // id -> burst indices in arrival order
  std::vector<uint32_t> global;
  for (size_t b = 0; b < beats.size(); b += 2) {
    int which = -1;
    for (uint32_t i = 0; i < 48; ++i)
      if (std::memcmp(beats[b].data.data(), m.bytes().data() + i * 64, 8) == 0) which = static_cast<int>(i);
    REQUIRE(which >= 0);
    CHECK(beats[b].id == static_cast<uint32_t>(which) % 4);
    CHECK(beats[b + 1].last);
    order[beats[b].id].push_back(static_cast<uint32_t>(which));
    global.push_back(static_cast<uint32_t>(which));
  }
  for (const auto& [id, v] : order) CHECK(std::is_sorted(v.begin(), v.end()));
  CHECK_FALSE(std::is_sorted(global.begin(), global.end()));  // the seeded model did reorder IDs
}

TEST_CASE("Axi4Memory: another seed changes the timing, not the data", "[design][axi4]") {
  std::vector<uint64_t> cycles;
  std::vector<std::vector<uint8_t>> data;
  for (uint64_t seed : {1, 2}) {
    Axi4Memory m = make_memory(seed);
    std::deque<Burst> reads;
    for (uint32_t i = 0; i < 20; ++i) reads.push_back({kBase + i * 128, 15, 3, 1, 0, {}, {}});
    std::vector<Beat> beats;
    cycles.push_back(run(m, reads, {}, beats));
    data.emplace_back();
    for (const Beat& b : beats) data.back().insert(data.back().end(), b.data.begin(), b.data.end());
  }
  CHECK(cycles[0] != cycles[1]);
  CHECK(data[0] == data[1]);
}

TEST_CASE("Axi4Memory: an access outside the region is one run error line", "[design][axi4]") {
  Axi4Memory m = make_memory(1);
  std::vector<Beat> beats;
  std::deque<Burst> reads{{kBase - 16, 1, 3, 1, 0, {}, {}}};  // ends at the base: no 4 KiB crossing
  run(m, reads, {}, beats);
  REQUIRE(m.error() != nullptr);
  const std::string e = m.error();
  CHECK(e.find("axi4 port 'mem' channel AR, address 0xfff0, cycle ") == 0);
  CHECK(e.find("read burst of 2 x 8 bytes (INCR) leaves memory 'ddr' [0x10000, 0x14000)") != std::string::npos);
  const Axi4SlaveDrive d = m.drive();  // the port stops answering
  CHECK_FALSE(d.arready);
  CHECK_FALSE(d.rvalid);

  Axi4Memory m2 = make_memory(1);
  std::deque<Burst> cross{{kBase + 0xFF8, 1, 3, 1, 0, {}, {}}};
  run(m2, cross, {}, beats);
  REQUIRE(m2.error() != nullptr);
  CHECK(std::string(m2.error()).find("crosses a 4 KiB boundary") != std::string::npos);

  Axi4Memory m3 = make_memory(1);
  std::deque<Burst> reserved{{kBase, 0, 3, 3, 0, {}, {}}};
  run(m3, reserved, {}, beats);
  REQUIRE(m3.error() != nullptr);
  CHECK(std::string(m3.error()).find("reserved burst type") != std::string::npos);
}

TEST_CASE("Axi4Memory: save and restore continue bit-identically", "[design][axi4]") {
  Axi4Memory m = make_memory(5);
  std::deque<Burst> reads;
  for (uint32_t i = 0; i < 12; ++i) reads.push_back({kBase + i * 32, 3, 3, 1, i % 3, {}, {}});
  // Run part-way with a manual loop: issue everything, stop after 40 cycles.
  for (int c = 0; c < 40; ++c) {
    const Axi4SlaveDrive d = m.drive();
    Axi4MasterPins p;
    if (!reads.empty()) {
      const Burst& b = reads.front();
      p.arvalid = true, p.araddr = b.addr, p.arlen = b.len, p.arsize = b.size, p.arburst = b.burst, p.arid = b.id;
    }
    p.rready = true;
    m.sample(p);
    if (d.arready && p.arvalid) reads.pop_front();
    m.tick();
  }
  std::vector<uint8_t> state;
  m.save(state);
  Axi4Memory copy = make_memory(99);  // another seed: restore must replace the timing state too
  size_t offset = 0;
  std::string error;
  REQUIRE(copy.restore(state, offset, error));
  CHECK(offset == state.size());
  std::vector<Beat> a, b;
  const uint64_t ca = run(m, reads, {}, a, 100000);
  const uint64_t cb = run(copy, reads, {}, b, 100000);
  CHECK(ca == cb);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) CHECK((a[i].id == b[i].id && a[i].data == b[i].data));
  // A truncated state is refused, naming the offset, and changes nothing.
  size_t off2 = 0;
  CHECK_FALSE(copy.restore(std::span<const uint8_t>(state.data(), state.size() / 2), off2, error));
  CHECK(error.find("byte offset") != std::string::npos);
  CHECK(off2 == 0);
}
