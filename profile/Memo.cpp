#include "profile/Memo.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace bud::profile {
namespace {

/// A fraction as a percentage: a change carries its sign ("+86.1%"), a share does not ("63.7%").
std::string pct(double fraction, bool sign = true) {
  char b[32];
  std::snprintf(b, sizeof b, sign ? "%+.1f%%" : "%.1f%%", 100 * fraction);
  return b;
}

std::string bp(int32_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "%+.1f points", v / 100.0);
  return b;
}

/// The scope of a comparison's divergence in both profiles (the tail after the last layer).
const ScopeMetrics& scope_of(const Profile& p, int layer) {
  return layer >= 0 && static_cast<size_t>(layer) < p.layers.size()
             ? p.layers[static_cast<size_t>(layer)]
             : p.tail;
}

/// The sub-class of `cls` whose share of `t` moved most between b and n.
SubClass moved_sub(const TopDown& b, const TopDown& n, TopClass cls) {
  SubClass best = SubClass::Unattributed;
  double most = -1;
  for (int s = 0; s < kNumSubClasses; ++s) {
    if (parent_of(static_cast<SubClass>(s)) != cls) continue;
    const double sb = b.slots ? static_cast<double>(b.sub[s]) / static_cast<double>(b.slots) : 0;
    const double sn = n.slots ? static_cast<double>(n.sub[s]) / static_cast<double>(n.slots) : 0;
    if (std::fabs(sn - sb) > most) {
      most = std::fabs(sn - sb);
      best = static_cast<SubClass>(s);
    }
  }
  return best;
}

Memo::Tags tags_of(const ProfileInput& in) {
  return {in.model_revision, in.seed, in.mem_seed, in.profile.cycles, in.profile.array_macs};
}

/// A figure before and after, its change relative to the base (0 for a base of 0).
Delta relative(double base, double next) {
  return {base, next, base != 0 ? (next - base) / base : 0};
}

std::string fixed(double v, int digits) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

/// A figure of the evidence tables: whole from 1000, four significant digits below.
std::string figure_text(double v) {
  char b[64];
  std::snprintf(b, sizeof b, std::fabs(v) >= 1000 ? "%.0f" : "%.4g", v);
  return b;
}

