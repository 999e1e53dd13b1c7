// Drives DramModel with a scripted requester that plays the RTL's side of the DRAM port, and
// checks data, timing, bandwidth, ordering, back-pressure, determinism, save/restore, error
// recording and fault hooks.
#include "emu/core/DramModel.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <set>
#include <string>
#include <vector>

#include "emu/core/Hash.h"

// Counts heap allocations in this test binary, to check the per-cycle path makes none. Sanitizer
// runtimes bring their own operator new, so the counter is left out of sanitized builds.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BUD_COUNT_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define BUD_COUNT_ALLOCATIONS 0
#endif
#endif
#ifndef BUD_COUNT_ALLOCATIONS
#define BUD_COUNT_ALLOCATIONS 1
#endif

namespace {
uint64_t g_allocations = 0;
}  // namespace

#if BUD_COUNT_ALLOCATIONS
// GCC pairs inlined std::allocator calls with these free() calls and reports a false mismatch.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void* operator new(std::size_t n) {
  ++g_allocations;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
#endif

namespace {

using bud::emu::DramConfig;
using bud::emu::DramError;
using bud::emu::DramErrorKind;
using bud::emu::DramModel;
using bud::emu::DramRequest;
using bud::emu::DramResponse;
using bud::emu::Rng;

/// A response as observed at its handshake.
struct Event {
  uint64_t cycle = 0;
  DramResponse r;
};

bool same_event(const Event& a, const Event& b) {
  return a.cycle == b.cycle && a.r.write == b.r.write && a.r.tag == b.r.tag &&
         a.r.addr == b.r.addr && a.r.size == b.r.size && a.r.rdata == b.r.rdata &&
         a.r.issue_cycle == b.r.issue_cycle;
}

bool same_trace(const std::vector<Event>& a, const std::vector<Event>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!same_event(a[i], b[i])) return false;
  }
  return true;
}

uint64_t hmix(uint64_t h, uint64_t v) {
  uint64_t x = h ^ v;
  return Rng::splitmix64(x);
}

uint64_t trace_hash(const std::vector<Event>& trace) {
  uint64_t h = 0;
  for (const Event& e : trace) {
    h = hmix(h, e.cycle);
    h = hmix(h, (uint64_t{e.r.write} << 40) | (uint64_t{e.r.tag} << 32) | e.r.addr);
    h = hmix(h, e.r.size);
    h = hmix(h, e.r.issue_cycle);
    for (uint8_t b : e.r.rdata) h = hmix(h, b);
  }
  return h;
}

uint64_t timing_hash(const std::vector<Event>& trace) {
  uint64_t h = 0;
  for (const Event& e : trace) h = hmix(hmix(h, e.cycle), e.r.issue_cycle);
  return h;
}

/// The RTL side of the port. Random mode generates requests from its own Rng inside a region;
/// script mode issues `script` in order with the script's tags. It keeps a shadow of the region,
/// updated in response order, and checks every response against it. Copyable, so a checkpoint of
/// the model can be paired with a checkpoint of the requester.
struct Requester {
  Rng rng{7};
  uint32_t base = 0x1000;
  uint32_t region = 4096;
  uint32_t write_pct = 50;
  uint32_t issue_pct = 100;
  uint32_t resp_ready_pct = 100;
  uint8_t fixed_size = 0;  // 0: random sizes 8..64
  uint32_t limit = 32;     // max requests in flight (offered + accepted)
  uint64_t max_requests = ~0ull;
  std::vector<DramRequest> script;
  size_t script_pos = 0;

  enum : uint8_t { kFree = 0, kOffered = 1, kAccepted = 2 };
  std::array<uint8_t, 32> tag_state{};
  std::array<DramRequest, 32> inflight{};
  bool have_offer = false;
  DramRequest offer;
  uint64_t issued = 0;
  uint32_t in_flight = 0;
  uint32_t max_in_flight = 0;
  std::vector<uint8_t> shadow = std::vector<uint8_t>(region, 0);
  std::vector<Event> trace;
  uint64_t mismatches = 0;
  uint64_t unexpected = 0;

  void make_offer() {
    if (have_offer || in_flight >= limit) return;
    DramRequest q;
    if (!script.empty()) {
      if (script_pos == script.size()) return;
      q = script[script_pos];
      if (tag_state[q.tag % 32] != kFree) return;
      ++script_pos;
    } else {
      if (issued >= max_requests || !rng.chance(issue_pct, 100)) return;
      int tag = 0;
      while (tag < 32 && tag_state[static_cast<size_t>(tag)] != kFree) ++tag;
      if (tag == 32) return;
      q.write = rng.chance(write_pct, 100);
      q.size = fixed_size ? fixed_size : static_cast<uint8_t>(8 * (1 + rng.below(8)));
      q.addr = base + 8 * static_cast<uint32_t>(rng.below((region - q.size) / 8 + 1));
      q.tag = static_cast<uint8_t>(tag);
      if (q.write) {
        for (uint32_t i = 0; i < q.size; ++i) q.wdata[i] = static_cast<uint8_t>(rng.next());
      }
    }
    tag_state[q.tag % 32] = kOffered;
    offer = q;
    have_offer = true;
    ++issued;
  }

