// The decision of `bud matrix BASE NEW` (docs/matrix.md): which cells of the correctness, quality
// and performance matrices moved, beyond a noise band measured over seeds, and what to do about
// the change (ship, bounded rollout, rollback, escalate), with the owner role of every moved
// performance cell. Pure functions of the cells: the unit tests build them by hand.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "profile/Profile.h"

namespace bud::matrix {

/// A performance figure of one workload.
enum class Metric : uint8_t {
  Cycles,            ///< NPU + host cycles of one inference (lower is better)
  PeakFraction,      ///< the model's MACs / (cycles x the array's MACs per cycle)
  EnergyUj,          ///< one inference, microjoules (lower is better)
  RequestsPerJoule,  ///< perf/W at the highest load meeting the p99 SLA (0: misses it)
  Count,
};
inline constexpr int kNumMetrics = static_cast<int>(Metric::Count);
/// "cycles", "peak_fraction", "energy_uj", "requests_per_joule".
const char* metric_name(Metric m);
bool higher_is_better(Metric m);

/// The owner roles of the review memo template (docs/matrix.md, "Owners").
enum class Owner : uint8_t { Performance, RuntimeScheduler, PowerModel, Capacity };
/// "performance", "runtime scheduler", "power model", "capacity".
const char* owner_name(Owner o);
/// Who owns a moved `metric` whose profiles' comparison names `mechanism`: energy is the power
/// model's, requests/J at the SLA capacity planning's; cycles and % of peak follow the mechanism
/// (compute, memory, precision: performance; scheduling, host orchestration: runtime scheduler;
/// throttled: power model).
Owner owner_for(Metric metric, profile::TopClass mechanism);

enum class Movement : uint8_t { Same, Better, Worse };
const char* movement_name(Movement m);  ///< "same", "better", "worse"

/// One performance figure of one workload under both configurations, one sample per seed.
struct PerfCell {
  std::string workload;
  Metric metric = Metric::Cycles;
  std::vector<double> base, next;  ///< per memory seed, in seed order
  double base_mean = 0, next_mean = 0;
  double band = 0;       ///< max - min over BASE's seeds (the measured noise), metric units
  double threshold = 0;  ///< max(band, floor x |base_mean|): a move must exceed it
  double change = 0;     ///< (next_mean - base_mean) / |base_mean| (0 when base_mean is 0)
  Movement movement = Movement::Same;
  Owner owner = Owner::Performance;
  std::string mechanism;  ///< the top-down class the profiles' comparison names ("" : none)
};
/// Fills the means, the band, the threshold, the change and the movement of `c` from its
/// samples. `floor_fraction` is the smallest relative move that counts (0.01 = 1%).
void classify(PerfCell& c, double floor_fraction);

/// A workload's bit-exact check (every seed) under both configurations.
struct CorrectnessCell {
  std::string workload;
  std::string precision;  ///< "" : the workload's own (a performance run)
  bool base_passed = false, next_passed = false;
  std::string failure;  ///< the first failure (NEW's, else BASE's)
  bool regressed() const { return base_passed && !next_passed; }
};

/// One packet of the replay corpus: its recorded run (workload, seeds, memory configuration,
/// faults) re-run under each configuration's options, checked against the golden model.
struct CorpusCell {
  std::string packet;             ///< the file's name in the corpus directory
  std::string workload;           ///< what the packet ran (its recorded origin)
  bool recorded_failure = false;  ///< the packet recorded a symptom (an escaped failure)
  bool base_passed = false, next_passed = false;
  std::string base_failure, next_failure;  ///< each configuration's first failure
  /// Why the packet could not be re-run under a configuration ("" : it was): unreadable, prompt
  /// interventions (their effect under another configuration is not defined), or a run that
  /// cannot be prepared there. Such a cell is an escalation.
  std::string unusable;
  bool regressed() const { return unusable.empty() && base_passed && !next_passed; }
  bool fixed() const { return unusable.empty() && !base_passed && next_passed; }
};

/// An ONNX model's output quality against its fp32 network at one precision.
struct QualityFigures {
  double snr_db = 0;  ///< the output's
  double top1 = 0;    ///< agreement with the fp32 network, fraction of rows
};
struct QualityCell {
  std::string model;
  std::string precision;  ///< "int8", "bf16", or "configured" (each configuration's own)
  QualityFigures base, next;
  bool snr_dropped = false;   ///< next.snr_db < base.snr_db - the SNR tolerance
  bool top1_dropped = false;  ///< next.top1 < base.top1 - the top-1 tolerance
};

/// The thresholds of the decision (docs/matrix.md, "Decision rule").
struct DecisionRule {
  double floor_fraction = 0.01;  ///< a performance move under 1% never counts, whatever the band
  double rollout_limit = 0.05;   ///< mixed moves: worst regression <= 5% is a bounded rollout
  double snr_tolerance_db = 0.5;
  double top1_tolerance = 0;
};
void classify(QualityCell& c, const DecisionRule& rule);

/// Ordered by severity: the decision is the most severe any rule reaches.
enum class Verdict : uint8_t { Ship, BoundedRollout, Escalate, Rollback };
const char* verdict_name(Verdict v);  ///< "ship", "bounded rollout", "escalate", "rollback"

struct Decision {
  Verdict verdict = Verdict::Ship;
  /// Every rule that applied, most severe first: "rollback: mlp: bit-exact check fails on NEW".
  std::vector<std::string> reasons;
  uint32_t better = 0, worse = 0;  ///< performance cells moved beyond noise
  double worst_regression = 0;     ///< the largest relative move of a worse cell (0.12 = 12%)
};

/// The rule of docs/matrix.md over classified cells: a correctness regression is a rollback, a
/// cell failing on BASE too an escalation; a quality cell whose top-1 dropped a rollback, one
/// whose SNR alone dropped an escalation; performance: every moved cell better (or none moved)
/// ships, every one worse rolls back, mixed is a bounded rollout when the worst regression is
/// within rule.rollout_limit and an escalation beyond it.
/// Corpus cells: a packet clean on BASE that fails on NEW is a rollback, one failing differently
/// on the two (another first failure) or not re-runnable an escalation; one failing on BASE and
/// clean on NEW is named (the change fixes or masks it) and one failing the same way on both is
/// the escaped failure still open, neither changing the verdict.
Decision decide(const std::vector<CorrectnessCell>& correctness,
                const std::vector<QualityCell>& quality, const std::vector<PerfCell>& performance,
                const DecisionRule& rule, const std::vector<CorpusCell>& corpus = {});

}  // namespace bud::matrix
