#include "profile/Report.h"

#include <cstdio>
#include <sstream>

namespace bud::profile {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string grouped(uint64_t v) {
  const std::string d = std::to_string(v);
  std::string out;
  for (size_t i = 0; i < d.size(); ++i) {
    if (i > 0 && (d.size() - i) % 3 == 0) out += ',';
    out += d[i];
  }
  return out;
}

namespace {

using json::Json;

Json topdown_json(const TopDown& t) {
  Json j;
  j["slots"] = t.slots;
  const auto bp = t.basis_points();
  Json classes = Json::object();
  for (int c = 0; c < kNumTopClasses; ++c) {
    Json cj;
    cj["slots"] = t.top(static_cast<TopClass>(c));
    cj["basis_points"] = bp[c];
    Json subs = Json::object();
    for (int s = 0; s < kNumSubClasses; ++s)
      if (parent_of(static_cast<SubClass>(s)) == static_cast<TopClass>(c))
        subs[sub_class_name(static_cast<SubClass>(s))] = t.sub[s];
    cj["sub"] = subs;
    classes[top_class_name(static_cast<TopClass>(c))] = cj;
  }
  j["classes"] = classes;
  return j;
}

Json scope_json(const ScopeMetrics& m) {
  Json j;
  j["name"] = m.name;
  j["kind"] = m.kind;
  if (!m.precision.empty()) j["precision"] = m.precision;
  j["layers"] = m.layers;
  j["cycles"] = m.cycles;
  if (m.layers == 1) {
    j["first_dispatch"] = m.first_dispatch;
    j["last_retire"] = m.last_retire;
  }
  j["macs_useful"] = m.macs_useful;
  j["macs_issued"] = m.macs_issued;
  j["peak_fraction"] = m.peak_fraction;
  j["model_mac_fraction"] = m.model_mac_fraction;
  j["dram_rd_bytes"] = m.dram_rd_bytes;
  j["dram_wr_bytes"] = m.dram_wr_bytes;
  j["bandwidth_bytes_per_cycle"] = m.bandwidth;
  j["arithmetic_intensity"] = m.intensity;
  j["memory_stall_fraction"] = m.memory_stall_fraction;
  Json engines = Json::object();
  for (int e = 0; e < isa::kNumEngines; ++e) {
    Json ej = Json::object();
    for (int c = 0; c < isa::kNumClasses; ++c)
      ej[std::string(isa::kClassNames[c])] = m.engine[e][c];
    engines[std::string(isa::kEngineNames[e])] = ej;
  }
  j["engine_cycles"] = engines;
  j["topdown"] = topdown_json(m.topdown);
  j["bank_conflicts"] = Json{{"load", m.bank_conflicts_load}, {"store", m.bank_conflicts_store}};
  Json per_engine = Json::object();
  for (int e = 0; e < isa::kNumEngines; ++e)
    per_engine[std::string(isa::kEngineNames[e])] = topdown_json(m.engine_topdown[e]);
  j["engine_topdown"] = per_engine;
  return j;
}

// One line of the top-down table: the top classes' shares (basis points as percent).
std::string topdown_row(const std::string& name, const TopDown& t) {
  std::ostringstream o;
  char buf[64];
  std::snprintf(buf, sizeof buf, "  %-12s", name.c_str());
  o << buf;
  const auto bp = t.basis_points();
  for (int c = 0; c < kNumTopClasses; ++c) {
    std::snprintf(buf, sizeof buf, " %8.2f%%", bp[c] / 100.0);
    o << buf;
  }
  o << "\n";
  // Drill-down: sub-classes of every top class past the threshold (but useful).
  for (int c = 1; c < kNumTopClasses; ++c) {
    if (bp[c] < kDrillThresholdBp) continue;
    o << "    " << top_class_name(static_cast<TopClass>(c)) << ":";
    for (int s = 0; s < kNumSubClasses; ++s) {
      if (parent_of(static_cast<SubClass>(s)) != static_cast<TopClass>(c) || t.sub[s] == 0)
        continue;
      o << " " << sub_class_name(static_cast<SubClass>(s))
        << fmt(" %.1f%%", t.slots ? 100.0 * t.sub[s] / t.slots : 0.0);
    }
    o << "\n";
  }
  return o.str();
}

}  // namespace

Json ranking_json(const Profile& p) {
  Json ranking = Json::array();
  for (const auto& b : p.ranking) {
    Json bj;
    bj["layer"] = p.layers[b.layer].name;
    bj["lost_cycles"] = b.lost_cycles;
    bj["dominant"] = top_class_name(b.dominant);
    bj["dominant_sub"] = sub_class_name(b.dominant_sub);
    bj["rule"] = b.rule;
    bj["advice"] = b.advice;
    Json ev = Json::object();
    for (const auto& [name, value] : b.evidence) ev[name] = value;
    bj["evidence"] = ev;
    bj["bound"] = b.bound.empty() ? Json(nullptr) : Json(b.bound);
    ranking.push_back(bj);
  }
  return ranking;
}

std::string ranking_text(const Profile& p, bool details) {
  std::ostringstream o;
  char buf[512];
  int rank = 1;
  for (const auto& b : p.ranking) {
    const std::string bound = b.bound.empty() ? "" : " (" + b.bound + "-bound)";
    std::snprintf(buf, sizeof buf, "  %d. %-12s %10s lost  %s / %s%s  [%s]\n", rank++,
                  p.layers[b.layer].name.c_str(), grouped(b.lost_cycles).c_str(),
                  top_class_name(b.dominant), sub_class_name(b.dominant_sub), bound.c_str(),
                  b.rule.c_str());
    o << buf;
    if (!details) continue;
    o << "     " << b.advice << "\n";
    if (!b.evidence.empty()) {
      o << "     evidence:";
      for (const auto& [name, value] : b.evidence) o << " " << name << "=" << grouped(value);
      o << "\n";
    }
  }
  return o.str();
}

Json profile_json(const Profile& p, const Roofline& roofline) {
  Json j;
  j["array_macs"] = p.array_macs;
  j["cycles"] = p.cycles;
  Json layers = Json::array();
  for (const auto& l : p.layers) layers.push_back(scope_json(l));
  j["layers"] = layers;
  Json types = Json::array();
  for (const auto& t : p.types) types.push_back(scope_json(t));
  j["types"] = types;
  j["model"] = scope_json(p.model);
  j["tail"] = scope_json(p.tail);
  j["ranking"] = ranking_json(p);
  Json rf;
  Json machine;
  machine["array_macs"] = roofline.machine.array_macs;
  machine["dram_latency"] = roofline.machine.latency;
  machine["dram_bytes_per_cycle"] = roofline.machine.bytes_per_cycle;
  machine["requests_in_flight"] = roofline.machine.in_flight;
  machine["effective_bytes_per_cycle"] = roofline.machine.effective_bytes_per_cycle();
  machine["clock_fraction"] = roofline.machine.clock_fraction;
  rf["machine"] = machine;
  Json rl = Json::array();
  for (const auto& l : roofline.layers) {
    Json lj;
    lj["layer"] = l.name;
    lj["kind"] = l.kind;
    lj["tiles"] = l.tiles;
    lj["compute_cycles"] = l.compute_cycles;
    lj["memory_cycles"] = l.memory_cycles;
    lj["latency_cycles"] = l.latency_cycles;
    lj["bandwidth_cycles"] = l.bandwidth_cycles;
    lj["effective_bytes_per_cycle"] = l.effective_bytes_per_cycle;
    lj["bound"] = bound_name(l.bound);
    lj["projected"] = l.projected;
    lj["measured"] = l.measured;
    lj["error"] = l.error;
    lj["residual"] = l.residual;
    rl.push_back(lj);
  }
  rf["layers"] = rl;
  Json rt = Json::array();
  for (const auto& t : roofline.types) {
    Json tj;
    tj["kind"] = t.kind;
    tj["layers"] = t.layers;
    tj["mean_error"] = t.mean_error;
    tj["mape"] = t.mape;
    rt.push_back(tj);
  }
  rf["types"] = rt;
  rf["mape"] = roofline.mape;
  rf["within_10pct"] = roofline.within_10pct;
  j["roofline"] = rf;
  return j;
}

std::string profile_text(const Profile& p, const Roofline& roofline) {
  std::ostringstream o;
  char buf[512];
  auto scope_table = [&](const char* title, const std::vector<ScopeMetrics>& rows,
                         const ScopeMetrics* total) {
    o << "\n" << title << "\n";
    std::snprintf(buf, sizeof buf, "  %-12s %-7s %10s %12s %7s %7s %10s %10s %7s %7s %7s\n", "name",
                  "kind", "cycles", "MACs", "%peak", "%model", "rd B", "wr B", "B/cyc", "MAC/B",
                  "%mem");
    o << buf;
    auto row = [&](const ScopeMetrics& m) {
      std::snprintf(
          buf, sizeof buf, "  %-12s %-7s %10s %12s %6.1f%% %6.1f%% %10s %10s %7.2f %7.1f %6.1f%%\n",
          m.name.c_str(), m.kind.c_str(), grouped(m.cycles).c_str(), grouped(m.macs_useful).c_str(),
          100 * m.peak_fraction, 100 * m.model_mac_fraction, grouped(m.dram_rd_bytes).c_str(),
          grouped(m.dram_wr_bytes).c_str(), m.bandwidth, m.intensity,
          100 * m.memory_stall_fraction);
      o << buf;
    };
    for (const auto& m : rows) row(m);
    if (total) row(*total);
  };
  o << "profile    " << p.layers.size() << " layers, " << grouped(p.cycles) << " cycles, "
    << p.array_macs << " MAC slots per cycle\n";
  scope_table("per layer (cycles: first dispatch .. last retire)", p.layers, nullptr);
  scope_table("per layer type", p.types, &p.model);

  o << "\nattributed engine-cycles per layer (active share)\n";
  std::snprintf(buf, sizeof buf, "  %-12s", "name");
  o << buf;
  for (int e = 0; e < isa::kNumEngines; ++e) {
    std::snprintf(buf, sizeof buf, " %17s", std::string(isa::kEngineNames[e]).c_str());
    o << buf;
  }
  o << "\n";
  auto engine_row = [&](const ScopeMetrics& m) {
    std::snprintf(buf, sizeof buf, "  %-12s", m.name.c_str());
    o << buf;
    for (int e = 0; e < isa::kNumEngines; ++e) {
      const uint64_t total = m.engine_cycles(static_cast<isa::Engine>(e));
      const uint64_t active = m.engine[e][static_cast<int>(isa::CycleClass::Active)];
      std::snprintf(buf, sizeof buf, " %10s (%3.0f%%)", grouped(total).c_str(),
                    total ? 100.0 * active / total : 0.0);
      o << buf;
    }
    o << "\n";
  };
  for (const auto& l : p.layers) engine_row(l);
  engine_row(p.tail);

  auto class_header = [&](const char* first) {
    std::snprintf(buf, sizeof buf, "  %-12s", first);
    o << buf;
    for (int c = 0; c < kNumTopClasses; ++c) {
      std::snprintf(buf, sizeof buf, " %9.9s", top_class_name(static_cast<TopClass>(c)));
      o << buf;
    }
    o << "\n";
  };
  o << "\ntop-down (MAC slots; classes >= " << kDrillThresholdBp / 100 << "% drilled into)\n";
  class_header("scope");
  for (const auto& l : p.layers) o << topdown_row(l.name, l.topdown);
  o << topdown_row("tail", p.tail.topdown);
  o << topdown_row("model", p.model.topdown);

  o << "\ntop-down per engine (engine-cycles; model, classes >= " << kDrillThresholdBp / 100
    << "% drilled into)\n";
  class_header("engine");
  for (int e = 0; e < isa::kNumEngines; ++e)
    o << topdown_row(std::string(isa::kEngineNames[e]), p.model.engine_topdown[e]);
  o << "  per layer, each engine's largest loss:\n";
  for (const auto& l : p.layers) {
    std::snprintf(buf, sizeof buf, "  %-12s", l.name.c_str());
    o << buf;
    for (int e = 0; e < isa::kNumEngines; ++e) {
      const auto bp = l.engine_topdown[e].basis_points();
      int worst = 1;
      for (int c = 2; c < kNumTopClasses; ++c)
        if (bp[c] > bp[worst]) worst = c;
      std::snprintf(buf, sizeof buf, " %s %.0f%% useful, %s %.0f%%;",
                    std::string(isa::kEngineNames[e]).c_str(), bp[0] / 100.0,
                    top_class_name(static_cast<TopClass>(worst)), bp[worst] / 100.0);
      o << buf;
    }
    o << "\n";
  }

  o << "\nbottlenecks (layers by lost cycles)\n" << ranking_text(p, true);

  o << "\nroofline (latency " << fmt("%.0f", roofline.machine.latency) << " cycles, "
    << fmt("%.0f", roofline.machine.bytes_per_cycle) << " B/cycle, " << roofline.machine.in_flight
    << " requests in flight: Little's law sustains "
    << fmt("%.2f", roofline.machine.effective_bytes_per_cycle()) << " B/cycle)\n";
  std::snprintf(buf, sizeof buf, "  %-12s %-7s %5s %10s %10s %-9s %10s %10s %8s  %s\n", "layer",
                "kind", "tiles", "compute", "memory", "bound", "projected", "measured", "error",
                "residual");
  o << buf;
  for (const auto& l : roofline.layers) {
    std::snprintf(buf, sizeof buf, "  %-12s %-7s %5d %10s %10s %-9s %10s %10s %+7.1f%%  %s\n",
                  l.name.c_str(), l.kind.c_str(), l.tiles, grouped(l.compute_cycles).c_str(),
                  grouped(l.memory_cycles).c_str(), bound_name(l.bound),
                  grouped(l.projected).c_str(), grouped(l.measured).c_str(), 100 * l.error,
                  l.residual.c_str());
    o << buf;
  }
  for (const auto& t : roofline.types) {
    std::snprintf(buf, sizeof buf, "  type %-7s %d layer(s): mean error %+.1f%%, MAPE %.1f%%\n",
                  t.kind.c_str(), t.layers, 100 * t.mean_error, 100 * t.mape);
    o << buf;
  }
  std::snprintf(buf, sizeof buf, "  all layers: MAPE %.1f%%, %d of %zu within 10%%\n",
                100 * roofline.mape, roofline.within_10pct, roofline.layers.size());
  o << buf;
  return o.str();
}

}  // namespace bud::profile
