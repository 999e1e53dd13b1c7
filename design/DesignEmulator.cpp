#include "design/DesignEmulator.h"

#include <algorithm>
#include <cstring>

#include "design/StateBytes.h"
#include "emu/core/Hash.h"

namespace bud::design {

namespace {

constexpr char kMagic[9] = "BUDDEMU1";
constexpr uint32_t kVersion = 1;

// The bytes of one element of a model signal.
uint8_t* element_data(const ModelPort& p, uint32_t element) {
  return static_cast<uint8_t*>(p.data) + size_t{p.bytes} * element;
}

}  // namespace

std::unique_ptr<DesignEmulator> DesignEmulator::make(const DesignSpec& spec,
                                                     const std::string& library,
                                                     const std::string& revision,
                                                     const emu::EmulatorConfig& config,
                                                     uint64_t seed, uint64_t quiet_cycles,
                                                     std::string& error) {
  auto model = LoadedModel::load(library, error);
  if (!model) return nullptr;
  std::unique_ptr<DesignEmulator> e(new DesignEmulator());
  e->spec_ = spec;
  e->model_ = std::make_unique<LoadedModel>(std::move(*model));
  auto h = DesignHarness::make(e->spec_, *e->model_, seed, error, config.dram);
  if (!h) return nullptr;
  e->harness_.emplace(std::move(*h));
  e->harness_->set_stage_observer(e.get());
  e->harness_->set_override(e.get());
  e->quiet_cycles_ = quiet_cycles;
  e->hang_cycles_ = config.hang_cycles;

  emu::DesignInfo& info = e->info_;
  info.name = spec.name;
  info.revision = revision;
  for (const auto& c : e->harness_->counters()) info.counters.push_back(c.name);
  for (const auto& st : e->harness_->stages())
    if (info.stages.size() < emu::kNumStages) info.stages.push_back(st.name);
  for (const ModelPort& p : e->model_->ports()) {
    emu::SignalInfo s;
    s.name = p.name;
    s.width = p.width;
    s.elements = p.elements;
    s.kind = p.internal ? emu::SignalKind::State : emu::SignalKind::Port;
    // bud drives the inputs every cycle; a deposit there lasts until the next drive (force holds).
    s.writable = p.input || p.internal;
    s.description = p.internal ? "internal signal" : p.input ? "input port" : "output port";
    e->signals_.push_back(std::move(s));
  }
  for (const Axi4Memory& m : e->harness_->axi().memories())
    e->memories_.push_back(
        emu::MemoryInfo{m.config().region, m.bytes().size(), m.config().bus_bytes});
  e->harness_->save(e->power_on_);
  return e;
}

DesignEmulator::~DesignEmulator() {
  if (model_ && model_->tracing()) model_->trace_close();
}

std::string DesignEmulator::load(const emu::HostJob& /*job*/) {
  size_t at = 0;
  std::string error;
  if (!harness_->restore(power_on_, at, error)) return error;
  harness_->reset();
  state_ = emu::RunState::Ready;
  message_.clear();
  digests_ = {};
  return {};
}

void DesignEmulator::update_state() {
  const DesignHarness& h = *harness_;
  if (h.stopped()) {
    state_ = emu::RunState::Error;
    message_ = h.stop_message();
  } else if (h.drained(quiet_cycles_)) {
    state_ = emu::RunState::Finished;
  } else if (hang_cycles_ && h.idle_cycles() >= hang_cycles_) {
    state_ = emu::RunState::Hang;
    message_ = "no handshake for " + std::to_string(h.idle_cycles()) + " cycles (cycle " +
               std::to_string(h.cycle()) + ")";
  }
}

emu::StepResult DesignEmulator::step(uint64_t max_cycles) {
  emu::StepResult r;
  while (state_ == emu::RunState::Ready && r.cycles < max_cycles) {
    harness_->step();
    ++r.cycles;
    update_state();
    if (hook_ && hook_->after_cycle(harness_->cycle())) {
      r.hook_stop = true;
      break;
    }
  }
  r.state = state_;
  r.reached_limit = state_ == emu::RunState::Ready && !r.hook_stop && r.cycles == max_cycles;
  if (state_ != emu::RunState::Ready && state_ != emu::RunState::Finished) r.message = message_;
  return r;
}

void DesignEmulator::on_stage(size_t stage, const DesignHarness::StageState& st,
                              const LoadedModel& model) {
  if (stage >= emu::kNumStages) return;
  emu::StageTxn t;
  t.stage = static_cast<emu::Stage>(stage);
  t.cmd_id = static_cast<uint32_t>(st.txns - 1);
  t.cycle = harness_->cycle();
  // The payload's bytes, signal after signal; past 64 bytes the last 8 hold a hash of the rest.
  size_t n = 0;
  uint64_t rest = 0;
  bool spilled = false;
  for (size_t p : st.payload) {
    const ModelPort& mp = model.ports()[p];
    const size_t bytes = size_t{mp.bytes} * mp.elements;
    const auto* d = static_cast<const uint8_t*>(mp.data);
    const size_t fit = std::min(bytes, t.data.size() - 8 - std::min(n, t.data.size() - 8));
    switch (fit) {  // the common widths as fixed-size copies, not calls to memcpy
      case 1: t.data[n] = *d; break;
      case 2: std::memcpy(t.data.data() + n, d, 2); break;
      case 4: std::memcpy(t.data.data() + n, d, 4); break;
      case 8: std::memcpy(t.data.data() + n, d, 8); break;
      default: std::memcpy(t.data.data() + n, d, fit); break;
    }
    n += fit;
    if (fit < bytes) {
      spilled = true;
      const std::array<uint64_t, 2> w{rest, hash64({d + fit, bytes - fit})};
      rest = hash_words(w);
    }
  }
  if (spilled) {
    std::memcpy(t.data.data() + t.data.size() - 8, &rest, 8);
    n = t.data.size();
  }
  t.size = static_cast<uint16_t>(n);
  digests_[stage].add(t);
  if (observer_) observer_->on_txn(t);
}

bool DesignEmulator::apply(LoadedModel& model) {
  for (const Force& f : forces_) {
    const ModelPort& p = model.ports()[f.id];
    std::memcpy(element_data(p, f.element), f.value.words.data(), std::min<size_t>(p.bytes, 64));
  }
  return !forces_.empty();
}

std::string DesignEmulator::status_report() const {
  std::string s = "design " + info_.name + " at cycle " + std::to_string(cycle()) + ", idle for " +
                  std::to_string(harness_->idle_cycles()) + " cycles\n";
  for (const auto& e : engines())
    s += "  " + e.name + ": " + e.state + (e.detail.empty() ? "" : " (" + e.detail + ")") + "\n";
  return s;
}

std::vector<emu::EngineStatus> DesignEmulator::engines() const {
  std::vector<emu::EngineStatus> out;
  const LoadedModel& m = *model_;
  for (const auto& st : harness_->stages()) {
    emu::EngineStatus e;
    e.name = st.name;
    const bool valid = m.get(st.valid) != 0, ready = !st.ready || m.get(*st.ready) != 0;
    e.state = valid && ready ? "transfer" : valid ? "stalled" : "idle";
    e.detail = std::to_string(st.txns) + " transactions";
    if (st.txns) e.detail += ", last at cycle " + std::to_string(st.last_cycle);
    if (st.txns) e.cmd_id = static_cast<uint32_t>(st.txns - 1);
    out.push_back(std::move(e));
  }
  for (const auto& s : harness_->streams()) {
    emu::EngineStatus e;
    e.name = "stream " + s.name;
    e.state = s.source ? (s.sent < s.bytes.size() ? "sending" : "sent") : "collecting";
    e.detail = std::to_string(s.beats) + " beats, " +
               std::to_string(s.source ? s.sent : s.bytes.size()) + " bytes";
    out.push_back(std::move(e));
  }
  if (const auto& fw = harness_->axi().firmware()) {
    emu::EngineStatus e;
    e.name = "firmware";
    e.state = fw->finished() ? "finished" : "running";
    e.detail = std::to_string(fw->accesses()) + " accesses, line " +
               std::to_string(fw->current_line());
    out.push_back(std::move(e));
  }
  return out;
}

void DesignEmulator::save(std::vector<uint8_t>& out) const {
  StateWriter w{out};
  w.header(kMagic, kVersion);
  w.u8(static_cast<uint8_t>(state_));
  w.u32(static_cast<uint32_t>(message_.size()));
  w.bytes(message_.data(), message_.size());
  for (const emu::StageDigest& d : digests_) {
    w.u64(d.count);
    w.u64(d.sum);
    w.u32(d.open_cmd);
    w.u64(d.open_count);
    w.u64(d.open_sum);
  }
  harness_->save(out);
}

bool DesignEmulator::restore(std::span<const uint8_t> in, std::string& error) {
  StateReader r{in, 0, "design emulator", {}};
  r.header(kMagic, kVersion);
  const uint8_t state = r.u8();
  const uint32_t n = r.u32();
  std::string message(r.need(n) ? n : 0, '\0');
  r.bytes(message.data(), message.size());
  std::array<emu::StageDigest, emu::kNumStages> digests{};
  for (emu::StageDigest& d : digests) {
    d.count = r.u64();
    d.sum = r.u64();
    d.open_cmd = r.u32();
    d.open_count = r.u64();
    d.open_sum = r.u64();
  }
  if (r.ok() && state > static_cast<uint8_t>(emu::RunState::CycleLimit)) r.fail("bad run state");
  if (!r.ok()) {
    error = r.err;
    return false;
  }
  size_t at = r.pos;
  if (!harness_->restore(in, at, error)) return false;
  if (at != in.size()) {
    error = "design emulator restore: " + std::to_string(in.size() - at) +
            " bytes past the state at byte offset " + std::to_string(at);
    return false;
  }
  state_ = static_cast<emu::RunState>(state);
  message_ = std::move(message);
  digests_ = digests;
  return true;
}

uint64_t DesignEmulator::digest() {
  std::array<uint64_t, 2> w{harness_->digest(), static_cast<uint64_t>(state_)};
  return hash_words(w);
}

std::optional<emu::SignalId> DesignEmulator::find_signal(std::string_view name) const {
  const auto i = model_->find(std::string(name));
  if (!i) return std::nullopt;
  return static_cast<emu::SignalId>(*i);
}

emu::SignalValue DesignEmulator::read_signal(emu::SignalId id, uint32_t element) const {
  emu::SignalValue v;
  if (id >= signals_.size() || element >= signals_[id].elements) return v;
  const ModelPort& p = model_->ports()[id];
  v.width = p.width;
  std::memcpy(v.words.data(), element_data(p, element), std::min<size_t>(p.bytes, 64));
  if (p.width % 64) v.words[p.width / 64] &= (uint64_t{1} << (p.width % 64)) - 1;
  return v;
}

void DesignEmulator::write_value(emu::SignalId id, uint32_t element, const emu::SignalValue& v) {
  const ModelPort& p = model_->ports()[id];
  emu::SignalValue masked = v;
  for (uint32_t w = 0; w < masked.words.size(); ++w) {
    if (w * 64 >= p.width) masked.words[w] = 0;
    else if (p.width - w * 64 < 64) masked.words[w] &= (uint64_t{1} << (p.width - w * 64)) - 1;
  }
  std::memcpy(element_data(p, element), masked.words.data(), std::min<size_t>(p.bytes, 64));
}

bool DesignEmulator::deposit_signal(emu::SignalId id, uint32_t element, const emu::SignalValue& v) {
  if (id >= signals_.size() || element >= signals_[id].elements || !signals_[id].writable)
    return false;
  write_value(id, element, v);
  model_->eval();  // what depends on it combinationally settles now
  return true;
}

bool DesignEmulator::force_signal(emu::SignalId id, uint32_t element, const emu::SignalValue& v) {
  if (!deposit_signal(id, element, v)) return false;
  const emu::SignalValue now = read_signal(id, element);
  for (Force& f : forces_)
    if (f.id == id && f.element == element) {
      f.value = now;
      return true;
    }
  forces_.push_back(Force{id, element, now});
  return true;
}

void DesignEmulator::release_signal(emu::SignalId id, uint32_t element) {
  std::erase_if(forces_, [&](const Force& f) { return f.id == id && f.element == element; });
}

bool DesignEmulator::read_memory(std::string_view memory, uint64_t offset,
                                 std::span<uint8_t> out) const {
  const Axi4Memory* m = harness_->axi().memory(std::string(memory));
  return m && m->read(offset, out);
}

bool DesignEmulator::write_memory(std::string_view memory, uint64_t offset,
                                  std::span<const uint8_t> in) {
  Axi4Memory* m = harness_->axi().memory(std::string(memory));
  return m && m->write(offset, in);
}

uint64_t DesignEmulator::counter(int index) const {
  const auto& cs = harness_->counters();
  if (index < 0 || static_cast<size_t>(index) >= cs.size()) return 0;
  return cs[static_cast<size_t>(index)].value(*model_);
}

emu::StageDigest DesignEmulator::stage_digest(emu::Stage s) const {
  return digests_[static_cast<size_t>(s)];
}

const void* DesignEmulator::counter_address(int index) const {
  const auto& cs = harness_->counters();
  if (index < 0 || static_cast<size_t>(index) >= cs.size()) return nullptr;
  const auto& c = cs[static_cast<size_t>(index)];
  // A signal counter is the signal itself, narrower than the 8 bytes readers take: no address.
  return c.signal ? nullptr : &c.count;
}

const void* DesignEmulator::signal_address(emu::SignalId id, uint32_t element,
                                           uint32_t& bytes) const {
  if (id >= signals_.size() || element >= signals_[id].elements) return nullptr;
  const ModelPort& p = model_->ports()[id];
  if (p.bytes > 8) return nullptr;
  bytes = p.bytes;
  return element_data(p, element);
}

std::string DesignEmulator::wave_open(const std::string& path) { return model_->trace_open(path); }

void DesignEmulator::wave_close() { model_->trace_close(); }

}  // namespace bud::design
