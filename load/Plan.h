// The intervention plan (docs/serving.md "Intervention plan"): the serving-policy changes of
// sweep_interventions on the baseline's batch costs, and the changes to the run itself (an
// operating point, smaller tiles), whose batch costs are measured again on the RTL, each served
// under the baseline policy and ranked together by throughput per watt at the SLA. Shared by
// `bud serve-load --sweep` and `bud profile --sweep`.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "emu/run/RunJob.h"
#include "load/Service.h"
#include "load/Sweep.h"
#include "power/EnergyTable.h"

namespace bud::load {

/// One change to the run: the workload run again with `options` (the baseline's, with one thing
/// changed) and priced with `table`. This is where a change of the datapath (e.g. the precision
/// mix) plugs in: a Knob of its own and the run options that select it.
struct RunChange {
  Knob knob = Knob::OperatingPoint;
  std::string name;            ///< "point low", "tile rows <= 16"
  run::RunOptions options;     ///< the run at the change
  power::EnergyTable table;    ///< the table at the change's operating point
};

/// Tile-row caps worth trying on `service`: half and a quarter of its largest tile's rows (at
/// least 1, each distinct and smaller than the plan's). Empty for a one-row plan.
std::vector<uint32_t> tile_rows_to_try(const Service& service);

/// The change of `options` (the baseline run) to at most `rows` GEMM rows per tile.
RunChange tile_rows_change(const run::RunOptions& options, const power::EnergyTable& table,
                           uint32_t rows);

/// Output-block caps worth trying on `service`: half and a quarter of its largest tile's output
/// blocks (at least 1, each distinct and smaller). Empty when every tile has one block.
std::vector<uint32_t> tile_blocks_to_try(const Service& service);

/// The change of `options` (the baseline run) to at most `blocks` output blocks per tile.
RunChange tile_blocks_change(const run::RunOptions& options, const power::EnergyTable& table,
                             uint32_t blocks);

/// The precision mixes worth trying (docs/workloads.md, "Precision"): int8, bf16 and auto, but
/// the baseline's own (`--precision`; none given: the workload's, taken as int8).
std::vector<RunChange> precision_changes(const run::RunOptions& options,
                                         const power::EnergyTable& table);

/// The whole plan: sweep_interventions(base, spec, windows_us), then each change measured at
/// batch sizes 1..spec.policy.max_batch and served under the baseline policy (its window,
/// `window_us`, converted at the change's clock). A change that does not prepare (its lowering or
/// DRAM refuses it) or whose batch fails its bit-exact check is kept with `failure` set, and
/// ranks last. Ranked (rank_interventions). `progress(name, b)` is called before each measured
/// run.
workload::Result<std::vector<Intervention>> plan_interventions(
    const Service& base, const SweepSpec& spec, double window_us,
    const std::vector<double>& windows_us, const std::vector<RunChange>& changes,
    const std::function<void(const std::string&, uint32_t)>& progress = {});

}  // namespace bud::load