  void on_accept() {
    inflight[offer.tag % 32] = offer;
    tag_state[offer.tag % 32] = kAccepted;
    have_offer = false;
    max_in_flight = std::max(max_in_flight, ++in_flight);
  }

  void on_response(const DramResponse& r, uint64_t cycle) {
    trace.push_back({cycle, r});
    if (r.tag >= 32 || tag_state[r.tag] != kAccepted) {
      ++unexpected;
      return;
    }
    const DramRequest& q = inflight[r.tag];
    tag_state[r.tag] = kFree;
    --in_flight;
    if (q.write != r.write || q.addr != r.addr || q.size != r.size) {
      ++mismatches;
      return;
    }
    const bool in_region = q.addr >= base && uint64_t{q.addr} + q.size <= uint64_t{base} + region;
    for (uint32_t i = 0; i < 64; ++i) {
      if (r.write || i >= q.size) {
        if (r.rdata[i] != 0) ++mismatches;
      } else if (in_region && r.rdata[i] != shadow[q.addr - base + i]) {
        ++mismatches;
      }
    }
    if (r.write && in_region) {
      std::copy_n(q.wdata.begin(), q.size, shadow.begin() + (q.addr - base));
    }
  }

  bool idle() const {
    const bool exhausted = script.empty() ? issued >= max_requests : script_pos == script.size();
    return exhausted && !have_offer && in_flight == 0;
  }
};

/// One cycle, in the order the harness uses.
void step(DramModel& m, Requester& q) {
  const bool ready = m.req_ready();
  const DramResponse* r = m.resp();
  q.make_offer();
  const bool resp_ready = q.rng.chance(q.resp_ready_pct, 100);
  if (q.have_offer && ready) {
    REQUIRE(m.accept(q.offer));
    q.on_accept();
  }
  if (r && resp_ready) {
    q.on_response(*r, m.cycle());
    REQUIRE(m.pop_resp());
  }
  m.tick();
}

void run(DramModel& m, Requester& q, uint64_t cycles) {
  for (uint64_t i = 0; i < cycles; ++i) step(m, q);
}

/// Runs until the requester has nothing left; false if that takes more than `limit` cycles.
bool run_until_idle(DramModel& m, Requester& q, uint64_t limit = 200000) {
  for (uint64_t i = 0; i < limit; ++i) {
    if (q.idle() && m.outstanding() == 0 && m.resp() == nullptr) return true;
    step(m, q);
  }
  return false;
}

DramConfig small_config() {
  DramConfig c;
  c.size_bytes = 1 << 20;
  return c;
}

DramRequest make_req(bool write, uint32_t addr, uint8_t size, uint8_t tag, uint8_t fill = 0) {
  DramRequest q;
  q.write = write;
  q.addr = addr;
  q.size = size;
  q.tag = tag;
  for (uint32_t i = 0; i < size && i < 64; ++i) q.wdata[i] = static_cast<uint8_t>(fill + i);
  return q;
}

/// A timing-independent workload: writes to disjoint addresses, then reads of the same places.
std::vector<DramRequest> disjoint_script(uint32_t base, uint32_t n) {
  std::vector<DramRequest> s;
  for (uint32_t i = 0; i < n; ++i) {
    s.push_back(make_req(true, base + 64 * i, 64, static_cast<uint8_t>(i % 32),
                         static_cast<uint8_t>(i * 7)));
  }
  for (uint32_t i = 0; i < n; ++i) {
    s.push_back(make_req(false, base + 64 * i, 64, static_cast<uint8_t>(i % 32)));
  }
  return s;
}

}  // namespace

TEST_CASE("DramConfig::validate rejects nonsense", "[core][dram]") {
  CHECK(DramConfig{}.validate().empty());
  auto bad = [](auto mutate) {
    DramConfig c;
    mutate(c);
    return c.validate();
  };
  CHECK(bad([](DramConfig& c) { c.size_bytes = 0; }).find("size_bytes") != std::string::npos);
  CHECK(!bad([](DramConfig& c) { c.size_bytes = 5000; }).empty());
  CHECK(!bad([](DramConfig& c) { c.size_bytes = 1ull << 33; }).empty());
  CHECK(bad([](DramConfig& c) { c.bytes_per_cycle = 0; }).find("bytes_per_cycle") !=
        std::string::npos);
  CHECK(bad([](DramConfig& c) { c.max_outstanding = 0; }).find("max_outstanding") !=
        std::string::npos);
  CHECK(!bad([](DramConfig& c) { c.max_outstanding = 65; }).empty());
  CHECK(bad([](DramConfig& c) { c.max_outstanding = 64; }).empty());
  CHECK(!bad([](DramConfig& c) { c.base_latency = 0; }).empty());
  CHECK(!bad([](DramConfig& c) {
           c.bursty = true;
           c.burst_duty_pct = 100;
         }).empty());
  CHECK(!bad([](DramConfig& c) {
           c.bursty = true;
           c.burst_period = 1;
         }).empty());
}

