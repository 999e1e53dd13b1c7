#include "load/Plan.h"

#include <algorithm>
#include <cmath>

namespace bud::load {

namespace {

// Half and a quarter of `largest` (at least 1), each distinct and smaller than it.
std::vector<uint32_t> halves(uint32_t largest) {
  std::vector<uint32_t> v;
  for (uint32_t divisor : {2u, 4u}) {
    const uint32_t n = std::max<uint32_t>(1, largest / divisor);
    if (n < largest && (v.empty() || v.back() != n)) v.push_back(n);
  }
  return v;
}

// The baseline run with other tile caps.
RunChange tile_change(const run::RunOptions& options, const power::EnergyTable& table, Knob knob,
                      std::string name, const workload::TileLimits& caps) {
  RunChange c;
  c.knob = knob;
  c.name = std::move(name);
  c.options = options;
  c.options.tiles = caps;
  c.table = table;
  return c;
}

}  // namespace

std::vector<uint32_t> tile_rows_to_try(const Service& service) { return halves(service.tile_rows); }

std::vector<uint32_t> tile_blocks_to_try(const Service& service) {
  return halves(service.tile_blocks);
}

RunChange tile_blocks_change(const run::RunOptions& options, const power::EnergyTable& table,
                             uint32_t blocks) {
  workload::TileLimits caps = options.tiles;
  caps.max_blocks = blocks;
  return tile_change(options, table, Knob::TileBlocks, "tile blocks <= " + std::to_string(blocks),
                     caps);
}

RunChange tile_rows_change(const run::RunOptions& options, const power::EnergyTable& table,
                           uint32_t rows) {
  workload::TileLimits caps = options.tiles;
  caps.max_rows = rows;
  return tile_change(options, table, Knob::TileRows, "tile rows <= " + std::to_string(rows), caps);
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
    if (!service) {
      // A change bud chose that this workload cannot take (a tile cap the lowering refuses, a
      // precision whose layout does not fit the DRAM): a row that says why, not the plan's end.
      Intervention i;
      i.name = c.name;
      i.knob = c.knob;
      i.policy = spec.policy;
      i.tiles = c.options.tiles;
      i.failure = "could not be prepared: " + service.error();
      plan.push_back(std::move(i));
      continue;
    }
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
      i.mismatch = true;
      plan.push_back(std::move(i));
      continue;
    }
    plan.push_back(evaluate_intervention(c.name, *service, at, c.knob));
  }
  rank_interventions(plan);
  return plan;
}

}  // namespace bud::load
