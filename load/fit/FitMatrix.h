// The workload fit matrix (`bud fit`, docs/serving.md "Platform fit"): every model on every
// array variant, each cell one profiled, bit-exactly checked run on the RTL (cycles, % of the
// model's FLOPs the array sustains, memory-stall fraction per layer type, energy per inference)
// and a load search under a production-like (bursty) request stream served from the RTL-measured
// batch costs (the highest load whose p99 meets the SLA, and its requests per joule). The
// synthetic GEMM's winner is kept apart from the production models' winner: choosing a platform
// on the synthetic kernel is the pitfall the matrix exists to show.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "emu/run/RunJob.h"
#include "load/Service.h"
#include "load/Sweep.h"
#include "power/EnergyTable.h"
#include "profile/Profile.h"

namespace bud::fit {

/// One array variant to fit on.
struct FitTarget {
  std::string config;        ///< as the user named it: "npu8", "npu16", "npu32"
  run::RunOptions options;   ///< design resolved for the config, power options applied
  power::EnergyTable table;  ///< at the run's operating point
};

/// What the matrix measures beside the models.
struct FitSpec {
  /// Arrivals, policy (its window in cycles of the table's clock), SLA. `loads` is the coarse
  /// grid of the load search (fractions of capacity, each < 1).
  load::SweepSpec serving;
  double window_us = 0;  ///< micro-batching window (converted at each cell's clock)
  /// Bisection steps between the highest grid load that meets the SLA and the next one up.
  uint32_t refine_steps = 5;
  std::string gemm;  ///< the synthetic GEMM reference workload (empty: none)
};

/// A model to fit and its own p99 SLA (0: FitSpec's).
struct FitModel {
  std::string model;  ///< built-in name or path
  double sla_p99_us = 0;
};

/// A layer type's share of one inference (profile::Profile::types).
struct TypeStall {
  std::string kind;  ///< "conv2d", "dense", "matmul" (attention), "add", ...
  int layers = 0;
  uint64_t cycles = 0;               ///< the type's layers' spans, summed
  double memory_stall_fraction = 0;  ///< top-down memory slots / the type's MAC slots
};

/// One load point of a cell's search: a point of the trade curve.
struct TradePoint {
  double load = 0;  ///< fraction of capacity
  double served_rps = 0;
  double p99_us = 0;
  double requests_per_joule = 0;
  double watts = 0;
  uint64_t dropped = 0;
  bool meets_sla = false;
};

/// One model on one array variant.
struct FitCell {
  std::string model;     ///< as given (built-in name or path)
  std::string workload;  ///< the workload's name
  std::string config;
  bool synthetic = false;    ///< the GEMM reference, not a production model
  double sla_p99_us = 0;     ///< the SLA its load search met
  bool passed = false;       ///< every run checked bit-exactly
  std::string failure;       ///< why not
  uint32_t array_macs = 0;   ///< MACs per cycle of the array (rows x cols)
  uint64_t cycles = 0;       ///< NPU cycles of one inference
  uint64_t host_cycles = 0;  ///< its host layers under the cost model
  uint64_t model_macs = 0;   ///< the network's own MACs (GEMM layers; no padding, no identity)
  /// model_macs / ((cycles + host_cycles) x array_macs): the share of the array's peak the
  /// model's FLOPs sustain end to end.
  double flops_fraction = 0;
  double memory_stall_fraction = 0;  ///< the whole run's
  std::vector<TypeStall> types;      ///< in order of first appearance
  uint64_t energy_fj = 0;            ///< one inference (a batch of 1, request copies included)
  double frequency_mhz = 0;
  double capacity_rps = 0;              ///< at the policy's max batch
  std::vector<TradePoint> curve;        ///< every load tried, by load
  std::optional<TradePoint> sustained;  ///< the highest throughput meeting the SLA
};

/// The config that wins a comparison, if any cell meets the SLA.
struct Winner {
  std::string config;  ///< empty: no config meets the SLA
  /// Requests/J at the SLA (a model), or the geometric mean over the production models of each
  /// model's requests/J relative to its best config.
  double score = 0;
  uint32_t models_meeting = 0;  ///< production: models meeting the SLA on this config
};

struct FitMatrix {
  std::vector<std::string> configs;  ///< in the order given
  std::vector<std::string> models;   ///< production models, in the order given
  std::vector<FitCell> cells;        ///< model-major (the GEMM reference last), then config
  /// Per production model, in `models` order: the config with the most requests/J at the SLA.
  std::vector<Winner> model_winners;
  Winner gemm_winner;  ///< on the synthetic GEMM (empty config without FitSpec::gemm)
  /// Over the production models: the most models meeting the SLA, then the highest geometric
  /// mean of relative requests/J over them.
  Winner production_winner;
  bool differ() const {
    return !gemm_winner.config.empty() && gemm_winner.config != production_winner.config;
  }
  /// A production model's cell on `config` (null: none).
  const FitCell* cell(const std::string& model, const std::string& config) const;
  /// The synthetic GEMM's cell on `config` (null: none).
  const FitCell* gemm_cell(const std::string& config) const;
};

/// Called before each RTL run of the matrix (a label such as "mlp on npu16, batch 1 of 2").
using FitProgress = std::function<void(const std::string& label)>;

/// What a cell's measurement leaves beside its figures, for callers that compare two cells
/// (`bud matrix`: the profiles' mechanism, the service searched again at another SLA).
struct FitEvidence {
  std::optional<profile::Profile> profile;  ///< of the batch of 1 (none: the run failed)
  std::optional<load::Service> service;     ///< the batch costs measured on the RTL
};

/// Measures `model` on `target`: its batch costs at 1..max_batch on the RTL (the batch of 1
/// profiled), then the load search. An error for a model that cannot be prepared; a run that
/// does not pass gives a cell with `passed` false and no serving figures. `evidence` (optional)
/// receives the profile and the service.
workload::Result<FitCell> fit_cell(const std::string& model, const FitTarget& target,
                                   const FitSpec& spec, const FitProgress& progress = {},
                                   FitEvidence* evidence = nullptr);

/// The highest load of `service` under `spec` whose p99 meets the SLA: the grid of spec.loads,
/// then `refine_steps` bisections above the best grid point. Deterministic.
void search_sustained(const load::Service& service, const load::SweepSpec& spec,
                      uint32_t refine_steps, FitCell& cell);

/// Every model (and FitSpec::gemm, at FitSpec's SLA) on every target, and the winners.
workload::Result<FitMatrix> fit_matrix(const std::vector<FitModel>& models,
                                       const std::vector<FitTarget>& targets, const FitSpec& spec,
                                       const FitProgress& progress = {});

/// The winners of `m.cells` (fills model_winners, gemm_winner, production_winner).
void choose_winners(FitMatrix& m);

/// The network's own MACs of one inference of `w`: output elements x reduction of every GEMM
/// layer (dense, conv2d, matmul), so a depthwise conv counts its kh x kw per output.
uint64_t model_macs(const workload::Workload& w);

}  // namespace bud::fit