TEST_CASE("DRAM read-after-write data is correct in response order", "[core][dram]") {
  SECTION("random conflicting traffic matches a shadow updated at presentation") {
    DramModel m(small_config());
    Requester q;
    q.region = 256;  // small: many reads and writes to the same bytes while in flight
    q.shadow.assign(q.region, 0);
    q.resp_ready_pct = 70;
    run(m, q, 6000);
    CHECK(q.trace.size() > 500);
    CHECK(q.mismatches == 0);
    CHECK(q.unexpected == 0);
    CHECK(m.stats().reorders > 0);  // the check above covered reordered responses
    q.max_requests = q.issued;      // drain: the last acks update the shadow
    REQUIRE(run_until_idle(m, q));
    std::vector<uint8_t> mem(q.region);
    REQUIRE(m.read(q.base, mem));
    CHECK(mem == q.shadow);
    CHECK_FALSE(m.error().has_value());
  }
  SECTION("explicit pattern: write, drain, read back") {
    DramModel m(small_config());
    Requester q;
    for (uint32_t i = 0; i < 40; ++i) {
      q.script.push_back(make_req(true, 0x2000 + 64 * i, 64, static_cast<uint8_t>(i % 32),
                                  static_cast<uint8_t>(3 * i)));
    }
    REQUIRE(run_until_idle(m, q));
    q.trace.clear();
    q.script.clear();
    q.script_pos = 0;
    for (uint32_t i = 0; i < 40; ++i) {
      q.script.push_back(make_req(false, 0x2000 + 64 * i, 64, static_cast<uint8_t>(i % 32)));
    }
    REQUIRE(run_until_idle(m, q));
    REQUIRE(q.trace.size() == 40);
    for (const Event& e : q.trace) {
      const uint32_t i = (e.r.addr - 0x2000) / 64;
      for (uint32_t b = 0; b < 64; ++b) REQUIRE(e.r.rdata[b] == static_cast<uint8_t>(3 * i + b));
    }
  }
  SECTION("in-order mode: a read right behind a write sees the new data") {
    DramConfig c = small_config();
    c.reorder = false;
    DramModel m(c);
    Requester q;
    q.script = {make_req(true, 0x1008, 16, 1, 0xA0), make_req(false, 0x1000, 32, 2)};
    REQUIRE(run_until_idle(m, q));
    REQUIRE(q.trace.size() == 2);
    const DramResponse& rd = q.trace[1].r;
    CHECK_FALSE(rd.write);
    for (uint32_t b = 0; b < 32; ++b) {
      const uint8_t expect = (b >= 8 && b < 24) ? static_cast<uint8_t>(0xA0 + b - 8) : 0;
      CHECK(rd.rdata[b] == expect);
    }
    for (uint32_t b = 32; b < 64; ++b) CHECK(rd.rdata[b] == 0);
    CHECK(q.mismatches == 0);
  }
}

TEST_CASE("DRAM read latency is base..base+jitter when uncontended", "[core][dram]") {
  auto latencies = [](uint32_t base, uint32_t jitter) {
    DramConfig c = small_config();
    c.base_latency = base;
    c.jitter = jitter;
    DramModel m(c);
    Requester q;
    q.write_pct = 0;
    q.limit = 1;  // one at a time: the channel never delays anything
    q.max_requests = 400;
    REQUIRE(run_until_idle(m, q));
    REQUIRE(q.trace.size() == 400);
    std::set<uint64_t> seen;
    for (const Event& e : q.trace) seen.insert(e.cycle - e.r.issue_cycle);
    CHECK(m.stats().reads_completed == 400);
    CHECK(m.stats().max_read_latency == *seen.rbegin());
    return seen;
  };
  const std::set<uint64_t> jittered = latencies(40, 8);
  CHECK(*jittered.begin() >= 40);
  CHECK(*jittered.rbegin() <= 48);
  CHECK(jittered.size() >= 7);  // 400 uniform draws over 9 values cover nearly all of them
  const std::set<uint64_t> fixed = latencies(7, 0);
  CHECK(fixed == std::set<uint64_t>{7});
}

TEST_CASE("DRAM response channel respects bytes_per_cycle", "[core][dram]") {
  auto stream = [](uint32_t bpc, bool writes) {
    DramConfig c = small_config();
    c.bytes_per_cycle = bpc;
    c.max_outstanding = 32;
    DramModel m(c);
    Requester q;
    q.write_pct = writes ? 100 : 0;
    q.fixed_size = 64;
    run(m, q, 4000);
    return q.trace;
  };
  for (uint32_t bpc : {8u, 16u, 32u}) {
    CAPTURE(bpc);
    const std::vector<Event> t = stream(bpc, false);
    REQUIRE(t.size() > 10);
    const uint64_t gap = (64 + bpc - 1) / bpc;
    uint64_t min_gap = ~0ull;
    for (size_t i = 1; i < t.size(); ++i) min_gap = std::min(min_gap, t[i].cycle - t[i - 1].cycle);
    CHECK(min_gap == gap);  // never closer than the cost, and the stream is channel-bound
    const uint64_t span = t.back().cycle - t.front().cycle + gap;
    const uint64_t bytes = 64 * t.size();
    CHECK(bytes <= bpc * span);
    CHECK(bytes * 10 >= bpc * span * 9);  // saturated: within 10% of the bound
  }
  // Write acks cost one cycle whatever their size: acks can come back-to-back at bpc 8.
  const std::vector<Event> w = stream(8, true);
  REQUIRE(w.size() > 10);
  uint64_t min_gap = ~0ull;
  for (size_t i = 1; i < w.size(); ++i) min_gap = std::min(min_gap, w[i].cycle - w[i - 1].cycle);
  CHECK(min_gap == 1);
}