/// The energy figures of both profiles and the mechanisms that can move them beyond the top-down
/// classes: the operating point, the thermal clamp, the work per inference.
void add_energy(Memo& m, const ProfileInput& base, const ProfileInput& next) {
  if (!base.energy || !next.energy) {
    const std::string who = !base.energy && !next.energy ? "neither profile has"
                            : !base.energy               ? base.file + " has"
                                                         : next.file + " has";
    m.energy_note = "not compared: " + who +
                    " an energy account (a packet profiled as recorded, or --no-energy); profile "
                    "both with `bud profile W --json`";
    return;
  }
  const RunEnergy& b = *base.energy;
  const RunEnergy& n = *next.energy;
  EnergyDeltas e;
  e.base = b;
  e.next = n;
  e.energy_uj =
      relative(static_cast<double>(b.total_fj) * 1e-9, static_cast<double>(n.total_fj) * 1e-9);
  e.watts = relative(b.watts, n.watts);
  e.inferences_per_joule = relative(b.inferences_per_joule, n.inferences_per_joule);
  e.tops_per_watt = relative(b.tops_per_watt, n.tops_per_watt);
  e.seconds = relative(b.seconds, n.seconds);
  m.energy = e;
  const bool moved =
      e.energy_uj.change != 0 || e.watts.change != 0 || base.profile.cycles != next.profile.cycles;

  using Kind = EnergyHypothesis::Kind;
  // A run without the thermal model ran unclamped: nominal = sustained = its cycles.
  const auto thermal_of = [](const ProfileInput& in) {
    if (in.thermal) return *in.thermal;
    RunThermal t;
    t.nominal_cycles = t.sustained_cycles = in.profile.cycles;
    return t;
  };
  const RunThermal tb = thermal_of(base), tn = thermal_of(next);
  const bool clamped = tb.clamped_cycles > 0 || tn.clamped_cycles > 0;
  const bool point = b.frequency_mhz != n.frequency_mhz || b.voltage != n.voltage;
  if (!moved && !clamped && !point) return;  // nothing to explain
  if (clamped) {
    EnergyHypothesis h;
    h.kind = Kind::ThermalClamp;
    const double lost =
        tn.nominal_cycles ? static_cast<double>(tn.sustained_cycles) / tn.nominal_cycles - 1 : 0;
    h.statement =
        "the thermal model clamped the clock for " + pct(tb.clamped_fraction, false) +
        " of the base run's cycles and " + pct(tn.clamped_fraction, false) + " of the new run's (" +
        std::to_string(tb.clamp_events) + " -> " + std::to_string(tn.clamp_events) +
        " clamp events): the new run's sustained cycles are " + pct(lost) +
        " over its nominal ones, while inferences/J moved " + pct(e.inferences_per_joule.change) +
        ". Reversible: the same run without --thermal gives the nominal figures; a "
        "lower operating point keeps the power under the trip point";
    h.evidence = {{"clamped % of cycles", 100 * tb.clamped_fraction, 100 * tn.clamped_fraction},
                  {"clamp events", static_cast<double>(tb.clamp_events),
                   static_cast<double>(tn.clamp_events)},
                  {"nominal cycles", static_cast<double>(tb.nominal_cycles),
                   static_cast<double>(tn.nominal_cycles)},
                  {"sustained cycles", static_cast<double>(tb.sustained_cycles),
                   static_cast<double>(tn.sustained_cycles)}};
    // A run without the model has no temperature to compare.
    if (base.thermal && next.thermal)
      h.evidence.push_back({"peak temperature C", tb.peak_c, tn.peak_c});
    m.energy_hypotheses.push_back(std::move(h));
  }
  if (point) {
    EnergyHypothesis h;
    h.kind = Kind::OperatingPoint;
    const double v2 = b.voltage > 0 ? (n.voltage / b.voltage) * (n.voltage / b.voltage) : 0;
    h.statement =
        "the runs are priced at different operating points: " + fixed(b.frequency_mhz, 0) +
        " MHz at " + fixed(b.voltage, 2) + " V -> " + fixed(n.frequency_mhz, 0) + " MHz at " +
        fixed(n.voltage, 2) + " V. Dynamic energy scales with V^2 (x" + fixed(v2, 3) +
        "), static power with V, and the clock sets the time per inference (" +
        pct(e.seconds.change) +
        ") over which static power is paid: energy per "
        "inference " +
        pct(e.energy_uj.change) + ", average power " + pct(e.watts.change) +
        ". Reversible: profile the new run at the base point "
        "(--point)";
    h.evidence = {{"frequency MHz", b.frequency_mhz, n.frequency_mhz},
                  {"voltage V", b.voltage, n.voltage},
                  {"time per inference us", b.seconds * 1e6, n.seconds * 1e6},
                  {"energy per inference uJ", e.energy_uj.base, e.energy_uj.next},
                  {"average power W", b.watts, n.watts}};
    m.energy_hypotheses.push_back(std::move(h));
  }
  {
    EnergyHypothesis h;
    h.kind = Kind::WorkPerInference;
    const Delta cycles = relative(static_cast<double>(base.profile.cycles),
                                  static_cast<double>(next.profile.cycles));
    h.statement =
        "the energy follows the run's counted actions: " + std::to_string(base.profile.cycles) +
        " -> " + std::to_string(next.profile.cycles) + " cycles (" + pct(cycles.change) +
        ") of static and background energy, and the MACs, buffer accesses and DRAM "
        "bytes of the layers: energy per inference " +
        pct(e.energy_uj.change) + ", TOPS/W " + pct(e.tops_per_watt.change);
    h.evidence = {{"run cycles", cycles.base, cycles.next},
                  {"energy per inference uJ", e.energy_uj.base, e.energy_uj.next},
                  {"inferences/J", b.inferences_per_joule, n.inferences_per_joule},
                  {"TOPS/W", b.tops_per_watt, n.tops_per_watt}};
    m.energy_hypotheses.push_back(std::move(h));
  }
  // A clamp that differs between the runs leads, then a different operating point; otherwise the
  // work per inference. The list is already in that order.
  const bool clamp_differs = tb.clamped_cycles != tn.clamped_cycles;
  auto lead = m.energy_hypotheses.begin();
  if (clamped && !clamp_differs && point) ++lead;  // the same clamp in both: the point explains
  lead->leading = true;
  std::stable_partition(m.energy_hypotheses.begin(), m.energy_hypotheses.end(),
                        [](const EnergyHypothesis& h) { return h.leading; });
}

}  // namespace

