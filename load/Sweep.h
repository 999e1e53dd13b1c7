// A latency-throughput sweep over offered load, as MLPerf's server scenario measures it
// (docs/serving.md): at each load point the same seeded arrival process at a different rate is
// served (load::serve) from the RTL-measured batch costs, and the point reports p50/p95/p99
// latency, throughput, drops, energy per request and throughput per watt. The sustained point is
// the highest throughput whose p99 meets the SLA with nothing dropped.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "load/Arrivals.h"
#include "load/Latency.h"
#include "load/Server.h"
#include "load/Service.h"

namespace bud::load {

struct SweepSpec {
  ArrivalSpec arrivals;      ///< kind, count, seed and burst shape; the rate is set per point
  ServerPolicy policy;
  /// Offered loads as fractions of the server's capacity (max_batch requests per batch time).
  std::vector<double> loads;
  double sla_p99_us = 0;     ///< 0: no SLA
  std::string validate(const Service& service) const;
};

struct LoadPoint {
  double load = 0;           ///< fraction of capacity
  double offered_rps = 0;
  double served_rps = 0;     ///< completed / time to the last completion
  uint64_t completed = 0, dropped = 0;
  LatencySummary latency;    ///< cycles
  std::vector<uint64_t> batches_by_size;
  uint64_t busy_cycles = 0, end_cycle = 0;
  uint64_t energy_fj = 0;    ///< batches + copies + the NPU idle (or clamped) the rest of the time
  /// With the thermal model (Service::thermal): clamp events, cycles the clamp held the NPU,
  /// their share of the time, and the highest temperature (milli-degrees C).
  uint64_t clamp_events = 0, clamped_cycles = 0;
  double clamped_fraction = 0;
  int64_t peak_mc = 0;
  /// With the thermal model: the completed requests whose time in the system overlaps a clamp
  /// engagement and those that do not (load::split_by_clamp), each with its own latency
  /// summary (cycles): how much of the tail the clamp explains.
  LatencySummary clamp_overlapping, clamp_clear;
  double joules_per_request = 0;
  double watts = 0;
  double requests_per_joule = 0;  ///< throughput per watt
  bool meets_sla = false;
  /// The offered load is at or above capacity (load >= 1): the queue has no steady state, so
  /// the finite run's percentiles are not latencies to quote (reported as saturated, never as
  /// meeting an SLA).
  bool saturated = false;
};

struct SweepResult {
  double capacity_rps = 0;
  std::vector<LoadPoint> points;  ///< in spec order
  /// The highest-throughput point that meets the SLA (none without an SLA or if none does).
  std::optional<size_t> sustained;
};

/// Serves every load point. Deterministic: the same spec and service give the same result.
SweepResult sweep(const Service& service, const SweepSpec& spec);

/// What an intervention changes, one at a time. MaxBatch and Window change the serving policy on
/// the baseline's batch costs; OperatingPoint and TileRows change the run, whose batch costs are
/// measured again on the RTL (load/Plan.h RunChange, where further run changes such as the
/// precision mix plug in).
enum class Knob : uint8_t {
  Baseline, MaxBatch, Window, OperatingPoint, TileRows, Precision, TileBlocks
};
/// "baseline", "max_batch", "window", "operating_point", "tile_rows", "precision",
/// "tile_blocks".
const char* knob_name(Knob knob);

/// One bounded change (`bud serve-load --sweep`, `bud profile --sweep`), measured as a whole
/// load sweep: the intervention plan, measured instead of guessed.
struct Intervention {
  std::string name;  ///< "baseline", "max batch 2", "window 10 us", "point low", ...
  Knob knob = Knob::Baseline;
  ServerPolicy policy;
  SweepResult result;
  /// The sustained point's figures (all 0 when no load point meets the SLA).
  double requests_per_joule = 0, served_rps = 0, p99_us = 0, watts = 0;
  /// The run it served from: its operating point (name, empty for the table's own; clock) and
  /// tile caps, and one inference (a batch of 1) on the RTL there.
  std::string point;
  double frequency_mhz = 0;
  workload::TileLimits tiles;
  uint64_t batch1_cycles = 0;  ///< NPU + host-layer cycles of a batch of 1
  uint64_t batch1_fj = 0;      ///< its energy
  /// Why it could not be measured (the change does not prepare, or a batch failed its bit-exact
  /// check on the RTL); empty when measured. Such an entry has no load sweep and ranks last.
  std::string failure;
  /// The failure is a batch that did not match the golden model: a correctness failure, which
  /// `bud serve-load --sweep` exits 1 for (a change that does not prepare is only a row).
  bool mismatch = false;
};

/// One intervention measured: the whole sweep of `spec` on `service` (whose batch costs may come
/// from another operating point), under `name`.
Intervention evaluate_intervention(std::string name, const Service& service, const SweepSpec& spec,
                                   Knob knob = Knob::Baseline);
/// Orders a plan best first: requests per joule at the SLA, those missing it after, those that
/// could not be measured last (stable).
void rank_interventions(std::vector<Intervention>& plan);

/// The baseline `spec` and each change of one policy knob at a time: max batch 1, 2, 4, ... up to
/// the batch sizes `service` measured, and micro-batching windows `windows_us` (the baseline's
/// other settings kept). Ranked by requests per joule at the SLA, best first; interventions with
/// no load point meeting it come last (in the order tried). The baseline is always included.
std::vector<Intervention> sweep_interventions(const Service& service, const SweepSpec& spec,
                                              const std::vector<double>& windows_us);

/// Cycles to microseconds at the service's clock.
double to_us(const Service& service, uint64_t cycles);

}  // namespace bud::load
