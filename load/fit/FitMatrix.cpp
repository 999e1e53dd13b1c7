#include "load/fit/FitMatrix.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "load/Service.h"
#include "profile/Profile.h"
#include "profile/Profiler.h"

namespace bud::fit {

namespace {

TradePoint trade_point(const load::Service& service, const load::LoadPoint& p) {
  TradePoint t;
  t.load = p.load;
  t.served_rps = p.served_rps;
  t.p99_us = load::to_us(service, p.latency.p99);
  t.requests_per_joule = p.requests_per_joule;
  t.watts = p.watts;
  t.dropped = p.dropped;
  t.meets_sla = p.meets_sla;
  return t;
}

/// What the profiled batch of 1 gives the cell.
void take_profile(const profile::Profile& p, const run::PreparedRun& prepared,
                  const run::RunReport& report, FitCell& cell) {
  cell.array_macs = p.array_macs;
  cell.cycles = report.cycles;
  cell.host_cycles = report.host_cycles;
  cell.model_macs = model_macs(prepared.workload);
  const double slots = static_cast<double>(cell.cycles + cell.host_cycles) * cell.array_macs;
  cell.flops_fraction = slots > 0 ? static_cast<double>(cell.model_macs) / slots : 0;
  cell.memory_stall_fraction = p.model.memory_stall_fraction;
  cell.types.clear();
  for (const auto& t : p.types)
    cell.types.push_back({t.kind, t.layers, t.cycles, t.memory_stall_fraction});
}

}  // namespace

uint64_t model_macs(const workload::Workload& w) {
  uint64_t macs = 0;
  for (const auto& l : w.layers)
    if (l.is_gemm())
      macs += static_cast<uint64_t>(l.out_shape.elements()) * static_cast<uint64_t>(l.reduction());
  return macs;
}

const FitCell* FitMatrix::cell(const std::string& model, const std::string& config) const {
  for (const auto& c : cells)
    if (c.model == model && c.config == config && !c.synthetic) return &c;
  return nullptr;
}

const FitCell* FitMatrix::gemm_cell(const std::string& config) const {
  for (const auto& c : cells)
    if (c.synthetic && c.config == config) return &c;
  return nullptr;
}

void search_sustained(const load::Service& service, const load::SweepSpec& spec,
                      uint32_t refine_steps, FitCell& cell) {
  const load::SweepResult grid = load::sweep(service, spec);
  cell.capacity_rps = grid.capacity_rps;
  cell.curve.clear();
  for (const auto& p : grid.points) cell.curve.push_back(trade_point(service, p));
  cell.sustained.reset();
  if (grid.sustained) cell.sustained = cell.curve[*grid.sustained];
  // Bisect between the best grid load and the next grid load above it (or capacity): the
  // sustained load to within (gap / 2^steps), not to the grid's spacing. The SLA need not be
  // monotone in load over a finite stream, so each probe is kept on the curve as measured.
  if (cell.sustained) {
    double lo = cell.sustained->load, hi = 1;
    for (double l : spec.loads)
      if (l > lo) hi = std::min(hi, l);
    for (uint32_t i = 0; i < refine_steps; ++i) {
      load::SweepSpec probe = spec;
      probe.loads = {(lo + hi) / 2};
      const load::SweepResult r = load::sweep(service, probe);
      const TradePoint t = trade_point(service, r.points.front());
      cell.curve.push_back(t);
      if (t.meets_sla) {
        lo = t.load;
        if (t.served_rps > cell.sustained->served_rps) cell.sustained = t;
      } else {
        hi = t.load;
      }
    }
  }
  std::stable_sort(cell.curve.begin(), cell.curve.end(),
                   [](const TradePoint& a, const TradePoint& b) { return a.load < b.load; });
}

workload::Result<FitCell> fit_cell(const std::string& model, const FitTarget& target,
                                   const FitSpec& spec, const FitProgress& progress,
                                   FitEvidence* evidence) {
  FitCell cell;
  cell.model = model;
  cell.config = target.config;
  cell.sla_p99_us = spec.serving.sla_p99_us;
  run::RunOptions options = target.options;
  options.workload = model;
  const uint32_t max_batch = spec.serving.policy.max_batch;
  // The batch of 1 is the profiled run: the same checked run run::execute gives, with the
  // attribution observer taking part, so the profile costs no second simulation.
  std::string profile_error;
  const load::BatchExecutor execute = [&](uint32_t b, const run::PreparedRun& prepared,
                                          const run::RunOptions& ro) {
    if (b != 1) return run::execute(prepared, ro);
    profile::ProfiledRun profiled = profile::run_profiled(prepared, ro);
    if (!profiled.attribution) {
      profile_error = profiled.error;
      return profiled.report;
    }
    auto p = profile::build_profile(*profiled.attribution, prepared.program, profiled.report);
    take_profile(p, prepared, profiled.report, cell);
    if (evidence) evidence->profile = std::move(p);
    return profiled.report;
  };
  auto service = load::measure_service(
      options, max_batch, target.table,
      [&](uint32_t b) {
        if (progress)
          progress(model + " on " + target.config + ", batch " + std::to_string(b) + " of " +
                   std::to_string(max_batch));
      },
      execute);
  if (!service) return workload::Error{service.error()};
  if (!profile_error.empty())
    return workload::Error{model + " on " + target.config + ": " + profile_error};
  if (evidence) evidence->service = *service;
  cell.workload = service->workload;
  cell.frequency_mhz = service->frequency_mhz;
  cell.passed = true;
  for (const auto& r : service->runs)
    if (!r.passed) {
      cell.passed = false;
      cell.failure = "batch of " + std::to_string(r.batch) + " failed on the RTL: " + r.failure;
      return cell;
    }
  cell.energy_fj = service->batch_fj(1) + service->request_copy_fj;
  load::SweepSpec serving = spec.serving;
  serving.policy.window_cycles =
      static_cast<uint64_t>(std::llround(spec.window_us * service->frequency_mhz));
  if (auto e = serving.validate(*service); !e.empty()) return workload::Error{e};
  search_sustained(*service, serving, spec.refine_steps, cell);
  return cell;
}

void choose_winners(FitMatrix& m) {
  auto best_of = [&](const std::string& model, bool synthetic) {
    Winner w;
    const FitCell* best = nullptr;
    for (const auto& config : m.configs) {
      const FitCell* c = synthetic ? m.gemm_cell(config) : m.cell(model, config);
      if (!c || !c->sustained) continue;
      // Ties (equal requests/J) go to the fewer cycles, then the earlier config.
      if (!best || c->sustained->requests_per_joule > best->sustained->requests_per_joule ||
          (c->sustained->requests_per_joule == best->sustained->requests_per_joule &&
           c->cycles < best->cycles))
        best = c;
    }
    if (best) {
      w.config = best->config;
      w.score = best->sustained->requests_per_joule;
      w.models_meeting = 1;
    }
    return w;
  };
  m.model_winners.clear();
  for (const auto& model : m.models) m.model_winners.push_back(best_of(model, false));
  m.gemm_winner = {};
  for (const auto& c : m.cells)
    if (c.synthetic) {
      m.gemm_winner = best_of(c.model, true);
      break;
    }
  // Production: per config, the models meeting the SLA and the geometric mean of its
  // requests/J relative to each such model's best.
  m.production_winner = {};
  for (const auto& config : m.configs) {
    Winner w;
    w.config = config;
    double log_sum = 0;
    for (size_t i = 0; i < m.models.size(); ++i) {
      const FitCell* c = m.cell(m.models[i], config);
      if (!c || !c->sustained || m.model_winners[i].score <= 0) continue;
      ++w.models_meeting;
      log_sum += std::log(c->sustained->requests_per_joule / m.model_winners[i].score);
    }
    if (w.models_meeting == 0) continue;
    w.score = std::exp(log_sum / w.models_meeting);
    const Winner& b = m.production_winner;
    if (b.config.empty() || w.models_meeting > b.models_meeting ||
        (w.models_meeting == b.models_meeting && w.score > b.score))
      m.production_winner = w;
  }
}

workload::Result<FitMatrix> fit_matrix(const std::vector<FitModel>& models,
                                       const std::vector<FitTarget>& targets, const FitSpec& spec,
                                       const FitProgress& progress) {
  FitMatrix m;
  for (const auto& t : targets) m.configs.push_back(t.config);
  for (const auto& model : models) m.models.push_back(model.model);
  std::vector<FitModel> all = models;
  if (!spec.gemm.empty()) all.push_back({spec.gemm, 0});
  for (size_t i = 0; i < all.size(); ++i)
    for (const auto& target : targets) {
      FitSpec at = spec;
      if (all[i].sla_p99_us > 0) at.serving.sla_p99_us = all[i].sla_p99_us;
      auto cell = fit_cell(all[i].model, target, at, progress);
      if (!cell) return workload::Error{cell.error()};
      m.cells.push_back(std::move(cell).value());
      m.cells.back().synthetic = i >= models.size();
    }
  choose_winners(m);
  return m;
}

}  // namespace bud::fit