const char* energy_hypothesis_name(EnergyHypothesis::Kind kind) {
  switch (kind) {
    case EnergyHypothesis::Kind::OperatingPoint:
      return "operating point";
    case EnergyHypothesis::Kind::ThermalClamp:
      return "thermal clamp";
    case EnergyHypothesis::Kind::WorkPerInference:
      return "work per inference";
  }
  return "?";
}

Memo make_memo(const Comparison& c, const ProfileInput& base, const ProfileInput& next) {
  Memo m;
  m.workload = base.workload;
  m.base_file = base.file;
  m.next_file = next.file;
  m.base = tags_of(base);
  m.next = tags_of(next);
  m.run_cycles = c.cycles;
  add_energy(m, base, next);
  m.diverged = c.divergence.has_value();
  if (!c.divergence) {
    m.change = "none: no layer diverges persistently beyond the tolerance";
    return m;
  }
  const CompareDivergence& d = *c.divergence;
  m.slice = d.scope;
  m.divergence_kind = divergence_kind_name(d.kind);
  m.slice_cycles = d.layer >= 0 ? c.layers[static_cast<size_t>(d.layer)].cycles : c.cycles;
  const ScopeMetrics& b = scope_of(base.profile, d.layer);
  const ScopeMetrics& n = scope_of(next.profile, d.layer);
  const auto sb = b.topdown.basis_points(), sn = n.topdown.basis_points();
  // Every class whose share moved is a hypothesis; the comparison's mechanism leads.
  for (int k = 0; k < kNumTopClasses; ++k) {
    const auto cls = static_cast<TopClass>(k);
    if (cls == TopClass::Useful) continue;
    const int32_t moved = static_cast<int32_t>(sn[k]) - static_cast<int32_t>(sb[k]);
    if (moved == 0 && cls != d.mechanism) continue;
    Hypothesis h;
    h.cls = cls;
    h.leading = cls == d.mechanism;
    h.sub = h.leading ? d.mechanism_sub : moved_sub(b.topdown, n.topdown, cls);
    h.share_change_bp = moved;
    const double bm = base.profile.array_macs ? base.profile.array_macs : 1;
    const double nm = next.profile.array_macs ? next.profile.array_macs : 1;
    h.cycles_change = std::llround(static_cast<double>(n.topdown.top(cls)) / nm -
                                   static_cast<double>(b.topdown.top(cls)) / bm);
    const auto rule = triage_rule(cls, h.sub);
    h.rule = rule.rule;
    h.advice = rule.advice;
    if (h.leading) {
      h.evidence = d.evidence;
    } else {
      for (const auto& name : rule.evidence)
        h.evidence.push_back({name, evidence_value(b, name), evidence_value(n, name)});
    }
    // The thermal clamp drives the throttle: its run-wide figures are evidence for the class.
    if (cls == TopClass::Throttled && (base.thermal || next.thermal)) {
      const RunThermal none;
      const RunThermal& tb = base.thermal ? *base.thermal : none;
      const RunThermal& tn = next.thermal ? *next.thermal : none;
      h.evidence.push_back({"thermal.clamped_cycles (run)", tb.clamped_cycles, tn.clamped_cycles});
      h.evidence.push_back({"thermal.clamp_events (run)", tb.clamp_events, tn.clamp_events});
    }
    m.hypotheses.push_back(std::move(h));
  }
  // A competing class explains some of the change only if its cycles moved the same way.
  const int sign = m.slice_cycles.change >= 0 ? 1 : -1;
  for (auto& h : m.hypotheses) h.ruled_out = !h.leading && sign * h.cycles_change <= 0;
  std::stable_sort(m.hypotheses.begin(), m.hypotheses.end(),
                   [sign](const Hypothesis& x, const Hypothesis& y) {
                     if (x.leading != y.leading) return x.leading;
                     if (x.ruled_out != y.ruled_out) return !x.ruled_out;
                     return sign * x.cycles_change > sign * y.cycles_change;
                   });
  // The smallest reversible change: a different model revision is the change to revert;
  // otherwise the leading rule's remedy, applied to the slice alone.
  const Hypothesis& lead = m.hypotheses.front();
  const double run_base = std::max<double>(static_cast<double>(m.base.cycles), 1);
  if (m.base.model_revision != m.next.model_revision) {
    m.change = "revert the model revision from " + m.next.model_revision + " to " +
               m.base.model_revision + " (the runs differ in the RTL)";
  } else if (m.base.mem_seed != m.next.mem_seed || m.base.seed != m.next.seed) {
    m.change = "rerun the new profile with the base seeds (seed " + std::to_string(m.base.seed) +
               ", memory seed " + std::to_string(m.base.mem_seed) +
               ") to separate the change from seed noise, then: " + lead.advice;
  } else {
    m.change = "on " + m.slice + ": " + lead.advice;
  }
  char e[256];
  std::snprintf(e, sizeof e,
                "%s's %s cycles back by about %lld (%s of the base run), from %s to about %s of "
                "%s's slots",
                m.slice.c_str(), top_class_name(lead.cls),
                static_cast<long long>(lead.cycles_change),
                pct(static_cast<double>(lead.cycles_change) / run_base).c_str(),
                pct(sn[static_cast<size_t>(lead.cls)] / 10000.0, false).c_str(),
                pct(sb[static_cast<size_t>(lead.cls)] / 10000.0, false).c_str(),
                m.slice.c_str());
  m.expected = e;
  // Regression risk: the same mechanism elsewhere, and gains a revert could lose.
  for (size_t i = 0; i < c.layers.size(); ++i) {
    const auto& l = c.layers[i];
    if (static_cast<int>(i) == d.layer) continue;
    const int32_t moved = l.next_bp[static_cast<size_t>(lead.cls)] - l.base_bp[static_cast<size_t>(lead.cls)];
    if (l.diverges && l.cycles.change > 0 && moved > 0)
      m.risks.push_back(l.name + " also slowed (" + pct(l.cycles.change) + ") with " +
                        top_class_name(lead.cls) + " up " + bp(moved) +
                        ": the change touches it too");
    if (l.diverges && l.cycles.change < 0)
      m.risks.push_back(l.name + " got faster (" + pct(l.cycles.change) +
                        "): a blanket revert would give that back");
  }
  if (m.risks.empty())
    m.risks.push_back("low: no other layer moved beyond the tolerance of " +
                      pct(c.tolerance, false));
  return m;
}

