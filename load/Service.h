// What serving one batch costs, measured on the RTL (docs/serving.md): for each batch size, the
// workload run as one submission of b inferences (workload `repeat: b`), checked bit-exactly as
// `bud run` checks it, its cycles and its counters priced by an energy table; plus the host's
// share per batch and per request from the host cost model of docs/import.md.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "emu/run/RunJob.h"
#include "load/Server.h"
#include "power/EnergyTable.h"

namespace bud::load {

/// One batch size's run on the RTL.
struct BatchRun {
  uint32_t batch = 0;
  uint64_t npu_cycles = 0;   ///< simulated NPU cycles of the submission
  uint64_t host_layer_cycles = 0;  ///< the workload's host layers (cost model), all b passes
  uint64_t useful_macs = 0;
  uint64_t energy_fj = 0;    ///< its counters priced by the table
  uint64_t die_fj = 0;       ///< the part dissipated on the die (power::on_die components)
  std::vector<std::string> unpriced;  ///< counters that counted but the table does not price
  bool passed = false;
  std::string failure;       ///< why it did not pass
};

struct Service {
  std::string workload;
  ServiceTimes times;        ///< what load::serve needs
  std::vector<BatchRun> runs;  ///< index b - 1
  uint64_t request_bytes_in = 0, request_bytes_out = 0;  ///< copied per request
  uint64_t request_copy_fj = 0;  ///< those copies priced as DRAM bytes read and written
  uint64_t idle_fj_per_cycle = 0;  ///< the NPU waiting: every engine idle, plus background
  uint64_t idle_die_fj_per_cycle = 0;  ///< the on-die part of it
  /// The NPU held by the thermal clamp: every engine throttled (clock gated), plus background;
  /// and its on-die part.
  uint64_t clamped_fj_per_cycle = 0, clamped_die_fj_per_cycle = 0;
  /// The table's thermal model when the run asked for it (`--thermal`): serving then runs it
  /// over the timeline (serving_thermal); the batch costs are the nominal (unclamped) ones.
  std::optional<emu::ThermalConfig> thermal;
  double frequency_mhz = 0;  ///< the table's clock: cycles to seconds
  std::string energy_table;  ///< which table priced it
  std::string model_revision;
  uint64_t seed = 0, mem_seed = 0;
  std::string point;           ///< the operating point it ran at (empty: the table's own)
  workload::TileLimits tiles;  ///< the caps the workload was lowered with (none: the plan's)
  /// The most GEMM rows (output pixels) in one tile of any NPU layer, under those caps: what a
  /// tile-size intervention halves.
  uint32_t tile_rows = 0;
  /// The most output blocks (B channels) in one tile of any dense or conv2d layer, under those
  /// caps: what an output-block intervention halves.
  uint32_t tile_blocks = 0;

  /// NPU + host-layer energy of a batch of b (excluding the idle time around it).
  uint64_t batch_fj(uint32_t b) const { return runs[b - 1].energy_fj; }
  /// The thermal model over the serving timeline (load::serve), from ambient: each batch's
  /// on-die energy over its service time (the NPU idle during its host cycles). Only with
  /// `thermal`.
  ServingThermal serving_thermal() const;
};

/// Runs one batch size's prepared submission (`batch` inferences) and gives its checked
/// report. The default is run::execute; a caller that observes a run (bud fit profiles the batch
/// of 1) supplies its own, which must report exactly what run::execute would.
using BatchExecutor = std::function<run::RunReport(uint32_t batch, const run::PreparedRun&,
                                                   const run::RunOptions&)>;

/// Runs `options.workload` at batch sizes 1..max_batch on the RTL (fresh emulator each) and
/// prices each run with `table`. `progress(b)` is called before batch size b runs. A run that
/// does not pass is kept with `passed` false: the caller refuses to serve from it.
workload::Result<Service> measure_service(const run::RunOptions& options, uint32_t max_batch,
                                          const power::EnergyTable& table,
                                          const std::function<void(uint32_t)>& progress = {},
                                          const BatchExecutor& execute = {});

}  // namespace bud::load
