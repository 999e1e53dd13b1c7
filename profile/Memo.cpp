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

}  // namespace

Memo make_memo(const Comparison& c, const ProfileInput& base, const ProfileInput& next) {
  Memo m;
  m.workload = base.workload;
  m.base_file = base.file;
  m.next_file = next.file;
  m.base = tags_of(base);
  m.next = tags_of(next);
  m.run_cycles = c.cycles;
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

std::string memo_markdown(const Memo& m) {
  std::string s = "# Review memo: " + m.workload + "\n\n";
  s += "Artifacts: base [" + m.base_file + "](" + m.base_file + "), new [" + m.next_file + "](" +
       m.next_file + "). Every figure below comes from these two (`bud profile --compare " +
       m.base_file + " " + m.next_file + "`).\n\n";
  s += "## Symptom\n\n";
  s += "Run cycles " + std::to_string(static_cast<uint64_t>(m.run_cycles.base)) + " -> " +
       std::to_string(static_cast<uint64_t>(m.run_cycles.next)) + " (" + pct(m.run_cycles.change) +
       ").";
  if (!m.diverged) {
    s += " No layer diverges persistently beyond the tolerance: nothing to explain.\n";
    return s;
  }
  s += " Slice: `" + m.slice + "`, " + std::to_string(static_cast<uint64_t>(m.slice_cycles.base)) +
       " -> " + std::to_string(static_cast<uint64_t>(m.slice_cycles.next)) + " cycles (" +
       pct(m.slice_cycles.change) + ").\n\n";
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
  return j;
}

}  // namespace bud::profile