namespace {

/// The memo's energy section: the figures of both profiles and the energy hypotheses.
std::string energy_markdown(const Memo& m) {
  std::string s = "## Energy and perf/W\n\n";
  if (!m.energy) return s + "Energy " + m.energy_note + ".\n\n";
  const EnergyDeltas& e = *m.energy;
  s += "From `$.profile.energy` of [" + m.base_file + "](" + m.base_file + ") (" + e.base.table +
       ", " + fixed(e.base.frequency_mhz, 0) + " MHz, " + fixed(e.base.voltage, 2) + " V) and [" +
       m.next_file + "](" + m.next_file + ") (" + e.next.table + ", " +
       fixed(e.next.frequency_mhz, 0) + " MHz, " + fixed(e.next.voltage, 2) +
       " V); one run is one inference.\n\n";
  s += "| figure | base | new | change |\n|---|---|---|---|\n";
  const auto row = [&s](const char* name, const Delta& d, int digits) {
    s += std::string("| ") + name + " | " + fixed(d.base, digits) + " | " + fixed(d.next, digits) +
         " | " + pct(d.change) + " |\n";
  };
  row("energy per inference (uJ)", e.energy_uj, 3);
  row("average power (W)", e.watts, 4);
  row("inferences/J", e.inferences_per_joule, 0);
  row("TOPS/W", e.tops_per_watt, 4);
  row("time per inference (us)",
      Delta{e.seconds.base * 1e6, e.seconds.next * 1e6, e.seconds.change}, 3);
  s += "\n";
  for (const auto& h : m.energy_hypotheses) {
    s += std::string(h.leading ? "**Leading energy hypothesis: " : "Competing: ") +
         energy_hypothesis_name(h.kind) + (h.leading ? "**" : "") + " - " + h.statement +
         ".\n\n| evidence | base | new |\n|---|---|---|\n";
    for (const auto& f : h.evidence)
      s += "| " + f.name + " | " + figure_text(f.base) + " | " + figure_text(f.next) + " |\n";
    s += "\n";
  }
  return s;
}

}  // namespace