TEST_CASE("DRAM max_outstanding is respected", "[core][dram]") {
  DramConfig c = small_config();
  c.max_outstanding = 4;
  DramModel m(c);
  Requester q;
  q.resp_ready_pct = 20;  // responses drain slowly, so the limit is hit often
  uint64_t low_cycles = 0;
  for (int i = 0; i < 5000; ++i) {
    REQUIRE(m.outstanding() <= 4);
    if (!m.req_ready()) {
      ++low_cycles;
      CHECK((m.outstanding() == 4));
    }
    step(m, q);
  }
  CHECK(q.max_in_flight == 4);
  CHECK(low_cycles > 100);
  CHECK(m.stats().backpressure_cycles == low_cycles);
  CHECK(q.mismatches == 0);

  SECTION("accepting while not ready is refused and recorded") {
    while (m.req_ready()) step(m, q);
    CHECK_FALSE(m.accept(make_req(false, 0, 8, 9)));
    REQUIRE(m.error().has_value());
    CHECK(m.error()->kind == DramErrorKind::AcceptNotReady);
    CHECK(m.error()->cycle == m.cycle());
    CHECK(m.outstanding() <= 4);
  }
  SECTION("a second accept in the same cycle is refused") {
    DramModel fresh(c);
    CHECK(fresh.accept(make_req(false, 0, 8, 1)));
    CHECK_FALSE(fresh.accept(make_req(false, 8, 8, 2)));
    CHECK(fresh.outstanding() == 1);
    CHECK(fresh.error()->kind == DramErrorKind::AcceptNotReady);
  }
}

TEST_CASE("DRAM reorder on vs off", "[core][dram]") {
  auto inversions = [](bool reorder, uint64_t* reorders) {
    DramConfig c = small_config();
    c.reorder = reorder;
    c.base_latency = 20;
    c.jitter = 16;
    c.bytes_per_cycle = 64;
    DramModel m(c);
    Requester q;
    q.write_pct = 0;
    q.issue_pct = 50;
    run(m, q, 4000);
    CHECK(q.mismatches == 0);
    CHECK(q.trace.size() > 500);
    uint64_t n = 0;
    for (size_t i = 1; i < q.trace.size(); ++i) {
      n += q.trace[i].r.issue_cycle < q.trace[i - 1].r.issue_cycle;
    }
    *reorders = m.stats().reorders;
    return n;
  };
  uint64_t reorders = 0;
  CHECK(inversions(true, &reorders) > 0);
  CHECK(reorders > 0);
  CHECK(inversions(false, &reorders) == 0);
  CHECK(reorders == 0);
}

TEST_CASE("DRAM bursty mode forces back-pressure stretches", "[core][dram]") {
  auto run_bursty = [](bool bursty, uint64_t* longest) {
    DramConfig c = small_config();
    c.max_outstanding = 64;  // never the reason for back-pressure here
    c.bursty = bursty;
    c.burst_period = 100;
    c.burst_duty_pct = 30;
    DramModel m(c);
    Requester q;
    q.issue_pct = 5;
    uint64_t low = 0;
    uint64_t run_len = 0;
    *longest = 0;
    for (int i = 0; i < 20000; ++i) {
      if (!m.req_ready()) {
        ++low;
        *longest = std::max(*longest, ++run_len);
      } else {
        run_len = 0;
      }
      step(m, q);
    }
    CHECK(m.stats().backpressure_cycles == low);
    CHECK(q.mismatches == 0);
    return low;
  };
  uint64_t longest = 0;
  const uint64_t low = run_bursty(true, &longest);
  CHECK(low > 20000 * 20 / 100);
  CHECK(low < 20000 * 40 / 100);
  CHECK(longest > 10);  // stretches, not isolated cycles
  CHECK(run_bursty(false, &longest) == 0);
}

TEST_CASE("DRAM is deterministic", "[core][dram]") {
  DramConfig c = small_config();
  c.bursty = true;
  c.burst_period = 60;
  c.seed = 1234;
  SECTION("same seed, same requests: identical traces and state") {
    DramModel a(c), b(c);
    Requester qa, qb;
    qa.resp_ready_pct = qb.resp_ready_pct = 80;
    run(a, qa, 5000);
    run(b, qb, 5000);
    REQUIRE(qa.trace.size() > 300);
    CHECK(trace_hash(qa.trace) == trace_hash(qb.trace));
    CHECK(same_trace(qa.trace, qb.trace));
    CHECK(a.digest() == b.digest());
    CHECK(a.stats() == b.stats());
  }
  SECTION("different seed: different timing, same memory results") {
    // Once with jitter only and once with bursts only, so each generator's seeding is covered.
    const bool bursty = GENERATE(false, true);
    CAPTURE(bursty);
    c.bursty = bursty;
    if (bursty) c.jitter = 0;
    DramConfig c2 = c;
    c2.seed = 99;
    DramModel a(c), b(c2);
    Requester qa, qb;
    qa.script = qb.script = disjoint_script(0x1000, 60);
    REQUIRE(run_until_idle(a, qa));
    REQUIRE(run_until_idle(b, qb));
    CHECK(qa.mismatches == 0);
    CHECK(qb.mismatches == 0);
    CHECK(timing_hash(qa.trace) != timing_hash(qb.trace));
    CHECK(a.memory_digest() == b.memory_digest());
    CHECK(a.digest() != b.digest());  // the timing state differs (seed, RNG, clock)
    // And the reads returned the written data, whatever their order.
    for (const Event& e : qa.trace) {
      if (e.r.write) continue;
      const uint32_t i = (e.r.addr - 0x1000) / 64;
      CHECK(e.r.rdata[5] == static_cast<uint8_t>(i * 7 + 5));
    }
  }
}

