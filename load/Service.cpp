#include "load/Service.h"

#include <algorithm>

#include "emu/workload/Lowering.h"
#include "power/EnergyAccount.h"

namespace bud::load {
namespace {

/// The table's price of `counter`, 0 if it prices none.
uint64_t price(const power::EnergyTable& table, std::string_view counter) {
  for (const auto& a : table.actions)
    if (a.counter == counter) return a.fj;
  return 0;
}

/// The table's energy per cycle of every engine in cycle class `cls` ("idle", "throttled"),
/// plus the `cycles` background; only the on-die components with `die_only`.
uint64_t per_cycle(const power::EnergyTable& table, std::string_view cls, bool die_only) {
  uint64_t fj = 0;
  const std::string suffix = "." + std::string(cls);
  for (const auto& a : table.actions) {
    if (die_only && !power::on_die(a.component)) continue;
    if (a.counter == "cycles" || a.counter.ends_with(suffix)) fj += a.fj;
  }
  return fj;
}

}  // namespace

workload::Result<Service> measure_service(const run::RunOptions& options, uint32_t max_batch,
                                          const power::EnergyTable& table,
                                          const std::function<void(uint32_t)>& progress,
                                          const BatchExecutor& execute) {
  if (max_batch == 0) return workload::Error{"max batch must be >= 1"};
  auto base = run::prepare(options);
  if (!base) return workload::Error{base.error()};
  if (base->workload.repeat != 1)
    return workload::Error{options.workload + ": serving needs one inference per pass (repeat " +
                           std::to_string(base->workload.repeat) + "); remove `repeat`"};
  Service s;
  s.workload = base->workload.name;
  s.frequency_mhz = table.frequency_mhz;
  s.energy_table = table.file;
  // Per request the host copies the input in and the output out through DRAM (docs/serving.md).
  s.request_bytes_in = static_cast<uint64_t>(base->workload.input.elements());
  s.request_bytes_out =
      base->workload.layers.empty() ? 0
                                    : static_cast<uint64_t>(base->workload.layers.back().out_shape.elements());
  s.request_copy_fj = s.request_bytes_in * price(table, "dram_wr_bytes") +
                      s.request_bytes_out * price(table, "dram_rd_bytes");
  s.point = options.point;
  s.tiles = base->workload.tiles;
  for (const auto& l : base->workload.layers) {
    if (l.kind == workload::LayerKind::Host) continue;
    auto plan = workload::plan_tiles(l, base->program.array, base->workload.tiles);
    if (!plan) continue;
    s.tile_rows = std::max(s.tile_rows, static_cast<uint32_t>(plan->rows));
    if (l.is_gemm())
      s.tile_blocks = std::max(s.tile_blocks, static_cast<uint32_t>(plan->nb_tile));
  }
  s.idle_fj_per_cycle = per_cycle(table, "idle", false);
  s.idle_die_fj_per_cycle = per_cycle(table, "idle", true);
  s.clamped_fj_per_cycle = per_cycle(table, "throttled", false);
  s.clamped_die_fj_per_cycle = per_cycle(table, "throttled", true);
  // Serving runs the thermal model over its timeline; each batch is measured at nominal speed.
  run::RunOptions batch_options = options;
  if (options.emulator.thermal.enabled) {
    s.thermal = options.emulator.thermal;
    batch_options.emulator.thermal.enabled = false;
  }
  s.times.host_per_batch = workload::kHostSyncCycles;
  s.times.host_per_request =
      (s.request_bytes_in + s.request_bytes_out + workload::kHostBytesPerCycle - 1) /
      workload::kHostBytesPerCycle;
  for (uint32_t b = 1; b <= max_batch; ++b) {
    if (progress) progress(b);
    workload::Workload w = base->workload;
    w.repeat = b;
    auto prepared = run::prepare_workload(std::move(w), batch_options);
    if (!prepared) return workload::Error{prepared.error()};
    const run::RunReport report = execute ? execute(b, *prepared, batch_options)
                                          : run::execute(*prepared, batch_options);
    BatchRun r;
    r.batch = b;
    r.npu_cycles = report.cycles;
    r.host_layer_cycles = report.host_cycles;
    r.useful_macs = report.counter("macs_useful");
    r.passed = report.passed;
    if (!report.passed)
      r.failure = report.failures.empty() ? report.message : report.failures.front();
    auto acc = power::account(table, report.counter_names, report.counters);
    if (!acc) return workload::Error{acc.error()};
    r.energy_fj = acc->total_fj;
    for (int c = 0; c < power::kNumComponents; ++c)
      if (power::on_die(static_cast<power::Component>(c))) r.die_fj += acc->by_component[c];
    r.unpriced = acc->unpriced;
    s.times.batch_cycles.push_back(r.npu_cycles + r.host_layer_cycles);
    if (b == 1) {
      s.model_revision = report.model_revision;
      s.seed = report.seed;
      s.mem_seed = report.mem_seed;
    }
    s.runs.push_back(std::move(r));
  }
  return s;
}

ServingThermal Service::serving_thermal() const {
  ServingThermal t;
  if (!thermal) return t;
  t.config = *thermal;
  t.start_mc = thermal->ambient_mc;
  for (uint32_t b = 1; b <= runs.size(); ++b) {
    const uint64_t service_cycles = times.batch(b);
    const uint64_t npu = runs[b - 1].npu_cycles;
    t.batch_die_fj.push_back(runs[b - 1].die_fj +
                             (service_cycles > npu ? service_cycles - npu : 0) * idle_die_fj_per_cycle);
  }
  t.idle_die_fj_per_cycle = idle_die_fj_per_cycle;
  t.clamped_die_fj_per_cycle = clamped_die_fj_per_cycle;
  return t;
}

}  // namespace bud::load
