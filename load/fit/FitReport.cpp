#include "load/fit/FitReport.h"

#include <cstdio>

#include "profile/Report.h"

namespace bud::fit {

namespace {

using json::Json;
using profile::grouped;

std::string fixed(double v, int digits) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

Json point_json(const TradePoint& t) {
  Json j = Json::object();
  j["load"] = t.load;
  j["served_rps"] = t.served_rps;
  j["p99_us"] = t.p99_us;
  j["requests_per_joule"] = t.requests_per_joule;
  j["watts"] = t.watts;
  j["dropped"] = t.dropped;
  j["meets_sla"] = t.meets_sla;
  return j;
}

Json winner_json(const Winner& w) {
  if (w.config.empty()) return nullptr;
  Json j = Json::object();
  j["config"] = w.config;
  j["score"] = w.score;
  j["models_meeting"] = w.models_meeting;
  return j;
}

/// The layer types of every cell, in order of first appearance.
std::vector<std::string> all_types(const FitMatrix& m) {
  std::vector<std::string> kinds;
  for (const auto& c : m.cells)
    for (const auto& t : c.types)
      if (std::find(kinds.begin(), kinds.end(), t.kind) == kinds.end()) kinds.push_back(t.kind);
  return kinds;
}

const TypeStall* type_of(const FitCell& c, const std::string& kind) {
  for (const auto& t : c.types)
    if (t.kind == kind) return &t;
  return nullptr;
}

std::string model_label(const FitCell& c) {
  return c.synthetic ? c.workload + " (GEMM)" : c.workload;
}

}  // namespace

Json fit_json(const FitMatrix& m, const FitConditions& c) {
  Json j = Json::object();
  j["conditions"] = {{"arrivals", c.arrivals},
                     {"requests", c.requests},
                     {"arrival_seed", c.seed},
                     {"burst_factor", c.burst_factor},
                     {"burst_fraction", c.burst_fraction},
                     {"burst_period_us", c.burst_period_us},
                     {"max_batch", c.max_batch},
                     {"window_us", c.window_us},
                     {"queue_bound", c.queue_bound},
                     {"admission", c.admission},
                     {"sla_p99_us", c.sla_p99_us},
                     {"energy_table", c.energy_table}};
  j["configs"] = m.configs;
  j["models"] = m.models;
  const FitCell* gemm = nullptr;
  for (const auto& cell : m.cells)
    if (cell.synthetic) gemm = &cell;
  j["gemm"] = gemm ? Json(gemm->model) : Json(nullptr);
  Json cells = Json::array();
  for (const auto& cell : m.cells) {
    Json x = Json::object();
    x["model"] = cell.model;
    x["workload"] = cell.workload;
    x["config"] = cell.config;
    x["synthetic"] = cell.synthetic;
    x["sla_p99_us"] = cell.sla_p99_us;
    x["passed"] = cell.passed;
    if (!cell.passed) x["failure"] = cell.failure;
    x["array_macs"] = cell.array_macs;
    x["cycles"] = cell.cycles;
    x["host_cycles"] = cell.host_cycles;
    x["model_macs"] = cell.model_macs;
    x["flops_fraction"] = cell.flops_fraction;
    x["memory_stall_fraction"] = cell.memory_stall_fraction;
    Json types = Json::array();
    for (const auto& t : cell.types)
      types.push_back({{"kind", t.kind},
                       {"layers", t.layers},
                       {"cycles", t.cycles},
                       {"memory_stall_fraction", t.memory_stall_fraction}});
    x["layer_types"] = std::move(types);
    x["energy_fj"] = cell.energy_fj;
    x["energy_uj"] = static_cast<double>(cell.energy_fj) * 1e-9;
    x["frequency_mhz"] = cell.frequency_mhz;
    x["capacity_rps"] = cell.capacity_rps;
    x["sustained"] = cell.sustained ? point_json(*cell.sustained) : Json(nullptr);
    Json curve = Json::array();
    for (const auto& t : cell.curve) curve.push_back(point_json(t));
    x["curve"] = std::move(curve);
    cells.push_back(std::move(x));
  }
  j["cells"] = std::move(cells);
  Json per_model = Json::array();
  for (size_t i = 0; i < m.models.size(); ++i)
    per_model.push_back({{"model", m.models[i]}, {"winner", winner_json(m.model_winners[i])}});
  j["winners"] = {{"models", std::move(per_model)},
                  {"gemm", winner_json(m.gemm_winner)},
                  {"production", winner_json(m.production_winner)},
                  {"differ", m.differ()}};
  return j;
}

std::string fit_text(const FitMatrix& m, const FitConditions& c) {
  std::string out;
  char b[512];
  std::snprintf(b, sizeof b,
                "bud fit: %zu model%s on %zu array%s, %u %s requests per load point (seed %llu), "
                "max batch %u, window %.1f us, queue %u (%s), SLA p99 <= %.1f us (%s)\n",
                m.models.size(), m.models.size() == 1 ? "" : "s", m.configs.size(),
                m.configs.size() == 1 ? "" : "s", c.requests, c.arrivals.c_str(),
                static_cast<unsigned long long>(c.seed), c.max_batch, c.window_us, c.queue_bound,
                c.admission.c_str(), c.sla_p99_us, c.energy_table.c_str());
  out += b;
  out +=
      "\nFit matrix (one inference profiled and checked bit-exactly on the RTL; serving at the "
      "SLA)\n";
  std::snprintf(b, sizeof b, "  %-28s %-6s %11s %10s %9s %8s %10s %10s %8s %10s\n", "model",
                "array", "NPU cycles", "host", "% FLOPs", "mem stl", "uJ/inf", "req/s@SLA",
                "p99 us", "req/J@SLA");
  out += b;
  for (const auto& cell : m.cells) {
    const std::string label = model_label(cell);
    if (!cell.passed) {
      std::snprintf(b, sizeof b, "  %-28s %-6s FAIL: %s\n", label.c_str(), cell.config.c_str(),
                    cell.failure.c_str());
      out += b;
      continue;
    }
    const auto& s = cell.sustained;
    std::snprintf(
        b, sizeof b, "  %-28s %-6s %11s %10s %8.1f%% %7.1f%% %10s %10s %8s %10s\n", label.c_str(),
        cell.config.c_str(), grouped(cell.cycles).c_str(), grouped(cell.host_cycles).c_str(),
        100 * cell.flops_fraction, 100 * cell.memory_stall_fraction,
        fixed(static_cast<double>(cell.energy_fj) * 1e-9, 3).c_str(),
        s ? fixed(s->served_rps, 0).c_str() : "misses", s ? fixed(s->p99_us, 1).c_str() : "-",
        s ? fixed(s->requests_per_joule, 0).c_str() : "-");
    out += b;
  }
  // Memory-stall fraction per layer type: where each array loses its slots to DRAM.
  const auto kinds = all_types(m);
  out += "\nMemory-stall fraction by layer type (top-down memory slots / the type's MAC slots)\n";
  std::snprintf(b, sizeof b, "  %-28s %-6s", "model", "array");
  out += b;
  for (const auto& k : kinds) {
    std::snprintf(b, sizeof b, " %9s", (k == "matmul" ? "attention" : k).c_str());
    out += b;
  }
  out += "\n";
  for (const auto& cell : m.cells) {
    if (!cell.passed) continue;
    std::snprintf(b, sizeof b, "  %-28s %-6s", model_label(cell).c_str(), cell.config.c_str());
    out += b;
    for (const auto& k : kinds) {
      const TypeStall* t = type_of(cell, k);
      std::snprintf(b, sizeof b, " %9s",
                    t ? (fixed(100 * t->memory_stall_fraction, 1) + "%").c_str() : "-");
      out += b;
    }
    out += "\n";
  }
  out +=
      "\nWinner at the SLA (most requests/J with p99 within the model's SLA, nothing "
      "dropped)\n";
  for (size_t i = 0; i < m.models.size(); ++i) {
    const Winner& w = m.model_winners[i];
    const FitCell* any = m.cell(m.models[i], m.configs.front());
    const std::string name = any ? any->workload : m.models[i];
    const FitCell* first = m.cell(m.models[i], m.configs.front());
    out += "  " + name + " (p99 <= " + fixed(first ? first->sla_p99_us : c.sla_p99_us, 1) +
           " us): " +
           (w.config.empty() ? "no array meets the SLA"
                             : w.config + " (" + fixed(w.score, 0) + " requests/J)") +
           "\n";
  }
  const Winner& g = m.gemm_winner;
  const Winner& p = m.production_winner;
  std::string gemm_name;
  for (const auto& cell : m.cells)
    if (cell.synthetic) gemm_name = cell.workload;
  if (!gemm_name.empty())
    out += "  synthetic GEMM (" + gemm_name + "): " +
           (g.config.empty() ? "no array meets the SLA"
                             : g.config + " (" + fixed(g.score, 0) + " requests/J)") +
           "\n";
  out += "  production models: " +
         (p.config.empty() ? std::string("no array meets the SLA on any model")
                           : p.config + " (meets the SLA on " + std::to_string(p.models_meeting) +
                                 " of " + std::to_string(m.models.size()) + ", geometric mean " +
                                 fixed(100 * p.score, 1) + "% of each model's best requests/J)") +
         "\n";
  if (m.differ())
    out += "  The synthetic GEMM picks " + g.config + " but the production models pick " +
           (p.config.empty() ? std::string("none") : p.config) +
           ": choose on the production models.\n";
  else if (!gemm_name.empty() && !g.config.empty())
    out += "  The synthetic GEMM and the production models pick the same array.\n";
  return out;
}

}  // namespace bud::fit