TEST_CASE("DRAM save/restore continues bit-identically", "[core][dram]") {
  DramConfig c = small_config();
  c.bursty = true;
  c.burst_period = 80;
  c.max_outstanding = 12;
  c.seed = 77;
  c.reorder = GENERATE(true, false);
  CAPTURE(c.reorder);
  DramModel a(c);
  Requester qa;
  qa.resp_ready_pct = 75;
  qa.issue_pct = 40;  // light enough that burst stalls, not a full queue, decide acceptance
  qa.region = 1024;
  qa.shadow.assign(qa.region, 0);
  const std::vector<uint8_t> blob = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  REQUIRE(a.write(0x80000, blob));  // a backdoor page outside the requester's region
  run(a, qa, 1500);
  a.delay_next_response(3, 50);  // pending hooks are part of the state
  a.duplicate_next_response(40);
  a.drop_next_response(41);
  // The presented response (here: read data not yet handshaken) is part of the state.
  auto presenting_data = [](const DramModel& m) {
    const DramResponse* r = m.resp();
    return r && !r->write &&
           std::any_of(r->rdata.begin(), r->rdata.end(), [](uint8_t b) { return b != 0; });
  };
  // So are the requests still in flight: save with plenty of them, so that their order matters.
  auto interesting = [&](const DramModel& m) { return presenting_data(m) && m.outstanding() >= 8; };
  for (int i = 0; i < 20000 && !interesting(a); ++i) step(a, qa);
  REQUIRE(interesting(a));

  std::vector<uint8_t> saved;
  a.save(saved);
  CHECK(saved.size() < 64 * 1024);  // only touched pages are stored

  DramConfig other;
  other.size_bytes = 2 << 20;  // restore replaces the config too
  other.seed = 5;
  DramModel b(other);
  size_t offset = 0;
  std::string err;
  REQUIRE(b.restore(saved, offset, err));
  CHECK(err.empty());
  CHECK(offset == saved.size());
  CHECK(b.size() == c.size_bytes);
  CHECK(b.digest() == a.digest());
  CHECK(b.stats() == a.stats());
  std::vector<uint8_t> resaved;
  b.save(resaved);
  CHECK(resaved == saved);

  Requester qb = qa;
  const size_t before = qa.trace.size();
  run(a, qa, 4000);
  run(b, qb, 4000);
  REQUIRE(qa.trace.size() > before + 300);
  CHECK(same_trace(qa.trace, qb.trace));
  CHECK(a.digest() == b.digest());
  CHECK(a.stats() == b.stats());
  CHECK(a.stats().delayed == 1);
  CHECK(qa.mismatches == 0);

  SECTION("restoring into a model that has run on is exact too") {
    DramModel d(c);
    Requester qd;
    qd.region = 4096;
    run(d, qd, 2000);  // touches pages the saved state never touched
    size_t off = 0;
    REQUIRE(d.restore(saved, off, err));
    std::vector<uint8_t> again;
    d.save(again);
    CHECK(again == saved);
  }
}

TEST_CASE("DRAM page versions change exactly when a page may have changed", "[core][dram]") {
  DramModel a(small_config());
  Requester q;  // reads and writes within [0x1000, 0x2000): page 1
  run(a, q, 500);
  REQUIRE(a.write(0x8000, std::vector<uint8_t>{1, 2, 3}));  // page 8, backdoor
  std::vector<uint32_t> pages;
  a.saved_pages(pages);
  CHECK(pages == std::vector<uint32_t>{1, 8});

  // save() is save_meta() followed by the stored pages' bytes, back to back.
  std::vector<uint8_t> saved, pieced;
  a.save(saved);
  a.save_meta(pieced);
  for (uint32_t p : pages) {
    CHECK(a.page_hash(p) == DramModel::hash_page(a.page_bytes(p).data()));
    pieced.insert(pieced.end(), a.page_bytes(p).begin(), a.page_bytes(p).end());
  }
  CHECK(pieced == saved);

  const uint64_t v1 = a.page_version(1), v8 = a.page_version(8), v0 = a.page_version(0);
  CHECK(v1 != v8);
  // Reading (backdoor, digests) changes nothing.
  std::vector<uint8_t> buf(16);
  REQUIRE(a.read(0x8000, buf));
  (void)a.digest();
  CHECK(a.page_version(1) == v1);
  CHECK(a.page_version(8) == v8);
  // A backdoor write bumps only its page, even when it writes the same bytes.
  REQUIRE(a.write(0x8000, std::vector<uint8_t>{1, 2, 3}));
  CHECK(a.page_version(8) != v8);
  CHECK(a.page_version(1) == v1);
  CHECK(a.page_version(0) == v0);
  // Writes through the port bump the pages they hit.
  q.write_pct = 100;
  run(a, q, 200);
  REQUIRE(a.stats().write_requests > 0);
  CHECK(a.page_version(1) != v1);

  // A copy keeps the versions of identical pages; a restored model gets new ones.
  const DramModel copy = a;
  CHECK(copy.page_version(1) == a.page_version(1));
  saved.clear();
  a.save(saved);
  DramModel b(small_config());
  size_t offset = 0;
  std::string err;
  REQUIRE(b.restore(saved, offset, err));
  CHECK(b.page_version(1) != a.page_version(1));
  CHECK(b.page_hash(1) == a.page_hash(1));
  CHECK(b.digest() == a.digest());
}

