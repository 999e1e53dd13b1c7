#include "design/HandshakeProfile.h"

#include <algorithm>

#include "design/DesignHarness.h"

namespace bud::design {

const char* state_name(HandshakeState s) {
  switch (s) {
    case HandshakeState::Busy:
      return "busy";
    case HandshakeState::Starved:
      return "starved";
    case HandshakeState::BackPressured:
      return "backpressured";
    case HandshakeState::Idle:
      return "idle";
  }
  return "?";
}

const char* kind_name(HandshakeKind k) {
  switch (k) {
    case HandshakeKind::Stage:
      return "stage";
    case HandshakeKind::Stream:
      return "stream";
    case HandshakeKind::Axi4:
      return "axi4";
    case HandshakeKind::Control:
      return "control";
  }
  return "?";
}

namespace {

// Who drives valid and ready on an AXI4 master's channel: the design issues AR, AW and W, the
// memory answers on R and B. On the AXI4-Lite slave the firmware issues and the design answers.
bool master_issues(const std::string& channel) {
  return channel == "ar" || channel == "aw" || channel == "w";
}

}  // namespace

std::optional<HandshakeProfile> HandshakeProfile::make(const DesignSpec& spec,
                                                       const DesignHarness& harness,
                                                       const ProfileOptions& options,
                                                       std::string& error) {
  if (options.interval == 0 || options.max_samples < 2) {
    error = "the counter interval must be at least 1 cycle (and at least 2 samples kept)";
    return std::nullopt;
  }
  HandshakeProfile p;
  const LoadedModel& m = harness.model();
  // Signals a stage already samples are not profiled twice: a stream or channel is listed on its
  // own only when no stage has its valid signal.
  std::vector<size_t> covered;
  auto add = [&](Handshake h, size_t valid, std::optional<size_t> ready) {
    covered.push_back(valid);
    h.valid_signal = m.ports()[valid].name;
    h.ready_signal = ready ? m.ports()[*ready].name : "";
    Bound b;
    const auto& pairs = harness.handshakes();
    for (size_t i = 0; i < pairs.size() && b.shared < 0; ++i)
      if (pairs[i].valid == valid && pairs[i].ready == ready) b.shared = static_cast<int32_t>(i);
    b.valid = m.ref(valid);
    if (ready) b.ready = m.ref(*ready);
    b.has_ready = ready.has_value();
    p.bound_.push_back(b);
    p.handshakes_.push_back(std::move(h));
  };
  auto is_covered = [&](size_t valid) {
    return std::find(covered.begin(), covered.end(), valid) != covered.end();
  };
  for (size_t i = 0; i < harness.stages().size(); ++i) {
    const DesignHarness::StageState& st = harness.stages()[i];
    const StageSpec& ss = spec.stages[i];
    Handshake h;
    h.name = st.name;
    h.stage = i;
    if (!ss.axi4.empty()) {
      h.port = ss.axi4;
      const bool issues = master_issues(ss.channel);
      h.producer = issues ? Party::Design : Party::Memory;
      h.consumer = issues ? Party::Memory : Party::Design;
    }
    for (const auto& s : spec.streams)
      if (ss.valid == s.prefix + "tvalid") {
        const bool source = s.direction == StreamPort::Direction::Source;
        h.port = s.name;
        h.producer = source ? Party::Source : Party::Design;
        h.consumer = source ? Party::Design : Party::Sink;
      }
    add(std::move(h), st.valid, st.ready);
  }
  for (const DesignHarness::Stream& s : harness.streams()) {
    if (is_covered(s.valid)) continue;
    Handshake h;
    h.name = "axis." + s.name;
    h.kind = HandshakeKind::Stream;
    h.port = s.name;
    h.producer = s.source ? Party::Source : Party::Design;
    h.consumer = s.source ? Party::Design : Party::Sink;
    add(std::move(h), s.valid, s.ready);
  }
  auto channel = [&](HandshakeKind kind, const std::string& port, const std::string& prefix,
                     const std::string& ch) -> bool {
    const auto v = m.find(prefix + ch + "valid"), r = m.find(prefix + ch + "ready");
    if (!v || !r) {
      error = "the model has no " + prefix + ch + "valid/" + prefix + ch + "ready";
      return false;
    }
    if (is_covered(*v)) return true;
    Handshake h;
    h.name = (kind == HandshakeKind::Control ? std::string("control") : port) + "." + ch;
    h.kind = kind;
    h.port = port;
    const bool issues = master_issues(ch);
    const Party outside = kind == HandshakeKind::Control ? Party::Firmware : Party::Memory;
    // An AXI4 master's AR/AW/W come from the design; the control slave's from the firmware.
    const bool design_issues = kind == HandshakeKind::Axi4 ? issues : !issues;
    h.producer = design_issues ? Party::Design : outside;
    h.consumer = design_issues ? outside : Party::Design;
    add(std::move(h), *v, *r);
    return true;
  };
  for (const Axi4Port& a : spec.axi4)
    for (const char* ch : {"ar", "r", "aw", "w", "b"})
      if (!channel(HandshakeKind::Axi4, a.name, a.prefix, ch)) return std::nullopt;
  if (spec.control)
    for (const char* ch : {"aw", "w", "b", "ar", "r"})
      if (!channel(HandshakeKind::Control, "control", spec.control->prefix, ch))
        return std::nullopt;
  p.max_spans_ = options.max_spans;
  if (options.max_spans > 0 && !p.bound_.empty()) {
    const uint64_t share = std::max<uint64_t>(1, options.max_spans / p.bound_.size());
    for (size_t i = 0; i < p.bound_.size(); ++i) {
      p.bound_[i].span_budget = share;
      p.handshakes_[i].spans.reserve(share);
    }
  }
  p.counts_.assign(kHandshakeStates * p.bound_.size(), 0);
  p.active_.assign(p.counts_.size(), 0);
  p.states_.assign(p.bound_.size(), 0);
  for (const auto& c : harness.counters()) p.counter_names_.push_back(c.name);
  p.max_samples_ = options.max_samples;
  p.series_.assign(size_t{p.max_samples_} * p.counter_names_.size(), 0);
  p.totals_.assign(p.counter_names_.size(), 0);
  p.interval_ = p.requested_interval_ = options.interval;
  p.quiet_cycles_ = options.quiet_cycles;
  return p;
}

void HandshakeProfile::sample_counters(const DesignHarness& harness) {
  since_sample_ = 0;
  const size_t n = counter_names_.size();
  if (samples_ == max_samples_) {
    // Full: keep the samples at even multiples of the interval (indices 1, 3, 5, ...), in place,
    // and sample half as often from now on.
    for (size_t i = 1, to = 0; i < samples_; i += 2, ++to)
      std::copy_n(series_.begin() + i * n, n, series_.begin() + to * n);
    samples_ /= 2;
    interval_ *= 2;
    // This cycle is an odd multiple of the new interval: not a sample any more.
    since_sample_ = interval_ / 2;
    return;
  }
  const auto& counters = harness.counters();
  for (size_t c = 0; c < n; ++c) series_[samples_ * n + c] = counters[c].value(harness.model());
  ++samples_;
}

void HandshakeProfile::finish(const DesignHarness& harness) {
  const auto& counters = harness.counters();
  for (size_t c = 0; c < counter_names_.size(); ++c)
    totals_[c] = counters[c].value(harness.model());
  const std::vector<uint64_t>& active = snapshot_ ? active_ : counts_;
  for (size_t i = 0; i < handshakes_.size(); ++i)
    for (size_t s = 0; s < kHandshakeStates; ++s) {
      handshakes_[i].cycles[s] = counts_[kHandshakeStates * i + s];
      handshakes_[i].active[s] = active[kHandshakeStates * i + s];
    }
}

bool HandshakeProfile::truncated() const {
  for (const Handshake& h : handshakes_)
    if (h.truncated_at) return true;
  return false;
}

}  // namespace bud::design
