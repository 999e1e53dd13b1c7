// The precision bisect (docs/bisect.md, "Precision regressions"): two precision assignments of
// one workload, a good one whose layers meet the SNR guardrail and a bad one where some layer
// falls below it. Bisects over the layers whose precision differs to the one change that breaks
// the guardrail, and names the first layer (in network order) whose quality falls below it: the
// first persistent stage of a precision regression, mechanism class `precision`.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "debugger/json/Json.h"
#include "emu/isa/Isa.h"
#include "emu/workload/Workload.h"

namespace bud::debugger {

/// One layer of the workload under both assignments.
struct PrecisionRow {
  std::string layer;
  bool host = false;
  workload::Precision good = workload::Precision::Int8, bad = workload::Precision::Int8;
  /// The output's element type (its readers' precision, resolve_precisions): an int8 layer read
  /// as bf16 writes bf16, and an error is the rounding of a layer's output to this type.
  workload::Precision good_out = workload::Precision::Int8, bad_out = workload::Precision::Int8;
  double good_snr_db = 0, bad_snr_db = 0;
};

struct PrecisionBisect {
  bool regressed = false;  ///< some layer meets the guardrail in good and not in bad
  double min_snr_db = 0;
  std::vector<PrecisionRow> layers;  ///< in layer order
  std::vector<std::string> changed;  ///< NPU layers whose precision differs, in layer order
  /// The change that breaks the guardrail: the good assignment with every change before it
  /// meets it, with it too does not (set when regressed).
  std::optional<std::string> culprit;
  /// The first layer below the guardrail in bad and not in good (set when regressed).
  std::optional<std::string> first_layer;

  /// The network's output (the last layer) is below the guardrail in bad too: the degradation
  /// reaches the output and is not masked downstream.
  bool persistent = false;
  /// The minimal assignment that reproduces it: a precision file (docs/workloads.md) setting
  /// every NPU layer as the good assignment plus the culprit's change (after the readers'
  /// union), or, when that alone meets the guardrail (`reproducer_alone` false), plus every
  /// change up to the culprit. Empty when not regressed.
  std::string reproducer;
  bool reproducer_alone = true;
  /// The first layer below the guardrail under the reproducer, and its SNR there.
  std::string reproducer_layer;
  double reproducer_snr_db = 0;
  /// reproducer_layer's output type when the reproducer changed it: the culprit reads that
  /// layer's output, and a tensor's type is its readers' precision.
  std::optional<workload::Precision> reproducer_layer_out;
  int evaluations = 0;  ///< networks evaluated (the two ends and the bisection's steps)

  std::string text() const;
  json::Json to_json() const;
};

/// "12.3 dB".
std::string snr_text(double db);

/// Bisects from `good` to `bad`: the same workload (layers, shapes, data) with different
/// precisions (resolve_precisions applied), evaluated on `array` against the fp32 network.
/// Error (empty optional with `error` set) when the two are not one workload.
std::optional<PrecisionBisect> bisect_precision(const workload::Workload& good,
                                                const workload::Workload& bad,
                                                const isa::ArrayConfig& array, double min_snr_db,
                                                std::string& error);

}  // namespace bud::debugger