TEST_CASE("DRAM restore rejects truncated and garbage buffers", "[core][dram]") {
  DramModel a(small_config());
  Requester q;
  run(a, q, 300);
  std::vector<uint8_t> saved;
  a.save(saved);

  DramModel target(small_config());
  REQUIRE(target.write(0x100, std::vector<uint8_t>{42, 43}));
  const uint64_t before = target.digest();
  auto rejects = [&](std::span<const uint8_t> buf) {
    size_t offset = 0;
    std::string err;
    const bool ok = target.restore(buf, offset, err);
    CHECK(offset == 0);
    CHECK(err.find("offset") != std::string::npos);
    return !ok && !err.empty();
  };

  SECTION("every truncation fails and leaves the model untouched") {
    std::vector<size_t> cuts;
    for (size_t n = 0; n < 2500 && n < saved.size(); ++n) cuts.push_back(n);
    for (size_t n = 2500; n < saved.size(); n += 997) cuts.push_back(n);
    cuts.push_back(saved.size() - 1);
    for (size_t n : cuts) {
      CAPTURE(n);
      REQUIRE(rejects(std::span<const uint8_t>(saved.data(), n)));
    }
    CHECK(target.digest() == before);
    uint8_t b[2] = {0, 0};
    REQUIRE(target.read(0x100, b));
    CHECK(b[0] == 42);
  }
  SECTION("the error names the offset at fault") {
    size_t offset = 0;
    std::string err;
    CHECK_FALSE(target.restore(std::span<const uint8_t>(saved.data(), 20), offset, err));
    CHECK(err.find("byte offset 20") != std::string::npos);
    std::vector<uint8_t> v = saved;
    v[8] = 99;  // format version
    CHECK_FALSE(target.restore(v, offset, err));
    CHECK(err.find("byte offset 8") != std::string::npos);
    CHECK(err.find("version") != std::string::npos);
  }
  SECTION("garbage and corrupted fields") {
    Rng rng(3);
    for (int i = 0; i < 200; ++i) {
      std::vector<uint8_t> junk(rng.below(5000));
      for (auto& x : junk) x = static_cast<uint8_t>(rng.next());
      REQUIRE(rejects(junk));
    }
    std::vector<uint8_t> v = saved;
    v[0] ^= 1;  // magic
    CHECK(rejects(v));
    v = saved;
    // config.max_outstanding (after magic[8], version:u32, size:u64, 3 x u32) -> 0: invalid.
    std::fill_n(v.begin() + 32, 4, uint8_t{0});
    CHECK(rejects(v));
    // Random single-byte corruptions must never crash; most are caught, the rest restore a model
    // that still runs safely.
    for (int i = 0; i < 300; ++i) {
      v = saved;
      v[rng.below(std::min<size_t>(v.size(), 1500))] = static_cast<uint8_t>(rng.next());
      DramModel t(small_config());
      size_t off = 0;
      std::string e;
      if (t.restore(v, off, e)) {
        Requester qq;
        run(t, qq, 200);
      } else {
        CHECK(e.find("offset") != std::string::npos);
      }
    }
    CHECK(target.digest() == before);
  }
  SECTION("states can be chained in one buffer") {
    std::vector<uint8_t> two = saved;
    DramModel other(small_config());
    REQUIRE(other.write(0x4000, std::vector<uint8_t>{7}));
    other.save(two);
    size_t offset = 0;
    std::string err;
    REQUIRE(target.restore(two, offset, err));
    CHECK(offset == saved.size());
    CHECK(target.digest() == a.digest());
    REQUIRE(target.restore(two, offset, err));
    CHECK(offset == two.size());
    CHECK(target.digest() == other.digest());
  }
}

