#include "design/DesignHarness.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "debugger/expr/Compiler.h"
#include "design/HandshakeProfile.h"
#include "design/ProbeBuild.h"
#include "design/StateBytes.h"
#include "emu/core/Hash.h"

namespace bud::design {

// Names for the counters' expressions: every signal of the model; values read from it.
class DesignHarness::Signals : public debugger::NameResolver, public debugger::Sampler {
 public:
  explicit Signals(const LoadedModel& m) : m_(m) {}
  std::optional<debugger::Ref> resolve(std::string_view name, std::optional<uint32_t> index) override {
    const auto i = m_.find(std::string(name));
    if (!i) return std::nullopt;
    const ModelPort& p = m_.ports()[*i];
    if (index && *index >= p.elements) return std::nullopt;
    debugger::Ref r;
    r.kind = debugger::RefKind::Other;
    r.id = static_cast<uint32_t>(*i);
    r.element = index.value_or(0);
    r.elements = p.elements;
    r.width = p.width;
    // Read in place: the expression loads the Verilated member directly every cycle.
    r.direct = static_cast<const uint8_t*>(p.data) + size_t{r.element} * p.bytes;
    r.direct_bytes = p.bytes < 8 ? p.bytes : 8;
    return r;
  }
  std::vector<std::string> names() const override {
    std::vector<std::string> n;
    for (const auto& p : m_.ports()) n.push_back(p.name);
    return n;
  }
  uint64_t sample(const debugger::Ref& r) override {
    uint64_t v = 0;
    const ModelPort& p = m_.ports()[r.id];
    std::memcpy(&v, static_cast<const uint8_t*>(p.data) + size_t{r.element} * p.bytes,
                p.bytes < 8 ? p.bytes : 8);
    return v;
  }

