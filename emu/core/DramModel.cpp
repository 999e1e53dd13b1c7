#include "emu/core/DramModel.h"

#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

#include "emu/core/Hash.h"

namespace bud::emu {

namespace {

// Save-format identity. Bump kFormatVersion on any layout change.
constexpr uint8_t kMagic[8] = {'B', 'U', 'D', 'D', 'R', 'A', 'M', '\n'};
constexpr uint32_t kFormatVersion = 2;

// Decorrelates the burst generator from the jitter generator (both come from config.seed).
constexpr uint64_t kBurstSeedSalt = 0xB0257B0257B0257Bull;
// Seeds of the two digests (XXH3-64, emu/core/Hash.h): "memory" and "timing".
constexpr uint64_t kMemorySeed = 0x6D656D6F7279ull;
constexpr uint64_t kTimingSeed = 0x74696D696E67ull;

uint64_t zero_page_hash() {
  static const uint64_t h = [] {
    std::array<uint8_t, kDramPageBytes> zeros{};
    return DramModel::hash_page(zeros.data());
  }();
  return h;
}

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "%s:%d: DramModel: %s: %s\n", __FILE__, __LINE__, what, detail.c_str());
  std::abort();
}

// ---- Serialization helpers (little-endian, fixed widths) ----

struct Writer {
  std::vector<uint8_t>& out;
  void u8(uint8_t v) { out.push_back(v); }
  void b(bool v) { out.push_back(v ? 1 : 0); }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void bytes(const uint8_t* p, size_t n) { out.insert(out.end(), p, p + n); }
};

// Bounds-checked reader: the first failure records a message naming the byte offset and every
// later read fails too, so parsing code can check once per section.
struct Reader {
  std::span<const uint8_t> in;
  size_t pos;
  std::string err;

  bool ok() const { return err.empty(); }
  bool fail_at(size_t at, const std::string& msg) {
    if (err.empty()) err = "dram restore: " + msg + " at byte offset " + std::to_string(at);
    return false;
  }
  bool need(size_t n, const char* what) {
    if (!ok()) return false;
    if (pos > in.size() || in.size() - pos < n) {
      return fail_at(pos, std::string("truncated state reading ") + what);
    }
    return true;
  }
  uint8_t u8(const char* what) {
    if (!need(1, what)) return 0;
    return in[pos++];
  }
  bool b(const char* what) {
    const size_t at = pos;
    const uint8_t v = u8(what);
    if (v > 1) fail_at(at, std::string("invalid boolean for ") + what);
    return v == 1;
  }
  uint32_t u32(const char* what) {
    if (!need(4, what)) return 0;
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(in[pos++]) << (8 * i);
    return v;
  }
  uint64_t u64(const char* what) {
    if (!need(8, what)) return 0;
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(in[pos++]) << (8 * i);
    return v;
  }
  void bytes(uint8_t* p, size_t n, const char* what) {
    if (!need(n, what)) return;
    std::memcpy(p, in.data() + pos, n);
    pos += n;
  }
};

void write_rng(Writer& w, const Rng& r) {
  for (uint64_t s : r.state()) w.u64(s);
}