TEST_CASE("DRAM records the first bad access and survives it", "[core][dram]") {
  DramModel m(small_config());
  const std::vector<uint8_t> ones(64, 0xFF);
  REQUIRE(m.write(0x2000, ones));
  const uint64_t mem_before = m.memory_digest();
  Requester q;
  q.base = 0;
  q.region = 64;
  q.shadow.assign(64, 0);
  q.script = {
      make_req(false, 0x2004, 16, 1),           // misaligned read: zeros, first error
      make_req(true, 0x2008, 12, 2, 0x11),      // bad size: dropped
      make_req(true, (1 << 20) - 8, 16, 3, 1),  // runs past the end: dropped
      make_req(false, 0xFFFFFFF8u, 64, 4),      // far out of range: zeros
      make_req(true, 0x2000, 0, 5),             // size 0
      make_req(false, 0x2000, 200, 6),          // size larger than the port
  };
  REQUIRE(run_until_idle(m, q));
  REQUIRE(q.trace.size() == 6);  // every request still gets its response
  for (const Event& e : q.trace) {
    for (uint8_t b : e.r.rdata) REQUIRE(b == 0);
  }
  CHECK(m.memory_digest() == mem_before);
  CHECK(m.stats().errors == 6);
  CHECK(m.stats().bytes_written == 0);
  REQUIRE(m.error().has_value());
  const DramError& e = *m.error();
  CHECK(e.kind == DramErrorKind::Misaligned);
  CHECK(e.addr == 0x2004);
  CHECK(e.size == 16);
  CHECK(e.tag == 1);
  CHECK_FALSE(e.write);
  const auto first =
      std::find_if(q.trace.begin(), q.trace.end(), [](const Event& ev) { return ev.r.tag == 1; });
  REQUIRE(first != q.trace.end());
  CHECK(e.cycle == first->r.issue_cycle);
  CHECK(e.to_string().find("misaligned") != std::string::npos);

  auto first_error = [](const DramRequest& r) {
    DramModel fresh(small_config());
    REQUIRE(fresh.accept(r));
    return fresh.error().value().kind;
  };
  CHECK(first_error(make_req(true, 0x2008, 12, 2)) == DramErrorKind::BadSize);
  CHECK(first_error(make_req(true, (1 << 20) - 8, 16, 3)) == DramErrorKind::OutOfRange);
  CHECK(first_error(make_req(false, 0x2000, 72, 3)) == DramErrorKind::BadSize);

  m.clear_error();
  CHECK_FALSE(m.error().has_value());
  CHECK_FALSE(m.pop_resp());
  CHECK(m.error()->kind == DramErrorKind::PopWithoutResponse);

  SECTION("backdoor access is bounds-checked") {
    std::vector<uint8_t> buf(16);
    CHECK_FALSE(m.read((1 << 20) - 8, buf));
    CHECK_FALSE(m.write((1 << 20) - 8, buf));
    CHECK(m.read((1 << 20) - 16, buf));
    CHECK(m.size() == (1u << 20));
  }
}

TEST_CASE("DRAM fault hooks", "[core][dram]") {
  DramConfig c = small_config();
  c.jitter = 0;
  c.base_latency = 30;
  c.bytes_per_cycle = 64;  // one cycle per response: no queueing, latencies are exact
  std::vector<DramRequest> script;
  for (uint8_t t = 0; t < 8; ++t) script.push_back(make_req(t == 6, 0x1000 + 64u * t, 64, t, t));

  auto run_with = [&](auto arm) {
    DramModel m(c);
    std::vector<uint8_t> pattern(512);
    for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<uint8_t>(i);
    REQUIRE(m.write(0x1000, pattern));
    arm(m);
    Requester q;
    q.script = script;
    for (int i = 0; i < 1000; ++i) step(m, q);
    CHECK(m.outstanding() == 0);
    return std::pair<std::vector<Event>, DramModel>(q.trace, m);
  };
  auto count_tag = [](const std::vector<Event>& t, uint8_t tag) {
    return std::count_if(t.begin(), t.end(), [&](const Event& e) { return e.r.tag == tag; });
  };
  auto find_tag = [](const std::vector<Event>& t, uint8_t tag) {
    return *std::find_if(t.begin(), t.end(), [&](const Event& e) { return e.r.tag == tag; });
  };

  const auto [plain, plain_model] = run_with([](DramModel&) {});
  REQUIRE(plain.size() == 8);

  SECTION("drop: the response never appears, the write still lands") {
    auto [t, m] = run_with([](DramModel& mm) {
      mm.drop_next_response(2);
      mm.drop_next_response(6);
    });
    CHECK(t.size() == 6);
    CHECK(count_tag(t, 2) == 0);
    CHECK(count_tag(t, 6) == 0);
    CHECK(m.stats().dropped == 2);
    CHECK(m.memory_digest() == plain_model.memory_digest());
  }
  SECTION("duplicate: the response appears twice, identical") {
    auto [t, m] = run_with([](DramModel& mm) { mm.duplicate_next_response(4); });
    CHECK(t.size() == 9);
    REQUIRE(count_tag(t, 4) == 2);
    std::vector<Event> dups;
    std::copy_if(t.begin(), t.end(), std::back_inserter(dups),
                 [](const Event& e) { return e.r.tag == 4; });
    CHECK(dups[0].r.rdata == dups[1].r.rdata);
    CHECK(dups[0].r.rdata[1] == 1);  // mem[0x1101] from the backdoor pattern
    CHECK(dups[1].cycle > dups[0].cycle);
    CHECK(m.stats().duplicated == 1);
  }
  SECTION("delay: the response is shifted by exactly the delay") {
    auto [t, m] = run_with([](DramModel& mm) { mm.delay_next_response(3, 100); });
    CHECK(t.size() == 8);
    const Event base = find_tag(plain, 3);
    const Event late = find_tag(t, 3);
    CHECK(base.cycle - base.r.issue_cycle == 30);
    CHECK(late.cycle - late.r.issue_cycle == 130);
    CHECK(t.back().r.tag == 3);
    CHECK(m.stats().delayed == 1);
  }
  SECTION("hooks fire once") {
    auto [t, m] = run_with([](DramModel& mm) { mm.drop_next_response(1); });
    DramModel again = m;
    Requester q;
    q.script = {make_req(false, 0x1000, 8, 1)};
    for (int i = 0; i < 200; ++i) step(again, q);
    CHECK(count_tag(q.trace, 1) == 1);
  }
}

