#include "design/AxiPorts.h"

#include <filesystem>
#include <fstream>
#include <iterator>

#include "design/StateBytes.h"
#include "emu/core/Rng.h"

namespace bud::design {

namespace {

// Writes `n` little-endian bytes into a model signal of any width (wide ones are VlWide words).
void put_bytes(LoadedModel& m, size_t i, const uint8_t* src, uint32_t n) {
  const ModelPort& p = m.ports()[i];
  std::memcpy(p.data, src, n < p.bytes ? n : p.bytes);
}

}  // namespace

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

void AxiPorts::drive(LoadedModel& m) {
  for (size_t k = 0; k < memories_.size(); ++k) {
    const MemPins& s = mem_pins_[k];
    const Axi4SlaveDrive& d = memories_[k].drive();
    m.set(s.arready, d.arready);
    m.set(s.awready, d.awready);
    m.set(s.wready, d.wready);
    m.set(s.rvalid, d.rvalid);
    if (d.rvalid) {
      put_bytes(m, s.rdata, d.rdata.data(), memories_[k].config().bus_bytes);
      m.set(s.rlast, d.rlast);
      m.set(s.rresp, d.rresp);
      if (s.rid) m.set(*s.rid, d.rid);
    }
    m.set(s.bvalid, d.bvalid);
    if (d.bvalid) {
      m.set(s.bresp, d.bresp);
      if (s.bid) m.set(*s.bid, d.bid);
    }
  }
  if (firmware_) {
    const AxiLiteMasterDrive& d = firmware_->drive();
    m.set(lite_.awvalid, d.awvalid);
    m.set(lite_.awaddr, d.awaddr);
    m.set(lite_.wvalid, d.wvalid);
    m.set(lite_.wdata, d.wdata);
    m.set(lite_.wstrb, d.wstrb);
    m.set(lite_.bready, d.bready);
    m.set(lite_.arvalid, d.arvalid);
    m.set(lite_.araddr, d.araddr);
    m.set(lite_.rready, d.rready);
  }
}

bool AxiPorts::sample(const LoadedModel& m) {
  bool moved = false;
  for (size_t k = 0; k < memories_.size(); ++k) {
    const MemPins& s = mem_pins_[k];
    Axi4MasterPins p;
    p.arvalid = m.get(s.arvalid);
    p.araddr = m.get(s.araddr);
    p.arlen = static_cast<uint8_t>(m.get(s.arlen));
    p.arsize = static_cast<uint8_t>(m.get(s.arsize));
    p.arburst = static_cast<uint8_t>(m.get(s.arburst));
    p.arid = s.arid ? static_cast<uint32_t>(m.get(*s.arid)) : 0;
    p.awvalid = m.get(s.awvalid);
    p.awaddr = m.get(s.awaddr);
    p.awlen = static_cast<uint8_t>(m.get(s.awlen));
    p.awsize = static_cast<uint8_t>(m.get(s.awsize));
    p.awburst = static_cast<uint8_t>(m.get(s.awburst));
    p.awid = s.awid ? static_cast<uint32_t>(m.get(*s.awid)) : 0;
    p.wvalid = m.get(s.wvalid);
    p.wlast = m.get(s.wlast);
    p.wstrb = m.get(s.wstrb);
    p.wdata = static_cast<const uint8_t*>(m.ports()[s.wdata].data);
    p.bready = m.get(s.bready);
    p.rready = m.get(s.rready);
    const Axi4Stats before = memories_[k].stats();
    memories_[k].sample(p);
    moved = moved || memories_[k].stats().active_cycles != before.active_cycles;
  }
  if (firmware_) {
    AxiLiteSlavePins p;
    p.awready = m.get(lite_.awready);
    p.wready = m.get(lite_.wready);
    p.bvalid = m.get(lite_.bvalid);
    p.bresp = static_cast<uint8_t>(m.get(lite_.bresp));
    p.arready = m.get(lite_.arready);
    p.rvalid = m.get(lite_.rvalid);
    p.rresp = static_cast<uint8_t>(m.get(lite_.rresp));
    p.rdata = m.get(lite_.rdata);
    p.irq = lite_.irq && m.get(*lite_.irq);
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
