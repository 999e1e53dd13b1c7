#include "load/Plan.h"

#include <algorithm>
#include <cmath>

namespace bud::load {

std::vector<uint32_t> tile_rows_to_try(const Service& service) {
  std::vector<uint32_t> v;
  for (uint32_t divisor : {2u, 4u}) {
    const uint32_t rows = std::max<uint32_t>(1, service.tile_rows / divisor);
    if (rows < service.tile_rows && (v.empty() || v.back() != rows)) v.push_back(rows);
  }
  return v;
}

RunChange tile_rows_change(const run::RunOptions& options, const power::EnergyTable& table,
                           uint32_t rows) {
  RunChange c;
  c.knob = Knob::TileRows;
  c.name = "tile rows <= " + std::to_string(rows);
  c.options = options;
  c.options.tiles.max_rows = rows;
  c.table = table;
  return c;
}

std::vector<RunChange> precision_changes(const run::RunOptions& options,
                                         const power::EnergyTable& table) {
  std::vector<RunChange> v;
  for (const char* p : {"int8", "bf16", "auto"}) {
    if (options.precision == p || (options.precision.empty() && std::string(p) == "int8"))
      continue;
    RunChange c;
    c.knob = Knob::Precision;
    c.name = std::string("precision ") + p;
    c.options = options;
    c.options.precision = p;
    c.options.precision_origin = run::RunOptions{}.precision_origin;
    c.table = table;
    v.push_back(std::move(c));
  }
  return v;
}

workload::Result<std::vector<Intervention>> plan_interventions(
    const Service& base, const SweepSpec& spec, double window_us,
    const std::vector<double>& windows_us, const std::vector<RunChange>& changes,
    const std::function<void(const std::string&, uint32_t)>& progress) {
  std::vector<Intervention> plan = sweep_interventions(base, spec, windows_us);
  for (const RunChange& c : changes) {
    auto service = measure_service(c.options, spec.policy.max_batch, c.table, [&](uint32_t b) {
      if (progress) progress(c.name, b);
    });
    if (!service) return workload::Error{c.name + ": " + service.error()};
    std::string failure;
    for (const auto& run : service->runs)
      if (!run.passed && failure.empty())
        failure = "batch of " + std::to_string(run.batch) + " failed on the RTL: " + run.failure;
    SweepSpec at = spec;
    at.policy.window_cycles = static_cast<uint64_t>(std::llround(window_us * service->frequency_mhz));
    if (!failure.empty()) {
      Intervention i;
      i.name = c.name;
      i.knob = c.knob;
      i.policy = at.policy;
      i.point = service->point;
      i.frequency_mhz = service->frequency_mhz;
      i.tiles = service->tiles;
      i.failure = std::move(failure);
      plan.push_back(std::move(i));
      continue;
    }
    plan.push_back(evaluate_intervention(c.name, *service, at, c.knob));
  }
  rank_interventions(plan);
  return plan;
}

}  // namespace bud::load
