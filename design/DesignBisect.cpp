#include "design/DesignBisect.h"

#include <cstdio>
#include <cstring>

#include "design/DesignHarness.h"
#include "design/LoadedModel.h"
#include "design/ModelBuild.h"
#include "emu/core/Hash.h"

namespace bud::design {

namespace {

// Hashes every stage transaction's payload; optionally keeps the payload values of one
// transaction per stage (the second pass, once the differing indices are known).
class Recorder final : public DesignHarness::StageObserver {
 public:
  explicit Recorder(size_t stages) : hashes(stages), cycles(stages), want(stages), values(stages) {}
  void on_stage(size_t stage, const DesignHarness::StageState& st, const LoadedModel& m) override {
    const uint64_t index = st.txns - 1;
    if (capture) {
      if (want[stage] && *want[stage] == index) {
        for (size_t p : st.payload) values[stage].push_back(hex(m.ports()[p]));
        cycles[stage].push_back(cycle_now);
      }
      return;
    }
    uint64_t h = 0;
    for (size_t p : st.payload) {
      const ModelPort& mp = m.ports()[p];
      const std::array<uint64_t, 2> w{
          h, hash64({static_cast<const uint8_t*>(mp.data), size_t{mp.bytes} * mp.elements})};
      h = hash_words(w);
    }
    hashes[stage].push_back(h);
    cycles[stage].push_back(cycle_now);
  }
  static std::string hex(const ModelPort& p) {
    const size_t n = size_t{p.bytes} * p.elements;
    const auto* d = static_cast<const uint8_t*>(p.data);
    std::string s = "0x";
    char b[3];
    bool lead = true;
    for (size_t i = n; i-- > 0;) {
      if (lead && d[i] == 0 && i > 0) continue;
      lead = false;
      std::snprintf(b, sizeof b, "%02x", d[i]);
      s += b;
    }
    return s;
  }
  bool capture = false;
  uint64_t cycle_now = 0;
  std::vector<std::vector<uint64_t>> hashes, cycles;
  std::vector<std::optional<uint64_t>> want;
  std::vector<std::vector<std::string>> values;
};

struct Ran {
  uint64_t cycles = 0;
  std::string state;
};

std::optional<Ran> run_one(const DesignTarget& t, const BisectOptions& o, Recorder& rec,
                           DesignError& error) {
  std::string why;
  auto model = LoadedModel::load(t.library, why);
  if (!model) {
    error = DesignError{t.spec.top_where, why, kExitModelBuild};
    return std::nullopt;
  }
  auto h = DesignHarness::make(t.spec, *model, o.seed, why);
  if (!h) {
    error = DesignError{t.spec.top_where, why, kExitRtlMismatch};
    return std::nullopt;
  }
  h->set_stage_observer(&rec);
  h->reset();
  while (!h->drained(o.quiet_cycles) && !h->stopped() && h->cycle() < o.max_cycles) {
    rec.cycle_now = h->cycle();
    h->step();
  }
  Ran r{h->cycle(), "finished"};
  if (h->stopped()) {
    r.state = "error: " + h->stop_message();
  } else if (!h->drained(o.quiet_cycles)) {
    r.state = "cycle_limit";
  }
  return r;
}

}  // namespace

std::optional<BisectOutcome> bisect_designs(const DesignTarget& good, const DesignTarget& bad,
                                            const BisectOptions& o, DesignError& error) {
  const auto& gs = good.spec.stages;
  const auto& bs = bad.spec.stages;
  bool same = gs.size() == bs.size();
  for (size_t i = 0; same && i < gs.size(); ++i) same = gs[i].name == bs[i].name;
  if (!same || gs.empty()) {
    error = DesignError{bad.spec.top_where,
                        gs.empty() ? "the design has no [[stage]] to compare"
                                   : "the two designs do not have the same [[stage]] names in "
                                     "the same order",
                        kExitBadDesignFile};
    return std::nullopt;
  }
  const size_t n = gs.size();
  Recorder g(n), b(n);
  const auto rg = run_one(good, o, g, error);
  if (!rg) return std::nullopt;
  const auto rb = run_one(bad, o, b, error);
  if (!rb) return std::nullopt;

  BisectOutcome out;
  out.good_revision = good.revision;
  out.bad_revision = bad.revision;
  out.good_cycles = rg->cycles;
  out.bad_cycles = rb->cycles;
  out.good_state = rg->state;
  out.bad_state = rb->state;
  out.simulated_cycles = rg->cycles + rb->cycles;
  for (size_t s = 0; s < n; ++s) {
    StageComparison c;
    c.name = gs[s].name;
    c.good_txns = g.hashes[s].size();
    c.bad_txns = b.hashes[s].size();
    const size_t common = std::min(c.good_txns, c.bad_txns);
    for (size_t i = 0; i < common && !c.first_difference; ++i)
      if (g.hashes[s][i] != b.hashes[s][i]) c.first_difference = i;
    if (!c.first_difference && c.good_txns != c.bad_txns) c.first_difference = common;
    if (c.first_difference) {
      const uint64_t i = *c.first_difference;
      c.good_cycle = i < c.good_txns ? g.cycles[s][i] : 0;
      c.bad_cycle = i < c.bad_txns ? b.cycles[s][i] : 0;
      g.want[s] = b.want[s] = i;
      if (!out.first_failing) out.first_failing = s;
      else out.persistent = true;
    }
    out.stages.push_back(std::move(c));
  }
  if (out.first_failing) {
    // Second pass: the payload values at each stage's first differing transaction.
    for (Recorder* r : {&g, &b}) {
      r->capture = true;
      for (auto& c : r->cycles) c.clear();
    }
    const auto g2 = run_one(good, o, g, error);
    const auto b2 = run_one(bad, o, b, error);
    if (!g2 || !b2) return std::nullopt;
    out.simulated_cycles += g2->cycles + b2->cycles;
    for (size_t s = 0; s < n; ++s) {
      if (!out.stages[s].first_difference) continue;
      for (size_t p = 0; p < gs[s].payload.size(); ++p) {
        const auto at = [&](const Recorder& r) {
          return p < r.values[s].size() ? r.values[s][p] : std::string("-");
        };
        out.stages[s].values.push_back({gs[s].payload[p], at(g), at(b)});
      }
    }
    const StageComparison& f = out.stages[*out.first_failing];
    out.message = "first failing stage: " + f.name + " (stage " +
                  std::to_string(*out.first_failing) + "), transaction #" +
                  std::to_string(*f.first_difference) +
                  (f.bad_cycle ? " at cycle " + std::to_string(f.bad_cycle) : std::string()) +
                  (out.persistent ? "; persistent: later stages differ too"
                                  : "; not persistent: no later stage differs");
  } else if (out.good_state != out.bad_state) {
    out.ending_differs = true;
    out.message = "no stage differs, but the runs end differently: good " + out.good_state +
                  " at cycle " + std::to_string(out.good_cycles) + ", bad " + out.bad_state +
                  " at cycle " + std::to_string(out.bad_cycles);
  } else {
    out.message = out.good_cycles == out.bad_cycles
                      ? "no stage differs: every transaction of every stage is the same"
                      : "no stage differs, but the bad run took " +
                            std::to_string(out.bad_cycles) + " cycles against " +
                            std::to_string(out.good_cycles) + " (timing only)";
  }
  return out;
}

}  // namespace bud::design
