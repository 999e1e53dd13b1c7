// `bud serve-load`: a request stream served by the NPU under an SLA (docs/serving.md). Batch
// costs are measured on the RTL (each batch size run and checked bit-exactly), then a seeded
// arrival process at each offered load is served with admission control and micro-batching;
// the report gives p50/p95/p99 latency, throughput, energy per request and throughput per watt
// per load point, and the sustained throughput per watt at the highest load meeting the p99 SLA.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "debugger/json/Json.h"
#include "emu/run/RunJob.h"
#include "load/Plan.h"

namespace bud::cli {

struct ServeLoadOptions {
  run::RunOptions run;
  std::string arrivals = "poisson";    ///< --arrivals poisson|bursty|diurnal|trace
  std::string arrival_trace;           ///< --arrival-trace FILE (with --arrivals trace)
  uint32_t requests = 2000;            ///< --requests N per load point
  uint64_t arrival_seed = 1;           ///< --arrival-seed
  double burst_factor = 4, burst_fraction = 0.2, burst_period_us = 2000;
  double diurnal_amplitude = 0.5, diurnal_period_us = 20000;  ///< --diurnal-amplitude, -period-us
  uint32_t max_batch = 4;              ///< --max-batch
  double window_us = 0;                ///< --window-us: micro-batching window
  uint32_t queue_bound = 64;           ///< --queue-bound
  std::string admission = "drop";      ///< --admission drop|delay
  std::vector<double> loads;           ///< --load F,...: fractions of capacity
  double sla_p99_us = 0;               ///< --sla-p99-us
  bool sweep = false;                  ///< --sweep: the intervention plan (needs an SLA)
  std::vector<double> sweep_windows_us{5, 20, 50};  ///< --sweep-windows-us
  /// --sweep-tile-rows: tile-row caps to try (empty: half and a quarter of the largest tile).
  std::vector<uint32_t> sweep_tile_rows;
  std::vector<uint32_t> sweep_tile_blocks;
  /// --stream NAME:WORKLOAD:SHARE[:SLA_US[:PRIORITY|WEIGHT]], repeatable: several streams on one
  /// NPU instead of the positional workload (tools/bud/ServeStreams.h).
  std::vector<std::string> streams;
  std::string queue_policy = "fifo";   ///< --queue-policy fifo|strict|weighted (with --stream)
  std::string html;                    ///< --html FILE
  bool json = false;
};

/// What serving measured: the batch costs on the RTL, the load sweep of the options' policy and,
/// with `sweep`, the ranked intervention plan (load/Plan.h).
struct Served {
  load::Service service;
  load::SweepSpec spec;
  load::SweepResult result;
  std::vector<load::Intervention> plan;
};

/// The serving options (arrivals, policy, load points, SLA, the plan's windows and tile rows) on
/// `app`: `bud serve-load` and `bud profile --sweep` share them. Not --sweep, --json, --html.
void add_serving_options(CLI::App& app, ServeLoadOptions& options);
/// Whether `name` (a CLI11 option name) is one of add_serving_options'.
bool is_serving_option(const std::string& name);
/// Measures and serves what `options` asks (the intervention plan too with options.sweep): 0 and
/// `out` filled, or the exit status after reporting the error as `command` (1 a batch failed on
/// the RTL, 2 bad input). `options.run` is resolved here (--config, the power options).
int serve_options(const std::string& command, const ServeLoadOptions& options, Served& out);
/// The arrivals (kind, count, seed, shapes, a trace read from --arrival-trace), the policy but
/// its window (which needs the measured clock), the load points and the SLA of `options` into
/// `spec`: empty, or the bad input as one line (exit 2).
std::string serving_spec(const ServeLoadOptions& options, load::SweepSpec& spec);
/// Measures `measured.workload` at batch sizes 1..up_to on the RTL (load::measure_service),
/// with one progress line per run on a terminal.
workload::Result<load::Service> measure_batches(const std::string& command,
                                                run::RunOptions measured, uint32_t up_to,
                                                const power::EnergyTable& table);
/// The batch costs of `service` as JSON (the `service` object of --json).
json::Json service_json(const load::Service& service);
void setup_serve_load(CLI::App& app, ServeLoadOptions& options);
/// Exit code: 0 served (and, with an SLA, some load point met it), 1 no load point met the SLA
/// or a batch failed its bit-exact check on the RTL, 2 bad input, 4 the HTML report failed.
int run_serve_load(const ServeLoadOptions& options);

}  // namespace bud::cli