std::string memo_markdown(const Memo& m) {
  std::string s = "# Review memo: " + m.workload + "\n\n";
  s += "Artifacts: base [" + m.base_file + "](" + m.base_file + "), new [" + m.next_file + "](" +
       m.next_file + "). Every figure below comes from these two (`bud profile --compare " +
       m.base_file + " " + m.next_file + "`).\n\n";
  s += "## Symptom\n\n";
  s += "Run cycles " + std::to_string(static_cast<uint64_t>(m.run_cycles.base)) + " -> " +
       std::to_string(static_cast<uint64_t>(m.run_cycles.next)) + " (" + pct(m.run_cycles.change) +
       ").";
  if (m.energy)
    s += " Energy per inference " + fixed(m.energy->energy_uj.base, 3) + " -> " +
         fixed(m.energy->energy_uj.next, 3) + " uJ (" + pct(m.energy->energy_uj.change) +
         "), perf/W " + fixed(m.energy->inferences_per_joule.base, 0) + " -> " +
         fixed(m.energy->inferences_per_joule.next, 0) + " inferences/J (" +
         pct(m.energy->inferences_per_joule.change) + ").";
  if (!m.diverged) {
    s += " No layer diverges persistently beyond the tolerance: nothing to explain.\n\n";
    return s + energy_markdown(m);
  }
  s += " Slice: `" + m.slice + "`, " + std::to_string(static_cast<uint64_t>(m.slice_cycles.base)) +
       " -> " + std::to_string(static_cast<uint64_t>(m.slice_cycles.next)) + " cycles (" +
       pct(m.slice_cycles.change) + ").\n\n";
  s += energy_markdown(m);
  s += "## First failing stage\n\n`" + m.slice + "` (" + m.divergence_kind +
       " divergence: the run's clock stays diverged from here on).\n\n";
  s += "## Tags\n\n| | base | new |\n|---|---|---|\n";
  s += "| model revision | " + m.base.model_revision + " | " + m.next.model_revision + " |\n";
  s += "| data seed | " + std::to_string(m.base.seed) + " | " + std::to_string(m.next.seed) + " |\n";
  s += "| memory seed | " + std::to_string(m.base.mem_seed) + " | " +
       std::to_string(m.next.mem_seed) + " |\n";
  s += "| array MACs/cycle | " + std::to_string(m.base.array_macs) + " | " +
       std::to_string(m.next.array_macs) + " |\n";
  s += "| run cycles | " + std::to_string(m.base.cycles) + " | " + std::to_string(m.next.cycles) +
       " |\n\n";
  s += "## Mechanism\n\n";
  for (const auto& h : m.hypotheses) {
    s += std::string(h.leading      ? "**Leading hypothesis: "
                     : h.ruled_out ? "Ruled out: "
                                   : "Competing: ") +
         top_class_name(h.cls) +
         " / " + sub_class_name(h.sub) + (h.leading ? "**" : "") + " - share " +
         bp(h.share_change_bp) + ", " + (h.cycles_change >= 0 ? "+" : "") +
         std::to_string(h.cycles_change) + " cycles; rule " + h.rule + ".";
    if (h.ruled_out)
      s += " Its cycles did not move with the change: its share moved only because the slice's "
           "total did.";
    else if (!h.leading)
      s += " Weaker: it accounts for " + std::to_string(std::abs(h.cycles_change)) +
           " of the cycles against the leading class's " +
           std::to_string(std::abs(m.hypotheses.front().cycles_change)) + ".";
    s += "\n\n";
    if (!h.evidence.empty()) {
      s += "| evidence | base | new |\n|---|---|---|\n";
      for (const auto& e : h.evidence)
        s += "| `" + e.counter + "` | " + std::to_string(e.base) + " | " + std::to_string(e.next) +
             " |\n";
      s += "\n";
    }
  }
  s += "## Smallest reversible change\n\n" + m.change + "\n\nExpected movement: " + m.expected +
       ".\n\n";
  s += "## Regression risk\n\n";
  for (const auto& r : m.risks) s += "- " + r + "\n";
  return s;
}