 private:
  const LoadedModel& m_;
};

namespace {
uint32_t ppm(double rate) { return static_cast<uint32_t>(rate * 1'000'000 + 0.5); }
}  // namespace

std::optional<DesignHarness> DesignHarness::make(const DesignSpec& spec, LoadedModel& model,
                                                 uint64_t seed, std::string& error,
                                                 const emu::DramConfig& dram, ProbeMode mode) {
  DesignHarness h;
  h.model_ = &model;
  h.rng_.reseed(seed);
  auto need = [&](const std::string& name, const Where& w) -> std::optional<size_t> {
    auto i = model.find(name);
    if (!i) error = w.to_string() + ": the built model has no signal '" + name + "'";
    return i;
  };
  auto clk = need(spec.clock.name, spec.clock.where);
  if (!clk) return std::nullopt;
  h.clock_ = *clk;
  h.clock_ref_ = model.ref(*clk);
  if (spec.has_reset) {
    h.reset_ = need(spec.reset.name, spec.reset.where);
    if (!h.reset_) return std::nullopt;
    h.reset_low_ = spec.reset.active_low;
    h.reset_cycles_ = spec.reset.cycles;
  }
  for (const StreamPort& s : spec.streams) {
    Stream st;
    st.name = s.name;
    st.source = s.direction == StreamPort::Direction::Source;
    st.beat_bytes = s.data_bits / 8;
    st.rate = s.rate;
    for (auto [field, slot] : {std::pair{"tdata", &st.data}, std::pair{"tvalid", &st.valid},
                               std::pair{"tready", &st.ready}}) {
      auto i = need(s.prefix + field, s.where);
      if (!i) return std::nullopt;
      *slot = *i;
    }
    if (st.source) {
      std::ifstream in(s.file, std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      st.bytes = ss.str();
      if (!in || st.bytes.size() % st.beat_bytes != 0) {
        error = s.where.to_string() + ": [[stream]] " + s.name + ": '" + s.file +
                "' is unreadable or not a whole number of " + std::to_string(st.beat_bytes) +
                "-byte beats";
        return std::nullopt;
      }
    }
    h.streams_.push_back(std::move(st));
  }
  // Sinks collect at most what the sources send times the widest ratio, reserved up front so
  // that step() appends without allocating for any design that does not amplify its input.
  size_t in_bytes = 0;
  for (const auto& s : h.streams_) in_bytes += s.source ? s.bytes.size() : 0;
  for (auto& s : h.streams_)
    if (!s.source) s.bytes.reserve(in_bytes * 8 + 4096);
  Signals names(model);
  for (const CounterSpec& c : spec.counters) {
    Counter k;
    k.name = c.name;
    if (!c.signal.empty()) {
      k.signal = need(c.signal, c.expr_where);
      if (!k.signal) return std::nullopt;
    } else {
      auto r = debugger::compile(c.when, names);
      if (!r) {
        error = c.expr_where.to_string() + ": [[counter]] " + c.name + ".when: " + r.error.to_string();
        return std::nullopt;
      }
      k.when = std::move(*r.expr);
    }
    h.counters_.push_back(std::move(k));
  }
  for (const StageSpec& s : spec.stages) {
    StageState st;
    st.name = s.name;
    auto v = need(s.valid, s.where);
    if (!v) return std::nullopt;
    st.valid = *v;
    if (!s.ready.empty()) {
      st.ready = need(s.ready, s.where);
      if (!st.ready) return std::nullopt;
    }
    for (const auto& p : s.payload) {
      auto i = need(p, s.where);
      if (!i) return std::nullopt;
      st.payload.push_back(*i);
    }
    h.stages_.push_back(std::move(st));
  }
  auto axi = AxiPorts::make(spec, model, dram, seed, error);
  if (!axi) return std::nullopt;
  h.axi_ = std::move(*axi);
  h.has_axi_ = !h.axi_->memories().empty() || h.axi_->firmware();
  for (const Stream& s : h.streams_) h.pending_sources_ += s.source && !s.bytes.empty();

  // The pairs sampled every cycle: the stages', then the streams' no stage has.
  for (const StageState& st : h.stages_) h.handshakes_.push_back(Handshake{st.valid, st.ready});
  for (const Stream& s : h.streams_) {
    size_t i = 0;
    while (i < h.handshakes_.size() &&
           !(h.handshakes_[i].valid == s.valid && h.handshakes_[i].ready == s.ready))
      ++i;
    if (i == h.handshakes_.size()) h.handshakes_.push_back(Handshake{s.valid, s.ready});
    h.stream_handshake_.push_back(static_cast<uint32_t>(i));
    h.stream_pins_.push_back(
        StreamPins{model.ref(s.data), model.ref(s.valid), model.ref(s.ready), ppm(s.rate)});
  }
  for (const Handshake& hs : h.handshakes_)
    h.handshake_refs_.push_back(HandshakeRefs{model.ref(hs.valid),
                                              hs.ready ? model.ref(*hs.ready) : PortRef{},
                                              hs.ready.has_value()});
  h.valid_.assign((h.handshakes_.size() + 63) / 64, 0);
  h.ready_.assign(h.valid_.size(), 0);
  for (const StageState& st : h.stages_) {
    std::vector<PayloadRead> reads;
    for (size_t p : st.payload) {
      const ModelPort& mp = model.ports()[p];
      const uint32_t n = mp.bytes * mp.elements;
      // A payload of up to 8 bytes is its own value (zero-extended); a wider one its XXH3.
      reads.push_back(PayloadRead{model.ref(p), n > 8, n});
    }
    h.payload_.push_back(std::move(reads));
  }

  // The probe: every handshake, stage and stateless `when` counter as compiled code.
  const char* env = std::getenv("BUD_DESIGN_PROBE");
  if (env && std::string(env) == "interpreted") mode = ProbeMode::Interpreted;
  ProbePlan plan;
  plan.design = spec.name;
  for (const Handshake& hs : h.handshakes_)
    plan.handshakes.push_back(ProbePlan::Handshake{
        plan.slot(ProbePlan::port_signal(model, hs.valid)),
        hs.ready ? std::optional(plan.slot(ProbePlan::port_signal(model, *hs.ready)))
                 : std::nullopt});
  for (const StageState& st : h.stages_) {
    std::vector<ProbePlan::Payload> pay;
    for (size_t p : st.payload) {
      const ModelPort& mp = model.ports()[p];
      const uint32_t n = mp.bytes * mp.elements;
      pay.push_back(n > 8 ? ProbePlan::Payload{plan.slot(ProbePlan::Signal{p, 0, 8}), true, n}
                          : ProbePlan::Payload{plan.slot(ProbePlan::port_signal(model, p)), false, 0});
    }
    plan.stages.push_back(std::move(pay));
  }
  std::vector<size_t> compiled_counters;
  for (size_t i = 0; i < h.counters_.size(); ++i) {
    const Counter& c = h.counters_[i];
    if (!c.when) continue;
    std::optional<std::string> code;
    ProbePlan::Counter pc;
    if (mode == ProbeMode::Compiled) {
      std::vector<std::string> loads;
      bool direct = true;
      for (const debugger::Ref& r : c.when->refs()) {
        const uint32_t w = r.direct_bytes;
        direct = direct && r.direct && (w == 1 || w == 2 || w == 4 || w == 8);
        pc.slots.push_back(plan.slot(ProbePlan::Signal{r.id, r.element, w}));
        loads.push_back(ProbePlan::slot_name(pc.slots.back()));
      }
      if (direct) code = c.when->to_cpp(ProbePlan::counter_name(plan.counters.size()), loads);
    }
    if (!code) {
      h.expr_counters_.push_back(i);  // stateful (or interpreted): the expression machine
      continue;
    }
    pc.code = std::move(*code);
    plan.counters.push_back(std::move(pc));
    compiled_counters.push_back(i);
  }
  if (mode == ProbeMode::Compiled) {
    std::string why;
    const std::string dir = std::filesystem::path(model.library()).parent_path().string();
    auto library = build_probe(probe_source(plan), dir.empty() ? "." : dir, why);
    if (library) h.probe_ = CompiledProbe::load(*library, why);
    if (h.probe_) {
      std::vector<uint64_t*> counts, stages;
      for (size_t i : compiled_counters) counts.push_back(&h.counters_[i].count);
      for (StageState& st : h.stages_)
        for (uint64_t* f : {&st.txns, &st.digest, &st.first_cycle, &st.last_cycle}) stages.push_back(f);
      h.probe_->bind(plan, model, std::move(counts), std::move(stages), h.valid_.data(),
                     h.ready_.data());
    } else {
      // The interpreter gives the same results, only slower: the compiled counters go back.
      h.probe_error_ = why;
      h.expr_counters_.insert(h.expr_counters_.end(), compiled_counters.begin(),
                              compiled_counters.end());
      std::sort(h.expr_counters_.begin(), h.expr_counters_.end());
    }
  }
  return h;
}

void DesignHarness::reset() {
  LoadedModel& m = *model_;
  for (const auto& s : streams_) {
    if (s.source) m.set(s.valid, 0);
    else m.set(s.ready, 0);
  }
  axi_->idle(m);
  if (!reset_) return;
  m.set(*reset_, reset_low_ ? 0 : 1);
  for (uint32_t i = 0; i < reset_cycles_; ++i) {
    m.set(clock_, 0);
    m.eval();
    m.set(clock_, 1);
    m.eval();
  }
  m.set(clock_, 0);
  m.set(*reset_, reset_low_ ? 1 : 0);
  m.eval();
}

void DesignHarness::sample_interpreted() {
  std::fill(valid_.begin(), valid_.end(), 0);
  std::fill(ready_.begin(), ready_.end(), 0);
  for (size_t i = 0; i < handshake_refs_.size(); ++i) {
    const HandshakeRefs& r = handshake_refs_[i];
    valid_[i / 64] |= uint64_t{r.valid.get() != 0} << (i % 64);
    ready_[i / 64] |= uint64_t{!r.has_ready || r.ready.get() != 0} << (i % 64);
  }
  for (size_t i = 0; i < stages_.size(); ++i) {
    if (!((valid_[i / 64] & ready_[i / 64]) >> (i % 64) & 1)) continue;
    StageState& st = stages_[i];
    uint64_t h = st.digest;
    for (const PayloadRead& p : payload_[i])
      h = stage_mix(h, p.hashed ? hash64({static_cast<const uint8_t*>(p.ref.data), p.bytes})
                                : p.ref.get());
    st.digest = stage_mix(h, st.txns);
    if (st.txns++ == 0) st.first_cycle = cycle_;
    st.last_cycle = cycle_;
  }
}

void DesignHarness::step() {
  LoadedModel& m = *model_;
  // Drive: a source offers its next beat with probability `rate` (and keeps offering it until
  // it is taken, as AXI-Stream requires); a sink is ready with probability `rate`.
  for (size_t k = 0; k < streams_.size(); ++k) {
    Stream& s = streams_[k];
    const StreamPins& p = stream_pins_[k];
    if (s.source) {
      if (!s.offering && s.sent < s.bytes.size()) s.offering = rng_.chance(p.ppm, 1'000'000);
      uint64_t beat = 0;
      if (s.offering) {
        const char* at = s.bytes.data() + s.sent;
        switch (s.beat_bytes) {  // fixed-size loads, no call to memcpy
          case 1: beat = static_cast<uint8_t>(*at); break;
          case 2: { uint16_t v; std::memcpy(&v, at, 2); beat = v; break; }
          case 4: { uint32_t v; std::memcpy(&v, at, 4); beat = v; break; }
          default: std::memcpy(&beat, at, s.beat_bytes < 8 ? s.beat_bytes : 8); break;
        }
      }
      p.data.set(beat);
      p.valid.set(s.offering ? 1 : 0);
    } else {
      p.ready.set(rng_.chance(p.ppm, 1'000'000) ? 1 : 0);
    }
  }
  if (has_axi_) axi_->drive(m);
  if (override_) override_->apply(m);
  m.eval();  // settle before the edge: the handshakes below are what the edge will see
  // The handshakes, the stages' transactions and digests, the compiled counters.
  if (probe_) probe_->run(cycle_);
  else sample_interpreted();
  uint64_t fired = 0;
  for (size_t w = 0; w < valid_.size(); ++w) fired |= valid_[w] & ready_[w];
  auto transferred = [&](size_t i) { return (valid_[i / 64] & ready_[i / 64]) >> (i % 64) & 1; };
  if (fired) {
    last_activity_ = cycle_;
    for (size_t k = 0; k < streams_.size(); ++k) {
      if (!transferred(stream_handshake_[k])) continue;
      Stream& s = streams_[k];
      ++s.beats;
      if (s.source) {
        // (A forced valid can move a source that has sent everything: count the end once.)
        pending_sources_ -= s.sent < s.bytes.size() && s.sent + s.beat_bytes >= s.bytes.size();
        s.sent += s.beat_bytes;
        s.offering = false;
      } else {
        s.bytes.append(static_cast<const char*>(stream_pins_[k].data.data), s.beat_bytes);
      }
    }
    if (observer_)
      for (size_t i = 0; i < stages_.size(); ++i)
        if (transferred(i)) observer_->on_stage(i, stages_[i], m);
  }
  if (profile_) profile_->sample_handshakes(valid_.data(), ready_.data());
  if (has_axi_ && axi_->sample(m)) last_activity_ = cycle_;
  if (!expr_counters_.empty()) {
    Signals sampler(m);
    for (size_t i : expr_counters_)
      if (counters_[i].when->eval(sampler).truthy()) ++counters_[i].count;
  }
  clock_ref_.set(1);
  m.eval();
  m.trace_dump(10 * cycle_ + 5);  // waveform time: 10 units a cycle, the edge at +5
  clock_ref_.set(0);
  m.eval();
  if (override_ && override_->apply(m)) m.eval();
  m.trace_dump(10 * cycle_ + 10);
  if (has_axi_) axi_->tick();
  ++cycle_;
  if (profile_) profile_->end_cycle(*this);
}

std::string DesignHarness::stop_message() const {
  if (const char* e = axi_->memory_error()) return e;
  return axi_->firmware() ? axi_->firmware()->message() : "";
}

namespace {
constexpr char kHarnessMagic[9] = "BUDHARN1";
constexpr uint32_t kHarnessVersion = 1;
}  // namespace

void DesignHarness::save(std::vector<uint8_t>& out) const {
  save_state(out);
  save_model(out);
}

void DesignHarness::save_state(std::vector<uint8_t>& out) const {
  StateWriter w{out};
  w.header(kHarnessMagic, kHarnessVersion);
  w.u64(cycle_);
  w.u64(last_activity_);
  for (uint64_t x : rng_.state()) w.u64(x);
  for (const Stream& s : streams_) {
    w.u64(s.sent);
    w.u8(s.offering ? 1 : 0);
    w.u64(s.beats);
    if (!s.source) {
      w.u64(s.bytes.size());
      w.bytes(s.bytes.data(), s.bytes.size());
    }
  }
  for (const Counter& c : counters_) w.u64(c.count);
  for (const StageState& st : stages_) {
    w.u64(st.txns);
    w.u64(st.digest);
    w.u64(st.first_cycle);
    w.u64(st.last_cycle);
  }
}

void DesignHarness::save_model(std::vector<uint8_t>& out) const {
  const std::span<const uint8_t> model = model_->save();
  StateWriter w{out};
  w.u64(model.size());
  w.bytes(model.data(), model.size());
  axi_->save(out);
}

uint64_t DesignHarness::digest() const {
  std::vector<uint8_t> state;
  save_state(state);
  StateWriter w{state};
  for (const ModelPort& p : model_->ports()) w.bytes(p.data, size_t{p.bytes} * p.elements);
  axi_->save(state);
  return hash64(state);
}

bool DesignHarness::restore(std::span<const uint8_t> in, size_t& offset, std::string& error) {
  StateReader r{in, offset, "design harness", {}};
  r.header(kHarnessMagic, kHarnessVersion);
  const uint64_t cycle = r.u64(), last = r.u64();
  std::array<uint64_t, 4> rng{};
  for (uint64_t& x : rng) x = r.u64();
  std::vector<Stream> streams = streams_;
  for (Stream& s : streams) {
    s.sent = r.u64();
    s.offering = r.u8() != 0;
    s.beats = r.u64();
    if (s.source) {
      if (r.ok() && s.sent > s.bytes.size()) r.fail("stream '" + s.name + "' position past its file");
      continue;
    }
    const uint64_t n = r.u64();
    if (!r.need(n)) break;
    s.bytes.assign(reinterpret_cast<const char*>(in.data() + r.pos), n);
    r.pos += n;
  }
  std::vector<uint64_t> counts;
  for (size_t i = 0; i < counters_.size(); ++i) counts.push_back(r.u64());
  std::vector<StageState> stages = stages_;
  for (StageState& st : stages) {
    st.txns = r.u64();
    st.digest = r.u64();
    st.first_cycle = r.u64();
    st.last_cycle = r.u64();
  }
  const uint64_t model_bytes = r.u64();
  r.need(model_bytes);
  if (!r.ok()) {
    error = r.err;
    return false;
  }
  const std::span<const uint8_t> model = in.subspan(r.pos, model_bytes);
  size_t at = r.pos + model_bytes;
  if (!axi_->restore(in, at, error)) return false;
  model_->restore(model);
  cycle_ = cycle;
  last_activity_ = last;
  rng_.set_state(rng);
  streams_ = std::move(streams);
  pending_sources_ = 0;
  for (const Stream& s : streams_) pending_sources_ += s.source && s.sent < s.bytes.size();
  for (size_t i = 0; i < counters_.size(); ++i) counters_[i].count = counts[i];
  // In place: the probe writes these fields through pointers.
  for (size_t i = 0; i < stages_.size(); ++i) {
    stages_[i].txns = stages[i].txns;
    stages_[i].digest = stages[i].digest;
    stages_[i].first_cycle = stages[i].first_cycle;
    stages_[i].last_cycle = stages[i].last_cycle;
  }
  offset = at;
  return true;
}

}  // namespace bud::design