TEST_CASE("DRAM digests are incremental and exact", "[core][dram]") {
  DramModel a(small_config());
  const uint64_t empty = a.memory_digest();
  Requester q;
  q.region = 64 * 1024;
  q.shadow.assign(q.region, 0);
  run(a, q, 3000);
  const uint64_t after = a.memory_digest();
  CHECK(after != empty);
  CHECK(a.memory_digest() == after);  // stable when nothing changed

  // A fresh model given the same bytes through the backdoor hashes the same.
  std::vector<uint8_t> all(a.size());
  REQUIRE(a.read(0, all));
  DramModel b(small_config());
  REQUIRE(b.write(0, all));
  CHECK(b.memory_digest() == after);

  // Changing one byte changes it; changing it back restores it.
  uint8_t one[1] = {0};
  REQUIRE(a.read(0x1234, one));
  const uint8_t old = one[0];
  one[0] = static_cast<uint8_t>(old + 1);
  REQUIRE(a.write(0x1234, one));
  CHECK(a.memory_digest() != after);
  one[0] = old;
  REQUIRE(a.write(0x1234, one));
  CHECK(a.memory_digest() == after);

  // Same memory, different future behaviour: digest differs, memory_digest does not.
  DramModel c1(small_config()), c2(small_config());
  CHECK(c1.digest() == c2.digest());
  REQUIRE(c2.accept(make_req(false, 0, 8, 0)));
  CHECK(c1.memory_digest() == c2.memory_digest());
  CHECK(c1.digest() != c2.digest());
  c1.delay_next_response(0, 5);
  DramModel c3(small_config());
  CHECK(c1.digest() != c3.digest());
}

TEST_CASE("DRAM per-cycle path does not allocate", "[core][dram]") {
  if (!BUD_COUNT_ALLOCATIONS) {
    WARN("allocation counting is disabled in sanitizer builds");
    return;
  }
  DramConfig c = small_config();
  c.bursty = true;
  c.burst_period = 50;
  DramModel m(c);
  std::array<DramRequest, 16> reqs{};
  for (uint8_t i = 0; i < reqs.size(); ++i) {
    reqs[i] = make_req(i % 3 == 0, 0x1000 + 64u * i, static_cast<uint8_t>(8 * (1 + i % 8)), i, i);
  }
  reqs[5].addr = 0x1004;  // an error is recorded on the per-cycle path too
  m.duplicate_next_response(2);
  m.drop_next_response(3);
  m.delay_next_response(4, 20);
  const uint64_t before = g_allocations;
  uint64_t popped = 0;
  for (uint32_t cyc = 0; cyc < 5000; ++cyc) {
    const bool ready = m.req_ready();
    const DramResponse* r = m.resp();
    if (ready && cyc % 3 != 0) m.accept(reqs[cyc % reqs.size()]);
    if (r && cyc % 4 != 0) popped += m.pop_resp();
    m.tick();
  }
  CHECK(g_allocations == before);
  CHECK(popped > 1000);
  CHECK(m.stats().duplicated == 1);
  CHECK(m.stats().dropped == 1);
  CHECK(m.stats().delayed == 1);
  CHECK(m.error().has_value());
  // The counter works: a digest (not per-cycle) does allocate.
  m.digest();
  CHECK(g_allocations > before);
}

TEST_CASE("DRAM page hash and digests are pinned", "[core][dram]") {
  // Page hashes and digests are stored in packets (checkpoint pages, state digests): a change of
  // the functions would make every recorded packet diverge. Page hashes are XXH3-64 of the page;
  // digest values computed once (format 2.0 packets, BUDNPU05), written here.
  std::vector<uint8_t> page(bud::emu::kDramPageBytes);
  for (size_t i = 0; i < page.size(); ++i) page[i] = static_cast<uint8_t>(i * 7 + 1);
  CHECK(DramModel::hash_page(page.data()) == XXH3_64bits(page.data(), page.size()));
  std::vector<uint8_t> zero(bud::emu::kDramPageBytes, 0);
  CHECK(DramModel::hash_page(zero.data()) == XXH3_64bits(zero.data(), zero.size()));
  DramModel m(small_config());
  CHECK(m.memory_digest() == 0xc7ae875a83ae21aaull);
  CHECK(m.digest() == 0xc8049718eba3b7a1ull);
  REQUIRE(m.write(0x1000, std::span<const uint8_t>(page.data(), 64)));
  CHECK(m.memory_digest() == 0x57fa5ef7b2cf33e9ull);
  CHECK(m.digest() == 0x8e42907b28129924ull);
}