json::Json memo_json(const Memo& m) {
  json::Json j = json::Json::object();
  j["workload"] = m.workload;
  j["artifacts"] = {{"base", m.base_file}, {"new", m.next_file}};
  j["diverged"] = m.diverged;
  j["run_cycles"] = {{"base", m.run_cycles.base}, {"new", m.run_cycles.next},
                     {"change", m.run_cycles.change}};
  auto tags = [](const Memo::Tags& t) {
    return json::Json{{"model_revision", t.model_revision}, {"seed", t.seed},
                      {"mem_seed", t.mem_seed}, {"cycles", t.cycles},
                      {"array_macs", t.array_macs}};
  };
  j["tags"] = {{"base", tags(m.base)}, {"new", tags(m.next)}};
  if (m.diverged) {
    j["slice"] = m.slice;
    j["divergence_kind"] = m.divergence_kind;
    j["slice_cycles"] = {{"base", m.slice_cycles.base}, {"new", m.slice_cycles.next},
                         {"change", m.slice_cycles.change}};
  }
  json::Json hs = json::Json::array();
  for (const auto& h : m.hypotheses) {
    json::Json ev = json::Json::array();
    for (const auto& e : h.evidence)
      ev.push_back({{"counter", e.counter}, {"base", e.base}, {"new", e.next}});
    hs.push_back({{"class", top_class_name(h.cls)},
                  {"sub_class", sub_class_name(h.sub)},
                  {"leading", h.leading},
                  {"ruled_out", h.ruled_out},
                  {"share_change_bp", h.share_change_bp},
                  {"cycles_change", h.cycles_change},
                  {"rule", h.rule},
                  {"advice", h.advice},
                  {"evidence", std::move(ev)}});
  }
  j["hypotheses"] = std::move(hs);
  j["change"] = m.change;
  j["expected"] = m.expected;
  j["risks"] = m.risks;
  if (m.energy) {
    const EnergyDeltas& e = *m.energy;
    auto delta = [](const Delta& d) {
      return json::Json{{"base", d.base}, {"new", d.next}, {"change", d.change}};
    };
    auto point = [](const RunEnergy& r) {
      return json::Json{{"table", r.table},
                        {"frequency_mhz", r.frequency_mhz},
                        {"voltage", r.voltage},
                        {"total_fj", r.total_fj}};
    };
    j["energy"] = {{"energy_per_inference_uj", delta(e.energy_uj)},
                   {"watts", delta(e.watts)},
                   {"inferences_per_joule", delta(e.inferences_per_joule)},
                   {"tops_per_watt", delta(e.tops_per_watt)},
                   {"seconds_per_inference", delta(e.seconds)},
                   {"base", point(e.base)},
                   {"new", point(e.next)}};
  } else {
    j["energy"] = nullptr;
    j["energy_note"] = m.energy_note;
  }
  json::Json eh = json::Json::array();
  for (const auto& h : m.energy_hypotheses) {
    json::Json ev = json::Json::array();
    for (const auto& f : h.evidence)
      ev.push_back({{"name", f.name}, {"base", f.base}, {"new", f.next}});
    eh.push_back({{"mechanism", energy_hypothesis_name(h.kind)},
                  {"leading", h.leading},
                  {"statement", h.statement},
                  {"evidence", std::move(ev)}});
  }
  j["energy_hypotheses"] = std::move(eh);
  return j;
}

}  // namespace bud::profile
