#include "replay/dashboard/EvidenceReport.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "bud/NpuFacts.h"

namespace bud::replay {

namespace {

bool is_failing(const std::string& v) {
  return v == "reproduced" || v == "new-symptom" || v == "diverged";
}
bool is_passing(const std::string& v) { return v == "passed" || v == "fixed"; }

std::string percent(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * f);
  return buf;
}

}  // namespace

EvidenceReport EvidenceReport::from(const std::vector<EvidenceRow>& rows) {
  // Revisions in order of their first run; per revision each packet's rows in run order.
  std::vector<std::string> order;
  std::map<std::string, std::map<std::string, std::vector<const EvidenceRow*>>> by_revision;
  std::map<std::string, std::set<std::string>> runs;
  std::vector<const EvidenceRow*> sorted;
  for (const auto& r : rows) sorted.push_back(&r);
  std::stable_sort(sorted.begin(), sorted.end(), [](const EvidenceRow* a, const EvidenceRow* b) {
    return a->run_order < b->run_order;
  });
  for (const auto* r : sorted) {
    if (!by_revision.count(r->revision)) order.push_back(r->revision);
    by_revision[r->revision][r->packet].push_back(r);
    runs[r->revision].insert(r->run);
  }
  const std::set<std::string> documented(isa::kCounterNames.begin(), isa::kCounterNames.end());
  EvidenceReport d;
  d.documented_counters = documented.size();
  const std::map<std::string, std::vector<const EvidenceRow*>>* previous = nullptr;
  for (const auto& rev : order) {
    const auto& packets = by_revision[rev];
    RevisionEvidence e;
    e.revision = rev;
    e.runs = runs[rev].size();
    e.packets = packets.size();
    std::set<std::string> armed, hit, recorded, observed;
    for (const auto& [packet, rs] : packets) {
      const EvidenceRow& latest = *rs.back();
      if (is_passing(latest.verdict)) ++e.passing;
      const bool failing = is_failing(latest.verdict);
      if (failing) ++e.failing;
      std::set<std::string> verdicts;
      for (const auto* r : rs) verdicts.insert(r->verdict);
      if (verdicts.size() > 1) e.flaky.push_back(packet);
      bool failed_before = false, seen_before = false;
      if (previous) {
        if (auto it = previous->find(packet); it != previous->end()) {
          seen_before = true;
          failed_before = is_failing(it->second.back()->verdict);
        }
      }
      if (failing && failed_before) e.still_failing.push_back(packet);
      if (failing && !failed_before) e.newly_failing.push_back(packet);
      if (seen_before && failed_before && is_passing(latest.verdict))
        e.newly_fixed.push_back(packet);
      const auto& ev = latest.evidence;
      armed.insert(ev.triggers_armed.begin(), ev.triggers_armed.end());
      hit.insert(ev.triggers_hit.begin(), ev.triggers_hit.end());
      recorded.insert(ev.counters.begin(), ev.counters.end());
      observed.insert(ev.counters_observed.begin(), ev.counters_observed.end());
    }
    e.success_rate = e.packets ? static_cast<double>(e.passing) / e.packets : 0.0;
    e.triggers_armed.assign(armed.begin(), armed.end());
    // A hit counts only for a trigger some packet armed (an annotation names it).
    for (const auto& t : hit)
      if (armed.count(t)) e.triggers_hit.push_back(t);
    e.trigger_coverage =
        armed.empty() ? 0.0 : static_cast<double>(e.triggers_hit.size()) / armed.size();
    for (const auto& c : recorded) {
      if (!documented.count(c)) {
        e.counters_undocumented.push_back(c);
        continue;
      }
      e.counters_recorded.push_back(c);
      if (observed.count(c)) e.counters_observed.push_back(c);
    }
    // In the facts table's order, as docs/counters.md lists them.
    for (const auto c : isa::kCounterNames)
      if (!observed.count(std::string(c))) e.counters_never_observed.emplace_back(c);
    e.counter_completeness =
        static_cast<double>(e.counters_observed.size()) / static_cast<double>(documented.size());
    d.revisions.push_back(std::move(e));
    previous = &packets;
  }
  return d;
}

json::Json EvidenceReport::json() const {
  json::Json revs = json::Json::array();
  for (const auto& e : revisions) {
    json::Json j = json::Json::object();
    j["revision"] = e.revision;
    j["runs"] = e.runs;
    j["packets"] = e.packets;
    j["passing"] = e.passing;
    j["failing"] = e.failing;
    j["success_rate"] = e.success_rate;
    j["still_failing"] = e.still_failing;
    j["newly_failing"] = e.newly_failing;
    j["newly_fixed"] = e.newly_fixed;
    j["flaky"] = e.flaky;
    j["trigger_coverage"] = e.trigger_coverage;
    j["triggers_armed"] = e.triggers_armed;
    j["triggers_hit"] = e.triggers_hit;
    j["counter_completeness"] = e.counter_completeness;
    j["counters_recorded"] = e.counters_recorded;
    j["counters_observed"] = e.counters_observed;
    j["counters_never_observed"] = e.counters_never_observed;
    j["counters_undocumented"] = e.counters_undocumented;
    revs.push_back(std::move(j));
  }
  json::Json trend = json::Json::array();
  for (const auto& e : revisions) trend.push_back(e.failing);
  return {{"revisions", std::move(revs)},
          {"escape_risk_trend", std::move(trend)},
          {"documented_counters", documented_counters}};
}

std::string EvidenceReport::text() const {
  std::string t;
  char line[256];
  std::snprintf(line, sizeof line, "%-18s %5s %8s %8s %8s %6s %6s %6s %6s %9s %9s\n", "revision",
                "runs", "packets", "success", "failing", "still", "new", "fixed", "flaky",
                "triggers", "counters");
  t += line;
  for (const auto& e : revisions) {
    const std::string triggers =
        std::to_string(e.triggers_hit.size()) + "/" + std::to_string(e.triggers_armed.size());
    const std::string counters =
        std::to_string(e.counters_observed.size()) + "/" + std::to_string(documented_counters);
    std::snprintf(line, sizeof line, "%-18s %5llu %8llu %8s %8llu %6zu %6zu %6zu %6zu %9s %9s\n",
                  e.revision.substr(0, 18).c_str(), static_cast<unsigned long long>(e.runs),
                  static_cast<unsigned long long>(e.packets), percent(e.success_rate).c_str(),
                  static_cast<unsigned long long>(e.failing), e.still_failing.size(),
                  e.newly_failing.size(), e.newly_fixed.size(), e.flaky.size(), triggers.c_str(),
                  counters.c_str());
    t += line;
  }
  if (!revisions.empty()) {
    const auto& last = revisions.back();
    auto list = [&](const char* what, const std::vector<std::string>& v) {
      if (v.empty()) return;
      t += std::string(what) + ":";
      for (const auto& p : v) t += " " + p;
      t += "\n";
    };
    t += "latest revision " + last.revision + "\n";
    list("  still failing", last.still_failing);
    list("  newly failing", last.newly_failing);
    list("  newly fixed", last.newly_fixed);
    list("  flaky", last.flaky);
    std::vector<std::string> unhit;
    for (const auto& name : last.triggers_armed)
      if (!std::binary_search(last.triggers_hit.begin(), last.triggers_hit.end(), name))
        unhit.push_back(name);
    list("  triggers never hit", unhit);
    list("  counters never counting", last.counters_never_observed);
    list("  undocumented counters", last.counters_undocumented);
  }
  return t;
}

}  // namespace bud::replay