Rng read_rng(Reader& r, const char* what) {
  std::array<uint64_t, 4> s{};
  for (auto& x : s) x = r.u64(what);
  Rng rng;
  rng.set_state(s);
  return rng;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Config and errors

std::string DramConfig::validate() const {
  if (size_bytes == 0) return "dram config: size_bytes must be > 0";
  if (size_bytes % kDramPageBytes != 0) {
    return "dram config: size_bytes (" + std::to_string(size_bytes) + ") must be a multiple of " +
           std::to_string(kDramPageBytes);
  }
  if (size_bytes > (1ull << 32)) {
    return "dram config: size_bytes (" + std::to_string(size_bytes) +
           ") exceeds the 32-bit address space";
  }
  if (base_latency == 0) return "dram config: base_latency must be >= 1 cycle";
  // Keeps accept_cycle + latency far from overflow and catches obviously corrupt values.
  if (base_latency > (1u << 24) || jitter > (1u << 24)) {
    return "dram config: base_latency and jitter must each be <= 16777216 cycles";
  }
  if (bytes_per_cycle == 0) return "dram config: bytes_per_cycle must be >= 1";
  if (max_outstanding == 0 || max_outstanding > kDramMaxOutstanding) {
    return "dram config: max_outstanding (" + std::to_string(max_outstanding) + ") must be in 1.." +
           std::to_string(kDramMaxOutstanding);
  }
  if (bursty) {
    if (burst_period < 2 || burst_period > (1u << 24)) {
      return "dram config: burst_period (" + std::to_string(burst_period) +
             ") must be in 2..16777216 cycles";
    }
    if (burst_duty_pct < 1 || burst_duty_pct > 99) {
      return "dram config: burst_duty_pct (" + std::to_string(burst_duty_pct) +
             ") must be in 1..99";
    }
  }
  return {};
}

const char* dram_error_kind_name(DramErrorKind kind) {
  switch (kind) {
    case DramErrorKind::Misaligned:
      return "misaligned";
    case DramErrorKind::BadSize:
      return "bad-size";
    case DramErrorKind::OutOfRange:
      return "out-of-range";
    case DramErrorKind::AcceptNotReady:
      return "accept-not-ready";
    case DramErrorKind::PopWithoutResponse:
      return "pop-without-response";
  }
  return "unknown";
}

std::string DramError::to_string() const {
  char buf[160];
  std::snprintf(buf, sizeof buf, "dram: %s %s addr=0x%x size=%u tag=%u at cycle %llu",
                dram_error_kind_name(kind), write ? "write" : "read", addr,
                static_cast<unsigned>(size), static_cast<unsigned>(tag),
                static_cast<unsigned long long>(cycle));
  return buf;
}

// ---------------------------------------------------------------------------------------------
// Construction

void DramModel::ZeroedBytes::assign(size_t n, uint8_t /*zero*/) {
  release();
  void* p = ::mmap(nullptr, n ? n : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  p_ = static_cast<uint8_t*>(p);
  n_ = n;
}

void DramModel::ZeroedBytes::release() {
  if (p_) ::munmap(p_, n_ ? n_ : 1);
  p_ = nullptr;
  n_ = 0;
}

DramModel::DramModel(const DramConfig& config) : config_(config) {
  if (std::string e = config_.validate(); !e.empty()) fail("invalid config", e);
  const size_t pages = config_.size_bytes / kDramPageBytes;
  mem_.assign(config_.size_bytes, 0);
  touched_.assign(pages, 0);
  dirty_.assign(pages, 0);
  page_hash_.assign(pages, zero_page_hash());
  page_version_.assign(pages, StateSegments::new_version());  // every page holds zeros
  recompute_derived();
  t_.rng.reseed(config_.seed);
  t_.burst_rng.reseed(config_.seed ^ kBurstSeedSalt);
  if (config_.bursty) {
    t_.burst_stalled = false;
    t_.burst_left = draw_burst_length(false);
  }
  t_.ready = compute_ready();
}

void DramModel::recompute_derived() {
  const uint32_t bpc = config_.bytes_per_cycle;
  for (uint32_t s = 0; s <= kDramMaxBytes; ++s) {
    read_cost_[s] = std::max<uint32_t>(1, (s + bpc - 1) / bpc);
  }
  const uint64_t period = config_.burst_period;
  stall_mean_ = std::max<uint64_t>(1, period * config_.burst_duty_pct / 100);
  open_mean_ = std::max<uint64_t>(1, period > stall_mean_ ? period - stall_mean_ : 1);
}

bool DramModel::compute_ready() const {
  return !t_.burst_stalled && t_.count < config_.max_outstanding;
}

// Uniform in [1, 2*mean - 1]: mean `mean`, never zero.
uint64_t DramModel::draw_burst_length(bool stalled) {
  const uint64_t mean = stalled ? stall_mean_ : open_mean_;
  return 1 + t_.burst_rng.below(2 * mean - 1);
}

// ---------------------------------------------------------------------------------------------
// Per-cycle path: no allocation, no exceptions, no I/O.

bool DramModel::request_ok(const DramRequest& req, DramErrorKind* kind) const {
  if (req.size < 8 || req.size > kDramMaxBytes || req.size % 8 != 0) {
    *kind = DramErrorKind::BadSize;
    return false;
  }
  if (req.addr % 8 != 0) {
    *kind = DramErrorKind::Misaligned;
    return false;
  }
  if (static_cast<uint64_t>(req.addr) + req.size > config_.size_bytes) {
    *kind = DramErrorKind::OutOfRange;
    return false;
  }
  return true;
}

void DramModel::record_error(DramErrorKind kind, const DramRequest& req) {
  ++stats_.errors;
  if (error_) return;
  error_ = DramError{kind, req.write, t_.cycle, req.addr, req.size, req.tag};
}

bool DramModel::accept(const DramRequest& req) {
  if (!t_.ready || t_.accepted_this_cycle) {
    record_error(DramErrorKind::AcceptNotReady, req);
    return false;
  }
  // The lowest free slot.
  const uint32_t idx = ~live_ ? static_cast<uint32_t>(std::countr_zero(~live_)) : 64u;
  if (idx >= kDramMaxOutstanding) {  // unreachable while count <= max_outstanding <= capacity
    record_error(DramErrorKind::AcceptNotReady, req);
    return false;
  }
  DramErrorKind kind{};
  const bool ok = request_ok(req, &kind);
  if (!ok) record_error(kind, req);

  Slot& s = t_.slots[idx];
  s.req = req;
  s.seq = t_.next_seq++;
  s.accept_cycle = t_.cycle;
  // Always draw, even with jitter 0, so the generator's position depends only on the number of
  // accepted requests.
  s.ready_at = t_.cycle + config_.base_latency + t_.rng.below(uint64_t{config_.jitter} + 1);
  scan_after_ = std::min(scan_after_, s.ready_at);
  s.valid = true;
  live_ |= uint64_t{1} << idx;
  s.bad = !ok;
  ++t_.count;
  t_.accepted_this_cycle = true;
  if (req.write) {
    ++stats_.write_requests;
  } else {
    ++stats_.read_requests;
  }
  return true;
}

bool DramModel::pop_resp() {
  if (!t_.has_current) {
    ++stats_.errors;
    if (!error_) {
      error_ = DramError{DramErrorKind::PopWithoutResponse, false, t_.cycle, 0, 0, 0};
    }
    return false;
  }
  t_.has_current = false;
  if (t_.current_slot >= 0) {
    t_.slots[static_cast<size_t>(t_.current_slot)].valid = false;
    live_ &= ~(uint64_t{1} << t_.current_slot);
    --t_.count;
    t_.current_slot = -1;
  }
  if (t_.current_duplicate) {
    t_.current_duplicate = false;
    t_.pending_duplicate = true;
  }
  return true;
}

void DramModel::tick() {
  if (!t_.ready) ++stats_.backpressure_cycles;
  ++t_.cycle;
  t_.accepted_this_cycle = false;
  if (config_.bursty && --t_.burst_left == 0) {
    t_.burst_stalled = !t_.burst_stalled;
    t_.burst_left = draw_burst_length(t_.burst_stalled);
  }
  t_.ready = compute_ready();
  present_next();
}

void DramModel::mark_written(uint64_t addr, uint64_t len) {
  if (len == 0) return;
  const uint64_t first = addr / kDramPageBytes;
  const uint64_t last = (addr + len - 1) / kDramPageBytes;
  for (uint64_t p = first; p <= last; ++p) {
    touched_[p] = 1;
    dirty_[p] = 1;
  }
}

void DramModel::present_next() {
  if (t_.has_current || t_.cycle < t_.channel_free_at) return;
  if (t_.pending_duplicate) {
    t_.pending_duplicate = false;
    t_.has_current = true;
    t_.current_slot = -1;
    t_.channel_free_at =
        t_.cycle +
        (t_.current.write ? 1 : read_cost_[std::min<uint32_t>(t_.current.size, kDramMaxBytes)]);
    ++stats_.duplicated;
    ++stats_.responses;
    return;
  }
  if (t_.count == 0 || t_.cycle < scan_after_) return;
  // Each pass either presents, or consumes a hook / frees a slot, so this ends within
  // 2 * kDramMaxOutstanding passes.
  while (t_.count > 0) {
    int best = -1;
    if (config_.reorder) {
      for (uint64_t m = live_; m; m &= m - 1) {
        const auto i = static_cast<uint32_t>(std::countr_zero(m));
        const Slot& s = t_.slots[i];
        if (s.ready_at > t_.cycle) continue;
        if (best < 0) {
          best = static_cast<int>(i);
          continue;
        }
        const Slot& b = t_.slots[static_cast<size_t>(best)];
        if (s.ready_at < b.ready_at || (s.ready_at == b.ready_at && s.seq < b.seq)) {
          best = static_cast<int>(i);
        }
      }
    } else {
      for (uint64_t m = live_; m; m &= m - 1) {
        const auto i = static_cast<uint32_t>(std::countr_zero(m));
        const Slot& s = t_.slots[i];
        if (best < 0 || s.seq < t_.slots[static_cast<size_t>(best)].seq) {
          best = static_cast<int>(i);
        }
      }
      if (best >= 0 && t_.slots[static_cast<size_t>(best)].ready_at > t_.cycle) best = -1;
    }
    if (best < 0) {
      // Nothing is ready: skip the scan until the earliest slot can be.
      uint64_t earliest = UINT64_MAX;
      for (uint64_t m = live_; m; m &= m - 1)
        earliest = std::min(earliest, t_.slots[std::countr_zero(m)].ready_at);
      scan_after_ = earliest;
      return;
    }

    Slot& s = t_.slots[static_cast<size_t>(best)];
    Hook& hook = t_.hooks[s.req.tag];
    if (hook.delay > 0) {
      s.ready_at = t_.cycle + hook.delay;
      hook.delay = 0;
      ++stats_.delayed;
      continue;
    }

    const DramRequest& req = s.req;
    const uint32_t size = std::min<uint32_t>(req.size, kDramMaxBytes);
    if (req.write && !s.bad) {
      std::memcpy(mem_.data() + req.addr, req.wdata.data(), size);
      mark_written(req.addr, size);
      stats_.bytes_written += size;
    }
    if (hook.drop > 0) {
      --hook.drop;
      ++stats_.dropped;
      s.valid = false;
      live_ &= ~(uint64_t{1} << best);
      --t_.count;
      continue;
    }

    bool older_waiting = false;
    for (uint64_t m = live_; m; m &= m - 1)
      older_waiting |= t_.slots[std::countr_zero(m)].seq < s.seq;
    if (older_waiting) ++stats_.reorders;

    DramResponse& r = t_.current;
    r.write = req.write;
    r.tag = req.tag;
    r.addr = req.addr;
    r.size = req.size;
    r.issue_cycle = s.accept_cycle;
    r.rdata.fill(0);
    if (!req.write) {
      if (!s.bad) {
        std::memcpy(r.rdata.data(), mem_.data() + req.addr, size);
        stats_.bytes_read += size;
      }
      const uint64_t latency = t_.cycle - s.accept_cycle;
      ++stats_.reads_completed;
      stats_.total_read_latency += latency;
      stats_.max_read_latency = std::max(stats_.max_read_latency, latency);
    }
    ++stats_.responses;
    t_.has_current = true;
    t_.current_slot = static_cast<int8_t>(best);
    t_.channel_free_at = t_.cycle + (req.write ? 1 : read_cost_[size]);
    if (hook.duplicate > 0) {
      --hook.duplicate;
      t_.current_duplicate = true;
    }
    return;
  }
}

// ---------------------------------------------------------------------------------------------
// Backdoor and fault hooks

bool DramModel::read(uint32_t addr, std::span<uint8_t> out) const {
  if (static_cast<uint64_t>(addr) + out.size() > config_.size_bytes) return false;
  if (!out.empty()) std::memcpy(out.data(), mem_.data() + addr, out.size());
  return true;
}

bool DramModel::write(uint32_t addr, std::span<const uint8_t> in) {
  if (static_cast<uint64_t>(addr) + in.size() > config_.size_bytes) return false;
  if (!in.empty()) std::memcpy(mem_.data() + addr, in.data(), in.size());
  mark_written(addr, in.size());
  return true;
}

void DramModel::drop_next_response(uint8_t tag) { ++t_.hooks[tag].drop; }
void DramModel::duplicate_next_response(uint8_t tag) { ++t_.hooks[tag].duplicate; }
void DramModel::delay_next_response(uint8_t tag, uint32_t cycles) { t_.hooks[tag].delay = cycles; }

// ---------------------------------------------------------------------------------------------
// Digests

uint64_t DramModel::hash_page(const uint8_t* bytes) {
  return hash64(std::span<const uint8_t>(bytes, kDramPageBytes));
}

void DramModel::refresh_page(size_t page) const {
  page_hash_[page] = hash_page(mem_.data() + page * kDramPageBytes);
  page_version_[page] = StateSegments::new_version();
  dirty_[page] = 0;
}

uint64_t DramModel::memory_digest() const {
  const size_t pages = page_hash_.size();
  for (size_t p = 0; p < pages; ++p)
    if (dirty_[p]) refresh_page(p);
  return hash_words(page_hash_, kMemorySeed ^ config_.size_bytes);
}

uint64_t DramModel::digest() const {
  // Scratch kept by the model: a digest point allocates nothing once it has its size.
  auto& buf = digest_scratch_;
  buf.clear();
  save_config(buf);
  save_timing(buf);
  const uint64_t parts[] = {memory_digest(), hash64(buf, kTimingSeed)};
  return hash_words(parts);
}

// ---------------------------------------------------------------------------------------------
// Save / restore. Layout (all little-endian):
//   magic[8] version:u32 config timing stats error memory
// memory = page_bytes:u32 page_count:u32, page_count x index:u32 (strictly increasing), then
// page_count x bytes[page_bytes] in the same order; pages not listed are zero. Indices come before
// the contents so that the contents are the pages' bytes back to back, exactly as in memory
// (checkpoints borrow them in place, see save_meta and page_bytes).

void DramModel::save_config(std::vector<uint8_t>& out) const {
  Writer w{out};
  w.u64(config_.size_bytes);
  w.u32(config_.base_latency);
  w.u32(config_.jitter);
  w.u32(config_.bytes_per_cycle);
  w.u32(config_.max_outstanding);
  w.b(config_.reorder);
  w.b(config_.bursty);
  w.u32(config_.burst_period);
  w.u32(config_.burst_duty_pct);
  w.u64(config_.seed);
}

void DramModel::save_timing(std::vector<uint8_t>& out) const {
  Writer w{out};
  w.u64(t_.cycle);
  w.u64(t_.next_seq);
  w.u64(t_.channel_free_at);
  w.u64(t_.burst_left);
  write_rng(w, t_.rng);
  write_rng(w, t_.burst_rng);
  w.b(t_.ready);
  w.b(t_.accepted_this_cycle);
  w.b(t_.burst_stalled);
  w.b(t_.has_current);
  w.b(t_.current_duplicate);
  w.b(t_.pending_duplicate);
  w.u8(static_cast<uint8_t>(t_.current_slot));  // 0xFF = none
  const DramResponse& r = t_.current;
  w.b(r.write);
  w.u8(r.tag);
  w.u32(r.addr);
  w.u8(r.size);
  w.bytes(r.rdata.data(), r.rdata.size());
  w.u64(r.issue_cycle);
  w.u32(t_.count);
  for (uint32_t i = 0; i < kDramMaxOutstanding; ++i) {
    const Slot& s = t_.slots[i];
    if (!s.valid) continue;
    w.u8(static_cast<uint8_t>(i));
    w.b(s.req.write);
    w.u32(s.req.addr);
    w.u8(s.req.size);
    w.u8(s.req.tag);
    w.bytes(s.req.wdata.data(), s.req.wdata.size());
    w.u64(s.seq);
    w.u64(s.accept_cycle);
    w.u64(s.ready_at);
  }
  uint32_t hooks = 0;
  for (const Hook& h : t_.hooks) hooks += (h.drop | h.duplicate | h.delay) != 0;
  w.u32(hooks);
  for (uint32_t tag = 0; tag < t_.hooks.size(); ++tag) {
    const Hook& h = t_.hooks[tag];
    if ((h.drop | h.duplicate | h.delay) == 0) continue;
    w.u8(static_cast<uint8_t>(tag));
    w.u32(h.drop);
    w.u32(h.duplicate);
    w.u32(h.delay);
  }
}

void DramModel::save(std::vector<uint8_t>& out) const {
  save_meta(out);
  for (uint32_t p = 0; p < touched_.size(); ++p) {
    if (!touched_[p]) continue;
    const auto b = page_bytes(p);
    out.insert(out.end(), b.begin(), b.end());
  }
}

void DramModel::saved_pages(std::vector<uint32_t>& out) const {
  out.clear();
  for (uint32_t p = 0; p < touched_.size(); ++p)
    if (touched_[p]) out.push_back(p);
}

void DramModel::save_meta(std::vector<uint8_t>& out) const {
  Writer w{out};
  w.bytes(kMagic, sizeof kMagic);
  w.u32(kFormatVersion);
  save_config(out);
  save_timing(out);
  for (uint64_t v :
       {stats_.read_requests, stats_.write_requests, stats_.bytes_read, stats_.bytes_written,
        stats_.responses, stats_.reads_completed, stats_.total_read_latency,
        stats_.max_read_latency, stats_.backpressure_cycles, stats_.reorders, stats_.dropped,
        stats_.duplicated, stats_.delayed, stats_.errors}) {
    w.u64(v);
  }
  w.b(error_.has_value());
  if (error_) {
    w.u8(static_cast<uint8_t>(error_->kind));
    w.b(error_->write);
    w.u64(error_->cycle);
    w.u32(error_->addr);
    w.u8(error_->size);
    w.u8(error_->tag);
  }
  uint32_t pages = 0;
  for (uint8_t t : touched_) pages += t;
  w.u32(kDramPageBytes);
  w.u32(pages);
  for (uint32_t p = 0; p < touched_.size(); ++p)
    if (touched_[p]) w.u32(p);
}

bool DramModel::restore(std::span<const uint8_t> in, size_t& offset, std::string& error,
                        uint64_t require_size_bytes) {
  scan_after_ = 0;
  Reader r{in, offset, {}};
  auto done = [&](bool ok) {
    if (!ok) error = r.err;
    return ok;
  };

  // Header.
  uint8_t magic[sizeof kMagic];
  const size_t magic_at = r.pos;
  r.bytes(magic, sizeof magic, "magic");
  if (r.ok() && std::memcmp(magic, kMagic, sizeof kMagic) != 0) {
    r.fail_at(magic_at, "not a DRAM model state (bad magic)");
  }
  const size_t version_at = r.pos;
  const uint32_t version = r.u32("format version");
  if (r.ok() && version != kFormatVersion) {
    r.fail_at(version_at, "unsupported format version " + std::to_string(version) + " (expected " +
                              std::to_string(kFormatVersion) + ")");
  }

  // Config.
  const size_t config_at = r.pos;
  DramConfig cfg;
  cfg.size_bytes = r.u64("config.size_bytes");
  cfg.base_latency = r.u32("config.base_latency");
  cfg.jitter = r.u32("config.jitter");
  cfg.bytes_per_cycle = r.u32("config.bytes_per_cycle");
  cfg.max_outstanding = r.u32("config.max_outstanding");
  cfg.reorder = r.b("config.reorder");
  cfg.bursty = r.b("config.bursty");
  cfg.burst_period = r.u32("config.burst_period");
  cfg.burst_duty_pct = r.u32("config.burst_duty_pct");
  cfg.seed = r.u64("config.seed");
  if (r.ok()) {
    if (std::string e = cfg.validate(); !e.empty()) r.fail_at(config_at, "invalid " + e);
  }
  if (r.ok() && require_size_bytes != 0 && cfg.size_bytes != require_size_bytes) {
    r.fail_at(config_at, "memory of " + std::to_string(cfg.size_bytes) + " bytes, this run has " +
                             std::to_string(require_size_bytes));
  }
  if (!r.ok()) return done(false);

  // Timing. Parsed into a temporary (heap: it is ~12 KiB) and checked for consistency, so a
  // corrupt buffer can never index out of bounds later.
  auto tp = std::make_unique<Timing>();
  Timing& t = *tp;
  t.cycle = r.u64("cycle");
  t.next_seq = r.u64("next_seq");
  t.channel_free_at = r.u64("channel_free_at");
  const size_t burst_at = r.pos;
  t.burst_left = r.u64("burst_left");
  t.rng = read_rng(r, "rng state");
  t.burst_rng = read_rng(r, "burst rng state");
  t.ready = r.b("ready");
  t.accepted_this_cycle = r.b("accepted_this_cycle");
  t.burst_stalled = r.b("burst_stalled");
  t.has_current = r.b("has_current");
  t.current_duplicate = r.b("current_duplicate");
  t.pending_duplicate = r.b("pending_duplicate");
  const size_t current_slot_at = r.pos;
  const uint8_t current_slot = r.u8("current_slot");
  t.current.write = r.b("current.write");
  t.current.tag = r.u8("current.tag");
  t.current.addr = r.u32("current.addr");
  t.current.size = r.u8("current.size");
  r.bytes(t.current.rdata.data(), t.current.rdata.size(), "current.rdata");
  t.current.issue_cycle = r.u64("current.issue_cycle");
  const size_t count_at = r.pos;
  t.count = r.u32("slot count");
  if (r.ok() && cfg.bursty && t.burst_left == 0) r.fail_at(burst_at, "burst_left is 0");
  if (r.ok() && !cfg.bursty && t.burst_stalled) r.fail_at(burst_at, "stalled while not bursty");
  if (r.ok() && t.count > cfg.max_outstanding) {
    r.fail_at(count_at, "slot count " + std::to_string(t.count) + " exceeds max_outstanding");
  }
  for (uint32_t n = 0; r.ok() && n < t.count; ++n) {
    const size_t at = r.pos;
    const uint8_t idx = r.u8("slot index");
    if (!r.ok()) break;
    if (idx >= kDramMaxOutstanding || t.slots[idx].valid) {
      r.fail_at(at, "bad or repeated slot index " + std::to_string(idx));
      break;
    }
    Slot& s = t.slots[idx];
    s.req.write = r.b("slot.write");
    s.req.addr = r.u32("slot.addr");
    s.req.size = r.u8("slot.size");
    s.req.tag = r.u8("slot.tag");
    r.bytes(s.req.wdata.data(), s.req.wdata.size(), "slot.wdata");
    s.seq = r.u64("slot.seq");
    s.accept_cycle = r.u64("slot.accept_cycle");
    s.ready_at = r.u64("slot.ready_at");
    s.valid = true;
  }
  if (r.ok()) {
    if (current_slot == 0xFF) {
      t.current_slot = -1;
    } else if (current_slot < kDramMaxOutstanding && t.slots[current_slot].valid && t.has_current) {
      t.current_slot = static_cast<int8_t>(current_slot);
    } else {
      r.fail_at(current_slot_at, "inconsistent current_slot " + std::to_string(current_slot));
    }
  }
  const size_t hooks_at = r.pos;
  const uint32_t hooks = r.u32("hook count");
  if (r.ok() && hooks > t.hooks.size()) {
    r.fail_at(hooks_at, "hook count " + std::to_string(hooks) + " exceeds 256");
  }
  int last_tag = -1;
  for (uint32_t n = 0; r.ok() && n < hooks; ++n) {
    const size_t at = r.pos;
    const uint8_t tag = r.u8("hook tag");
    if (r.ok() && static_cast<int>(tag) <= last_tag) {
      r.fail_at(at, "hook tags not strictly increasing");
      break;
    }
    last_tag = tag;
    t.hooks[tag].drop = r.u32("hook.drop");
    t.hooks[tag].duplicate = r.u32("hook.duplicate");
    t.hooks[tag].delay = r.u32("hook.delay");
  }

  // Stats and error.
  DramStats st;
  for (uint64_t* v :
       {&st.read_requests, &st.write_requests, &st.bytes_read, &st.bytes_written, &st.responses,
        &st.reads_completed, &st.total_read_latency, &st.max_read_latency, &st.backpressure_cycles,
        &st.reorders, &st.dropped, &st.duplicated, &st.delayed, &st.errors}) {
    *v = r.u64("stats");
  }
  std::optional<DramError> err;
  if (r.b("error present")) {
    DramError e;
    const size_t kind_at = r.pos;
    const uint8_t kind = r.u8("error.kind");
    if (r.ok() && (kind < 1 || kind > 5)) r.fail_at(kind_at, "bad error kind");
    e.kind = static_cast<DramErrorKind>(kind);
    e.write = r.b("error.write");
    e.cycle = r.u64("error.cycle");
    e.addr = r.u32("error.addr");
    e.size = r.u8("error.size");
    e.tag = r.u8("error.tag");
    err = e;
  }

  // Memory: validate the whole section before touching the model.
  const size_t page_bytes_at = r.pos;
  const uint32_t page_bytes = r.u32("page size");
  if (r.ok() && page_bytes != kDramPageBytes) {
    r.fail_at(page_bytes_at, "page size " + std::to_string(page_bytes) + " (expected " +
                                 std::to_string(kDramPageBytes) + ")");
  }
  const uint64_t num_pages = cfg.size_bytes / kDramPageBytes;
  const size_t page_count_at = r.pos;
  const uint32_t page_count = r.u32("page count");
  if (r.ok() && page_count > num_pages) {
    r.fail_at(page_count_at, "page count " + std::to_string(page_count) + " exceeds memory");
  }
  const size_t indices_at = r.pos;
  int64_t last_page = -1;
  for (uint32_t n = 0; r.ok() && n < page_count; ++n) {
    const size_t at = r.pos;
    const uint32_t idx = r.u32("page index");
    if (r.ok() && (idx >= num_pages || static_cast<int64_t>(idx) <= last_page)) {
      r.fail_at(at, "bad page index " + std::to_string(idx));
      break;
    }
    last_page = idx;
  }
  const size_t pages_at = r.pos;
  // page_count <= num_pages <= 2^20 (4 GiB of memory): the product fits in size_t.
  if (r.need(size_t{page_count} * kDramPageBytes, "page data")) {
    r.pos += size_t{page_count} * kDramPageBytes;
  }
  if (!r.ok()) return done(false);

  // Commit. Nothing below can fail.
  if (cfg.size_bytes != config_.size_bytes) {
    mem_.assign(cfg.size_bytes, 0);
    touched_.assign(num_pages, 0);
    dirty_.assign(num_pages, 0);
    page_hash_.assign(num_pages, zero_page_hash());
    page_version_.assign(num_pages, StateSegments::new_version());
  } else {
    for (size_t p = 0; p < touched_.size(); ++p) {
      if (!touched_[p]) continue;
      std::memset(mem_.data() + p * kDramPageBytes, 0, kDramPageBytes);
      touched_[p] = 0;
      dirty_[p] = 1;
    }
  }
  for (uint32_t n = 0; n < page_count; ++n) {
    const size_t at = indices_at + size_t{n} * 4;
    uint32_t idx = 0;
    for (int i = 0; i < 4; ++i) idx |= static_cast<uint32_t>(in[at + i]) << (8 * i);
    std::memcpy(mem_.data() + static_cast<size_t>(idx) * kDramPageBytes,
                in.data() + pages_at + size_t{n} * kDramPageBytes, kDramPageBytes);
    touched_[idx] = 1;
    dirty_[idx] = 1;
  }
  config_ = cfg;
  recompute_derived();
  // Recomputed, not trusted: a slot's request is checked against the restored config.
  for (Slot& s : t.slots) {
    DramErrorKind kind{};
    if (s.valid) s.bad = !request_ok(s.req, &kind);
  }
  t_ = t;
  live_ = 0;
  for (uint32_t i = 0; i < kDramMaxOutstanding; ++i)
    if (t_.slots[i].valid) live_ |= uint64_t{1} << i;
  stats_ = st;
  error_ = err;
  offset = r.pos;
  return done(true);
}

}  // namespace bud::emu
