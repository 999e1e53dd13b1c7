#include "design/Axi4Memory.h"

#include <cinttypes>
#include <cstdio>

#include "design/StateBytes.h"

namespace bud::design {

namespace {

constexpr char kMagic[9] = "BUDAXI4\n";
constexpr uint32_t kVersion = 1;
constexpr uint8_t kFixed = 0, kIncr = 1, kWrap = 2;
const char* burst_name(uint8_t b) { return b == kFixed ? "FIXED" : b == kIncr ? "INCR" : b == kWrap ? "WRAP" : "reserved"; }

}  // namespace

std::optional<Axi4Memory> Axi4Memory::make(const Config& cfg, std::span<const uint8_t> init,
                                           std::string& error) {
  emu::DramConfig dc = cfg.dram;
  // The DRAM model only times the bursts (one request each, tag = burst slot); the bytes live
  // here, so its own memory is one page.
  dc.size_bytes = emu::kDramPageBytes;
  const std::string why = dc.validate();
  if (!why.empty()) {
    error = "[[axi4]] " + cfg.port + ": timing: " + why;
    return std::nullopt;
  }
  if (cfg.bus_bytes == 0 || cfg.bus_bytes > kAxiMaxBusBytes || (cfg.bus_bytes & (cfg.bus_bytes - 1))) {
    error = "[[axi4]] " + cfg.port + ": data bus of " + std::to_string(cfg.bus_bytes) + " bytes";
    return std::nullopt;
  }
  if (init.size() > cfg.size) {
    error = "[[memory]] " + cfg.region + ": init holds " + std::to_string(init.size()) +
            " bytes, more than the region's " + std::to_string(cfg.size);
    return std::nullopt;
  }
  Axi4Memory m;
  m.cfg_ = cfg;
  m.cfg_.dram = dc;
  m.dram_ = emu::DramModel(dc);
  m.mem_.assign(cfg.size, 0);
  std::memcpy(m.mem_.data(), init.data(), init.size());
  m.r_credit_ = m.w_credit_ = dc.bytes_per_cycle;
  return m;
}

void Axi4Memory::fail(const char* channel, uint64_t addr, const char* what) {
  if (error_[0]) return;
  std::snprintf(error_.data(), error_.size(),
                "axi4 port '%s' channel %s, address 0x%" PRIx64 ", cycle %" PRIu64 ": %s",
                cfg_.port.c_str(), channel, addr, cycle_, what);
}

uint64_t Axi4Memory::beat_addr(const Burst& b, uint32_t beat) const {
  const uint64_t n = uint64_t{1} << b.size;
  if (b.burst == kFixed) return b.addr;
  if (b.burst == kIncr) return beat == 0 ? b.addr : (b.addr & ~(n - 1)) + beat * n;
  const uint64_t total = n * (uint64_t{b.len} + 1);
  const uint64_t lo = b.addr & ~(total - 1);
  return lo + (b.addr - lo + beat * n) % total;
}

bool Axi4Memory::check_burst(bool write, uint64_t addr, uint8_t len, uint8_t size, uint8_t burst) {
  const char* ch = write ? "AW" : "AR";
  const uint64_t n = uint64_t{1} << size, beats = uint64_t{len} + 1;
  char what[160];
  if (burst > kWrap) {
    fail(ch, addr, "reserved burst type 3");
    return false;
  }
  if (n > cfg_.bus_bytes) {
    std::snprintf(what, sizeof what, "size %" PRIu64 " bytes is wider than the %u-byte bus", n, cfg_.bus_bytes);
    fail(ch, addr, what);
    return false;
  }
  uint64_t lo = addr, hi = (addr & ~(n - 1)) + n;  // FIXED
  if (burst == kWrap) {
    if ((beats != 2 && beats != 4 && beats != 8 && beats != 16) || (addr & (n - 1))) {
      fail(ch, addr, "WRAP burst needs 2, 4, 8 or 16 beats and an address aligned to its size");
      return false;
    }
    lo = addr & ~(n * beats - 1);
    hi = lo + n * beats;
  } else if (burst == kFixed && beats > 16) {
    fail(ch, addr, "FIXED burst longer than 16 beats");
    return false;
  } else if (burst == kIncr) {
    hi = (addr & ~(n - 1)) + n * beats;
    if ((lo >> 12) != ((hi - 1) >> 12)) {
      std::snprintf(what, sizeof what, "INCR burst of %" PRIu64 " x %" PRIu64 " bytes crosses a 4 KiB boundary",
                    beats, n);
      fail(ch, addr, what);
      return false;
    }
  }
  if (lo < cfg_.base || hi > cfg_.base + cfg_.size) {
    std::snprintf(what, sizeof what,
                  "%s burst of %" PRIu64 " x %" PRIu64 " bytes (%s) leaves memory '%s' [0x%" PRIx64
                  ", 0x%" PRIx64 ")",
                  write ? "write" : "read", beats, n, burst_name(burst), cfg_.region.c_str(), cfg_.base,
                  cfg_.base + cfg_.size);
    fail(ch, addr, what);
    return false;
  }
  return true;
}

int Axi4Memory::free_slot() const {
  for (uint32_t i = 0; i < kAxiMaxBursts; ++i)
    if (bursts_[i].phase == Phase::Free) return static_cast<int>(i);
  return -1;
}

bool Axi4Memory::oldest_of_id(const Burst& b) const {
  for (const Burst& o : bursts_)
    if (o.phase != Phase::Free && o.write == b.write && o.id == b.id && o.seq < b.seq) return false;
  return true;
}

// The next burst to answer on R (reads) or B (writes): among those the DRAM model has answered
// and that no older burst of the same ID precedes, the one answered first (ties: accepted
// first). With reorder off in the DRAM config, answers come in acceptance order anyway.
int Axi4Memory::pick_answer(bool write) const {
  int best = -1;
  for (uint32_t i = 0; i < kAxiMaxBursts; ++i) {
    const Burst& b = bursts_[i];
    if (b.phase != Phase::Done || b.write != write || !oldest_of_id(b)) continue;
    if (best < 0) {
      best = static_cast<int>(i);
      continue;
    }
    const Burst& o = bursts_[static_cast<size_t>(best)];
    if (b.done_cycle < o.done_cycle || (b.done_cycle == o.done_cycle && b.seq < o.seq)) best = static_cast<int>(i);
  }
  return best;
}

void Axi4Memory::present_read_beat() {
  Burst& b = bursts_[static_cast<size_t>(r_slot_)];
  const uint64_t n = uint64_t{1} << b.size;
  if (r_credit_ < n) return;
  r_credit_ -= n;
  const uint64_t a = beat_addr(b, b.beat);
  const uint64_t bus = a & ~(uint64_t{cfg_.bus_bytes} - 1);
  for (uint32_t lane = 0; lane < cfg_.bus_bytes; ++lane) {
    const uint64_t at = bus + lane;
    out_.rdata[lane] = at >= cfg_.base && at < cfg_.base + cfg_.size ? mem_[at - cfg_.base] : 0;
  }
  stats_.bytes_read += (a & ~(n - 1)) + n - a;
  if (b.beat == 0) {
    const uint64_t lat = cycle_ - b.accept_cycle;
    stats_.read_latency_sum += lat;
    if (lat > stats_.read_latency_max) stats_.read_latency_max = lat;
  }
  out_.rvalid = true;
  out_.rid = b.id;
  out_.rresp = 0;
  out_.rlast = b.beat == b.len;
}

const Axi4SlaveDrive& Axi4Memory::drive() {
  if (error_[0]) {
    out_ = Axi4SlaveDrive{};
    return out_;
  }
  const uint32_t limit = cfg_.dram.max_outstanding;
  const bool dram_ok = dram_.req_ready();
  const bool w_last_next = w_slot_ >= 0 && bursts_[static_cast<size_t>(w_slot_)].beat ==
                                               bursts_[static_cast<size_t>(w_slot_)].len;
  // One request per cycle reaches the DRAM model: a read burst (AR) or a write burst's last W
  // beat. When both could, they take turns.
  out_.arready = used_ < limit && dram_ok && (ar_owns_dram_ || !w_last_next);
  out_.awready = used_ + (out_.arready ? 1 : 0) < limit;
  if (w_slot_ >= 0) {
    const uint64_t n = uint64_t{1} << bursts_[static_cast<size_t>(w_slot_)].size;
    out_.wready = w_credit_ >= n && (!w_last_next || (dram_ok && !out_.arready));
  } else {
    out_.wready = false;
  }
  // Only bursts the DRAM model has answered can be picked: none most cycles, so no scan.
  if (r_slot_ < 0 && done_[0] > 0) {
    r_slot_ = pick_answer(false);
    if (r_slot_ >= 0) bursts_[static_cast<size_t>(r_slot_)].phase = Phase::Answering, --done_[0];
  }
  if (r_slot_ >= 0 && !out_.rvalid) present_read_beat();  // rvalid stays up, data stable
  if (b_slot_ < 0 && done_[1] > 0) {
    b_slot_ = pick_answer(true);
    if (b_slot_ >= 0) {
      Burst& b = bursts_[static_cast<size_t>(b_slot_)];
      b.phase = Phase::Answering;
      --done_[1];
      out_.bvalid = true;
      out_.bid = b.id;
      out_.bresp = 0;
    }
  }
  return out_;
}

void Axi4Memory::sample(const Axi4MasterPins& p) {
  if (error_[0]) return;
  bool moved = false;
  const uint32_t id_mask = cfg_.id_bits >= 32 ? ~0u : (1u << cfg_.id_bits) - 1;
  if (out_.wready && p.wvalid) {  // W first: wready was for the burst at the head before AW
    moved = true;
    Burst& b = bursts_[static_cast<size_t>(w_slot_)];
    const uint64_t n = uint64_t{1} << b.size;
    const uint64_t a = beat_addr(b, b.beat);
    const bool last = b.beat == b.len;
    if (p.wlast != last) {
      fail("W", a, last ? "wlast low on the last beat of the burst" : "wlast high before the last beat of the burst");
      return;
    }
    const uint64_t bus = a & ~(uint64_t{cfg_.bus_bytes} - 1);
    const uint32_t lo = static_cast<uint32_t>(a - bus), hi = static_cast<uint32_t>((a & ~(n - 1)) + n - bus);
    for (uint32_t lane = lo; lane < hi; ++lane) {
      if (!((p.wstrb >> lane) & 1)) continue;
      mem_[bus + lane - cfg_.base] = p.wdata[lane];
      ++stats_.bytes_written;
    }
    w_credit_ -= n;
    ++stats_.write_beats;
    ++b.beat;
    if (last) {
      emu::DramRequest req;
      req.write = true;
      req.size = 8;
      req.tag = static_cast<uint8_t>(w_slot_);
      dram_.accept(req);
      b.phase = Phase::Issued;
      b.accept_cycle = cycle_;
      // W data follows AW order: the next burst to receive data is the oldest waiting one.
      w_slot_ = -1;
      for (uint32_t i = 0; i < kAxiMaxBursts; ++i)
        if (bursts_[i].phase == Phase::WData &&
            (w_slot_ < 0 || bursts_[i].seq < bursts_[static_cast<size_t>(w_slot_)].seq))
          w_slot_ = static_cast<int>(i);
    }
  }
  if (out_.arready && p.arvalid) {
    moved = true;
    if (!check_burst(false, p.araddr, p.arlen, p.arsize, p.arburst)) return;
    const int s = free_slot();
    Burst& b = bursts_[static_cast<size_t>(s)];
    b = Burst{Phase::Issued, false, p.arlen, p.arsize, p.arburst, p.arid & id_mask, p.araddr, next_seq_++, cycle_, 0, 0};
    ++used_;
    ++stats_.read_bursts;
    emu::DramRequest req;
    req.size = 8;
    req.tag = static_cast<uint8_t>(s);
    dram_.accept(req);
  }
  if (out_.awready && p.awvalid) {
    moved = true;
    if (!check_burst(true, p.awaddr, p.awlen, p.awsize, p.awburst)) return;
    const int s = free_slot();
    bursts_[static_cast<size_t>(s)] =
        Burst{Phase::WData, true, p.awlen, p.awsize, p.awburst, p.awid & id_mask, p.awaddr, next_seq_++, cycle_, 0, 0};
    ++used_;
    ++stats_.write_bursts;
    if (w_slot_ < 0) w_slot_ = s;
  }
  if (out_.rvalid && p.rready) {
    moved = true;
    out_.rvalid = false;
    ++stats_.read_beats;
    Burst& b = bursts_[static_cast<size_t>(r_slot_)];
    if (b.beat++ == b.len) {
      b.phase = Phase::Free;
      --used_;
      r_slot_ = -1;
    }
  }
  if (out_.bvalid && p.bready) {
    moved = true;
    out_.bvalid = false;
    bursts_[static_cast<size_t>(b_slot_)].phase = Phase::Free;
    --used_;
    b_slot_ = -1;
  }
  if (const emu::DramResponse* r = dram_.resp()) {
    Burst& b = bursts_[r->tag];
    b.phase = Phase::Done;
    ++done_[b.write ? 1 : 0];
    b.done_cycle = cycle_;
    dram_.pop_resp();
  }
  if (moved) ++stats_.active_cycles;
}

void Axi4Memory::tick() {
  dram_.tick();
  ++cycle_;
  const uint64_t bpc = cfg_.dram.bytes_per_cycle, cap = bpc + kAxiMaxBusBytes;
  r_credit_ = r_credit_ + bpc > cap ? cap : r_credit_ + bpc;
  w_credit_ = w_credit_ + bpc > cap ? cap : w_credit_ + bpc;
  ar_owns_dram_ = !ar_owns_dram_;
}

bool Axi4Memory::read(uint64_t offset, std::span<uint8_t> out) const {
  if (offset > mem_.size() || mem_.size() - offset < out.size()) return false;
  std::memcpy(out.data(), mem_.data() + offset, out.size());
  return true;
}

bool Axi4Memory::write(uint64_t offset, std::span<const uint8_t> in) {
  if (offset > mem_.size() || mem_.size() - offset < in.size()) return false;
  std::memcpy(mem_.data() + offset, in.data(), in.size());
  return true;
}

void Axi4Memory::save(std::vector<uint8_t>& out) const {
  StateWriter w{out};
  w.header(kMagic, kVersion);
  w.u64(cfg_.size);
  w.u64(cycle_);
  w.u64(next_seq_);
  w.u32(used_);
  w.u32(static_cast<uint32_t>(w_slot_));
  w.u32(static_cast<uint32_t>(r_slot_));
  w.u32(static_cast<uint32_t>(b_slot_));
  w.u64(r_credit_);
  w.u64(w_credit_);
  w.u8(ar_owns_dram_);
  for (const Burst& b : bursts_) {
    w.u8(static_cast<uint8_t>(b.phase));
    w.u8(b.write);
    w.u8(b.len);
    w.u8(b.size);
    w.u8(b.burst);
    w.u32(b.id);
    w.u64(b.addr);
    w.u64(b.seq);
    w.u64(b.accept_cycle);
    w.u64(b.done_cycle);
    w.u32(b.beat);
  }
  w.u8(out_.rvalid);
  w.u8(out_.rlast);
  w.u32(out_.rid);
  w.bytes(out_.rdata.data(), out_.rdata.size());
  w.u8(out_.bvalid);
  w.u32(out_.bid);
  w.bytes(&stats_, sizeof stats_);  // plain uint64_t fields
  w.bytes(error_.data(), error_.size());
  dram_.save(out);
  w.bytes(mem_.data(), mem_.size());
}

bool Axi4Memory::restore(std::span<const uint8_t> in, size_t& offset, std::string& error) {
  StateReader r{in, offset, "axi4 memory", {}};
  Axi4Memory m;
  m.cfg_ = cfg_;
  if (!r.header(kMagic, kVersion)) {
    error = r.err;
    return false;
  }
  if (r.u64() != cfg_.size && r.ok()) r.fail("the state is of a region of another size");
  m.cycle_ = r.u64();
  m.next_seq_ = r.u64();
  m.used_ = r.u32();
  m.w_slot_ = static_cast<int>(r.u32());
  m.r_slot_ = static_cast<int>(r.u32());
  m.b_slot_ = static_cast<int>(r.u32());
  m.r_credit_ = r.u64();
  m.w_credit_ = r.u64();
  m.ar_owns_dram_ = r.u8() != 0;
  for (Burst& b : m.bursts_) {
    const uint8_t ph = r.u8();
    if (ph > static_cast<uint8_t>(Phase::Answering)) r.fail("bad burst phase");
    b.phase = static_cast<Phase>(ph);
    b.write = r.u8() != 0;
    b.len = r.u8();
    b.size = r.u8();
    b.burst = r.u8();
    b.id = r.u32();
    b.addr = r.u64();
    b.seq = r.u64();
    b.accept_cycle = r.u64();
    b.done_cycle = r.u64();
    b.beat = r.u32();
  }
  for (const Burst& b : m.bursts_)
    if (b.phase == Phase::Done) ++m.done_[b.write ? 1 : 0];
  for (int s : {m.w_slot_, m.r_slot_, m.b_slot_})
    if (s < -1 || s >= static_cast<int>(kAxiMaxBursts)) r.fail("bad burst slot");
  m.out_.rvalid = r.u8() != 0;
  m.out_.rlast = r.u8() != 0;
  m.out_.rid = r.u32();
  r.bytes(m.out_.rdata.data(), m.out_.rdata.size());
  m.out_.bvalid = r.u8() != 0;
  m.out_.bid = r.u32();
  r.bytes(&m.stats_, sizeof m.stats_);
  r.bytes(m.error_.data(), m.error_.size());
  m.error_.back() = 0;
  if (!r.ok()) {
    error = r.err;
    return false;
  }
  if (!m.dram_.restore(in, r.pos, error, emu::kDramPageBytes)) return false;
  m.mem_.resize(cfg_.size);
  if (!r.bytes(m.mem_.data(), m.mem_.size())) {
    error = r.err;
    return false;
  }
  offset = r.pos;
  *this = std::move(m);
  return true;
}

}  // namespace bud::design
