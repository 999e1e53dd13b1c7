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

}  // namespace

workload::Result<Service> measure_service(const run::RunOptions& options, uint32_t max_batch,
                                          const power::EnergyTable& table,
                                          const std::function<void(uint32_t)>& progress) {
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
    if (plan) s.tile_rows = std::max(s.tile_rows, static_cast<uint32_t>(plan->rows));
  }
  s.idle_fj_per_cycle = price(table, "cycles");
  for (const auto& a : table.actions)
    if (a.counter.size() > 5 && a.counter.compare(a.counter.size() - 5, 5, ".idle") == 0)
      s.idle_fj_per_cycle += a.fj;
  s.times.host_per_batch = workload::kHostSyncCycles;
  s.times.host_per_request =
      (s.request_bytes_in + s.request_bytes_out + workload::kHostBytesPerCycle - 1) /
      workload::kHostBytesPerCycle;
  for (uint32_t b = 1; b <= max_batch; ++b) {
    if (progress) progress(b);
    workload::Workload w = base->workload;
    w.repeat = b;
    auto prepared = run::prepare_workload(std::move(w), options);
    if (!prepared) return workload::Error{prepared.error()};
    const run::RunReport report = run::execute(*prepared, options);
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

}  // namespace bud::load
