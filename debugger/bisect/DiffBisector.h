// `bud bisect --good G --bad B`: where two recorded runs part ways. For functional differences:
// the exact first cycle at which the whole-state digests differ for good (located by the
// recorded digest streams, then cycle by cycle from the checkpoints before it) and the state
// elements (signals, memory addresses) that differ first. For performance regressions (same
// results, more cycles): the first window whose counter deltas differ beyond a tolerance, and
// the mechanism class (thermal, memory, compute-hazard, compute, precision, scheduling) that
// explains it, decided by one table-driven rule (classify_mechanism).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "debugger/bisect/PrecisionBisector.h"
#include "debugger/json/Json.h"
#include "emu/run/RunJob.h"

namespace bud::debugger {

struct DiffOptions {
  double tolerance = 0.05;  ///< relative change of a window's counter deltas that counts
  bool allow_revision_mismatch = false;
  /// Precision bisect: the SNR guardrail in dB (unset: the workload's, docs/workloads.md).
  std::optional<double> min_snr_db;
};

/// What explains a performance difference (docs/bisect.md, "Mechanism class"). The order is
/// the tie-break order of the cause classes; `Scheduling` (an engine waiting for another) only
/// wins when no cause grew, `None` when nothing grew at all.
enum class Mechanism : uint8_t { Thermal, Memory, ComputeHazard, Compute, Precision, Scheduling, None };
inline constexpr int kNumMechanisms = 7;
/// "thermal", "memory", "compute-hazard", "compute", "precision", "scheduling", "none".
const char* mechanism_name(Mechanism m);

/// The mechanism rule applied to one window: `growth[c]` is the delta of counter `counters[c]`
/// (a design's describe().counters) in the bad run minus the good run's over the same cycles,
/// `window_cycles` the window's length. The rule is keyed by counter name (the NPU's counters,
/// docs/counters.md): it applies to whichever of those counters the design has.
struct MechanismCall {
  Mechanism mechanism = Mechanism::None;
  std::array<double, kNumMechanisms> score{};  ///< cycles (or events) each class grew by
  std::string evidence;                        ///< one line: the winning class and its counters
};
MechanismCall classify_mechanism(const std::vector<std::string>& counters,
                                 const std::vector<double>& growth, double window_cycles,
                                 double tolerance);

struct StateDifference {
  std::string element;  ///< "load.state", "dram 0x10040", "acc[12] byte 3"
  std::string good, bad;
};

/// What `bud bisect --good G --bad B` concluded.
enum class DiffVerdict : uint8_t {
  Same,         ///< identical runs
  Diverged,     ///< the state differs persistently
  Performance,  ///< same results, different timing
  Quality,      ///< one workload, two precision assignments: a layer breaks the guardrail
  Error,        ///< a packet is unusable or the two do not compare
};
/// "same", "diverged", "performance", "quality", "error" (the `verdict` of `--json`).
const char* diff_verdict_name(DiffVerdict v);

struct DiffReport {
  DiffVerdict verdict = DiffVerdict::Error;
  std::string message;
  std::optional<uint64_t> first_divergence_cycle;
  bool persistent = false;
  std::vector<StateDifference> differences;  ///< first state elements that differ
  // performance
  std::optional<uint64_t> window_start, window_end;
  std::optional<Mechanism> mechanism;        ///< set for a performance verdict
  std::vector<std::string> evidence;         ///< counter deltas that point there
  uint64_t good_cycles = 0, bad_cycles = 0;
  uint64_t resimulated_cycles = 0;
  /// Two precision assignments of one workload (docs/bisect.md, "Precision regressions"): the
  /// bisect over the layers whose precision differs. Verdict Quality when it regressed, Same
  /// when every layer meets the guardrail it met.
  std::optional<PrecisionBisect> precision;

  std::string text() const;
  json::Json to_json() const;
};

/// Two packets. When they record one workload (text, data seed, design) under two precision
/// assignments, this is the precision bisect; otherwise the functional or performance one.
DiffReport bisect_pair(const std::string& good_path, const std::string& bad_path,
                       const DiffOptions& options);

/// The precision bisect without packets: the workload `base` names (built-in, file or ONNX
/// model, with its seed, tile caps and design) under the assignments `good` and `bad` (int8,
/// bf16, auto or a precision file, as `--precision` takes them).
DiffReport bisect_assignments(const run::RunOptions& base, const std::string& good,
                              const std::string& bad, const DiffOptions& options);

}  // namespace bud::debugger
