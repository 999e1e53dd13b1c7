#include "design/AxiPorts.h"

#include <filesystem>
#include <fstream>
#include <iterator>

#include "design/StateBytes.h"
#include "emu/core/Rng.h"

namespace bud::design {

std::optional<AxiPorts> AxiPorts::make(const DesignSpec& spec, LoadedModel& model,
                                       const emu::DramConfig& dram, uint64_t seed,
                                       std::string& error) {
  AxiPorts a;
  bool ok = true;
  auto need = [&](const std::string& name, const Where& w) -> size_t {
    const auto i = model.find(name);
    if (!i && ok) {
      error = w.to_string() + ": the built model has no signal '" + name + "'";
      ok = false;
    }
    return i.value_or(0);
  };
  for (size_t k = 0; k < spec.axi4.size(); ++k) {
    const Axi4Port& p = spec.axi4[k];
    const MemoryRegion* region = nullptr;
    for (const auto& m : spec.memories)
      if (m.name == p.memory) region = &m;
    for (const auto& other : spec.axi4)
      if (&other != &p && other.memory == p.memory && &other < &p) {
        error = p.where.to_string() + ": [[axi4]] " + p.name + ": memory '" + p.memory +
                "' is already served by port '" + other.name + "' (one port per region)";
        return std::nullopt;
      }
    if (!region) {
      error = p.where.to_string() + ": [[axi4]] " + p.name + ": no [[memory]] '" + p.memory + "'";
      return std::nullopt;
    }
    std::vector<uint8_t> init;
    if (!region->init.empty()) {
      std::ifstream in(region->init, std::ios::binary);
      init.assign(std::istreambuf_iterator<char>(in), {});
      if (!in && !in.eof()) {
        error = region->where.to_string() + ": [[memory]] " + region->name + ": cannot read '" + region->init + "'";
        return std::nullopt;
      }
    }
    Axi4Memory::Config c;
    c.port = p.name;
    c.region = region->name;
    c.base = region->base;
    c.size = region->size;
    c.bus_bytes = p.data_bits / 8;
    c.id_bits = p.id_bits;
    c.dram = dram;
    if (p.latency) c.dram.base_latency = *p.latency;
    if (p.jitter) c.dram.jitter = *p.jitter;
    if (p.bytes_per_cycle) c.dram.bytes_per_cycle = *p.bytes_per_cycle;
    if (p.max_outstanding) c.dram.max_outstanding = *p.max_outstanding;
    if (p.reorder) c.dram.reorder = *p.reorder;
    uint64_t x = seed ^ (0xA41A41A41ull * (k + 1));
    c.dram.seed = emu::Rng::splitmix64(x);
    std::string why;
    auto mem = Axi4Memory::make(c, init, why);
    if (!mem) {
      error = p.where.to_string() + ": " + why;
      return std::nullopt;
    }
    a.memories_.push_back(std::move(*mem));
    const std::string& x_ = p.prefix;
    MemPins s{};
    for (auto [field, slot] :
         {std::pair{"arvalid", &s.arvalid}, {"araddr", &s.araddr}, {"arlen", &s.arlen},
          {"arsize", &s.arsize}, {"arburst", &s.arburst}, {"arready", &s.arready},
          {"rvalid", &s.rvalid}, {"rdata", &s.rdata}, {"rresp", &s.rresp}, {"rlast", &s.rlast},
          {"rready", &s.rready}, {"awvalid", &s.awvalid}, {"awaddr", &s.awaddr},
          {"awlen", &s.awlen}, {"awsize", &s.awsize}, {"awburst", &s.awburst},
          {"awready", &s.awready}, {"wvalid", &s.wvalid}, {"wdata", &s.wdata},
          {"wstrb", &s.wstrb}, {"wlast", &s.wlast}, {"wready", &s.wready},
          {"bvalid", &s.bvalid}, {"bresp", &s.bresp}, {"bready", &s.bready}})
      *slot = need(x_ + field, p.where);
    if (p.id_bits > 0) {
      s.arid = need(x_ + "arid", p.where);
      s.rid = need(x_ + "rid", p.where);
      s.awid = need(x_ + "awid", p.where);
      s.bid = need(x_ + "bid", p.where);
    }
    if (!ok) return std::nullopt;
    a.mem_pins_.push_back(s);
    auto r = [&](size_t i) { return model.ref(i); };
    a.mem_refs_.push_back(MemRefs{
        r(s.arvalid), r(s.araddr), r(s.arlen), r(s.arsize), r(s.arburst), r(s.arready), r(s.rvalid),
        r(s.rdata), r(s.rresp), r(s.rlast), r(s.rready), r(s.awvalid), r(s.awaddr), r(s.awlen),
        r(s.awsize), r(s.awburst), r(s.awready), r(s.wvalid), r(s.wdata), r(s.wstrb), r(s.wlast),
        r(s.wready), r(s.bvalid), r(s.bresp), r(s.bready),
        s.arid ? r(*s.arid) : PortRef{}, s.rid ? r(*s.rid) : PortRef{},
        s.awid ? r(*s.awid) : PortRef{}, s.bid ? r(*s.bid) : PortRef{}, s.arid.has_value()});
  }
  if (spec.control) {
    const ControlPort& c = *spec.control;
    DesignError e;
    auto script = read_control_firmware(spec, e);
    if (!script) {
      error = e.to_string();
      return std::nullopt;
    }
    // At run time the script is named as the design file names it (relative to its directory):
    // its messages are part of the run's state and digest, which must not depend on where the
    // design lives (a packet replays from its own copy).
    const auto relative = std::filesystem::path(c.firmware).lexically_relative(spec.dir);
    if (!relative.empty() && *relative.begin() != "..") script->file = relative.string();
    LitePins& l = a.lite_;
    for (auto [field, slot] :
         {std::pair{"awaddr", &l.awaddr}, {"awvalid", &l.awvalid}, {"awready", &l.awready},
          {"wdata", &l.wdata}, {"wstrb", &l.wstrb}, {"wvalid", &l.wvalid}, {"wready", &l.wready},
          {"bresp", &l.bresp}, {"bvalid", &l.bvalid}, {"bready", &l.bready},
          {"araddr", &l.araddr}, {"arvalid", &l.arvalid}, {"arready", &l.arready},
          {"rdata", &l.rdata}, {"rresp", &l.rresp}, {"rvalid", &l.rvalid}, {"rready", &l.rready}})
      *slot = need(c.prefix + field, c.where);
    if (!c.interrupt.empty()) l.irq = need(c.interrupt, c.where);
    if (!ok) return std::nullopt;
    auto r = [&](size_t i) { return model.ref(i); };
    a.lite_refs_ = LiteRefs{r(l.awaddr), r(l.awvalid), r(l.awready), r(l.wdata), r(l.wstrb),
                            r(l.wvalid), r(l.wready), r(l.bresp), r(l.bvalid), r(l.bready),
                            r(l.araddr), r(l.arvalid), r(l.arready), r(l.rdata), r(l.rresp),
                            r(l.rvalid), r(l.rready), l.irq ? r(*l.irq) : PortRef{},
                            l.irq.has_value()};
    a.firmware_.emplace(std::move(*script), c.data_bits);
  }
  return a;
}

void AxiPorts::idle(LoadedModel& m) const {
  for (const MemPins& s : mem_pins_)
    for (size_t i : {s.arready, s.awready, s.wready, s.rvalid, s.bvalid}) m.set(i, 0);
  if (firmware_)
    for (size_t i : {lite_.awvalid, lite_.wvalid, lite_.bready, lite_.arvalid, lite_.rready}) m.set(i, 0);
}

void AxiPorts::drive(LoadedModel& /*m*/) {
  for (size_t k = 0; k < memories_.size(); ++k) {
    const MemRefs& s = mem_refs_[k];
    const Axi4SlaveDrive& d = memories_[k].drive();
    s.arready.set(d.arready);
    s.awready.set(d.awready);
    s.wready.set(d.wready);
    s.rvalid.set(d.rvalid);
    if (d.rvalid) {
      // The bus bytes into a signal of any width (wide ones are VlWide words).
      const uint32_t n = memories_[k].config().bus_bytes;
      if (n == 8 && s.rdata.bytes == 8) std::memcpy(s.rdata.data, d.rdata.data(), 8);
      else std::memcpy(s.rdata.data, d.rdata.data(), n < s.rdata.bytes ? n : s.rdata.bytes);
      s.rlast.set(d.rlast);
      s.rresp.set(d.rresp);
      if (s.ids) s.rid.set(d.rid);
    }
    s.bvalid.set(d.bvalid);
    if (d.bvalid) {
      s.bresp.set(d.bresp);
      if (s.ids) s.bid.set(d.bid);
    }
  }
  if (firmware_) {
    const AxiLiteMasterDrive& d = firmware_->drive();
    const LiteRefs& l = lite_refs_;
    l.awvalid.set(d.awvalid);
    l.awaddr.set(d.awaddr);
    l.wvalid.set(d.wvalid);
    l.wdata.set(d.wdata);
    l.wstrb.set(d.wstrb);
    l.bready.set(d.bready);
    l.arvalid.set(d.arvalid);
    l.araddr.set(d.araddr);
    l.rready.set(d.rready);
  }
}

bool AxiPorts::sample(const LoadedModel& /*m*/) {
  bool moved = false;
  for (size_t k = 0; k < memories_.size(); ++k) {
    const MemRefs& s = mem_refs_[k];
    Axi4Memory& mem = memories_[k];
    const Axi4SlaveDrive& d = mem.driven();
    // A channel's fields matter only at its handshake (Axi4Memory::sample): read them then.
    Axi4MasterPins p;
    p.arvalid = s.arvalid.get();
    if (p.arvalid && d.arready) {
      p.araddr = s.araddr.get();
      p.arlen = static_cast<uint8_t>(s.arlen.get());
      p.arsize = static_cast<uint8_t>(s.arsize.get());
      p.arburst = static_cast<uint8_t>(s.arburst.get());
      p.arid = s.ids ? static_cast<uint32_t>(s.arid.get()) : 0;
    }
    p.awvalid = s.awvalid.get();
    if (p.awvalid && d.awready) {
      p.awaddr = s.awaddr.get();
      p.awlen = static_cast<uint8_t>(s.awlen.get());
      p.awsize = static_cast<uint8_t>(s.awsize.get());
      p.awburst = static_cast<uint8_t>(s.awburst.get());
      p.awid = s.ids ? static_cast<uint32_t>(s.awid.get()) : 0;
    }
    p.wvalid = s.wvalid.get();
    if (p.wvalid && d.wready) {
      p.wlast = s.wlast.get();
      p.wstrb = s.wstrb.get();
      p.wdata = static_cast<const uint8_t*>(s.wdata.data);
    }
    p.bready = s.bready.get();
    p.rready = s.rready.get();
    const uint64_t before = mem.stats().active_cycles;
    mem.sample(p);
    moved = moved || mem.stats().active_cycles != before;
  }
  // A finished script samples nothing, and a wait looks only at the interrupt.
  if (firmware_ && !firmware_->finished()) {
    const LiteRefs& l = lite_refs_;
    AxiLiteSlavePins p;
    p.irq = l.has_irq && l.irq.get();
    const FirmwareOp op = firmware_->script().steps[firmware_->current_step()].op;
    if (op != FirmwareOp::WaitIrq && op != FirmwareOp::Wait) {
      p.awready = l.awready.get();
      p.wready = l.wready.get();
      p.bvalid = l.bvalid.get();
      p.bresp = static_cast<uint8_t>(l.bresp.get());
      p.arready = l.arready.get();
      p.rvalid = l.rvalid.get();
      p.rresp = static_cast<uint8_t>(l.rresp.get());
      p.rdata = l.rdata.get();
    }
    const uint64_t before = firmware_->accesses();
    const size_t step = firmware_->current_step();
    firmware_->sample(p);
    moved = moved || firmware_->accesses() != before || firmware_->current_step() != step;
  }
  return moved;
}

void AxiPorts::tick() {
  for (Axi4Memory& mem : memories_) mem.tick();
  if (firmware_) firmware_->tick();
}

bool AxiPorts::quiet() const {
  if (firmware_ && !firmware_->finished()) return false;
  for (const Axi4Memory& mem : memories_)
    if (!mem.idle()) return false;
  return true;
}

bool AxiPorts::stopped() const {
  if (memory_error()) return true;
  return firmware_ && firmware_->finished() && firmware_->status() != FirmwareRunner::Status::Done;
}

const char* AxiPorts::memory_error() const {
  for (const Axi4Memory& mem : memories_)
    if (mem.error()) return mem.error();
  return nullptr;
}

const Axi4Memory* AxiPorts::memory(const std::string& name) const {
  for (const Axi4Memory& mem : memories_)
    if (mem.config().region == name) return &mem;
  return nullptr;
}

Axi4Memory* AxiPorts::memory(const std::string& name) {
  return const_cast<Axi4Memory*>(static_cast<const AxiPorts*>(this)->memory(name));
}

void AxiPorts::save(std::vector<uint8_t>& out) const {
  for (const Axi4Memory& mem : memories_) mem.save(out);
  if (firmware_) firmware_->save(out);
}

bool AxiPorts::restore(std::span<const uint8_t> in, size_t& offset, std::string& error) {
  // Into copies first, so that a failure part-way leaves everything as it was.
  std::vector<Axi4Memory> mems = memories_;
  std::optional<FirmwareRunner> fw = firmware_;
  size_t at = offset;
  for (Axi4Memory& mem : mems)
    if (!mem.restore(in, at, error)) return false;
  if (fw && !fw->restore(in, at, error)) return false;
  memories_ = std::move(mems);
  firmware_ = std::move(fw);
  offset = at;
  return true;
}

}  // namespace bud::design
