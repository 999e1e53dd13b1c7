// Numerical quality of a workload's NPU run (docs/workloads.md, "Quality and the auto policy"):
// the fp32 network of the same numbers, each layer's output error against it, and the `auto`
// precision policy that falls back to BF16 where int8 breaks the guardrail.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "emu/isa/Isa.h"
#include "emu/workload/Reference.h"
#include "emu/workload/Workload.h"

namespace bud::workload {

/// Default SNR guardrail of the `auto` policy, dB (workload.proto `min_snr_db` overrides it).
inline constexpr double kDefaultMinSnrDb = 30;

/// Every layer's output (logical elements, NHWC) of the workload's fp32 network, in the units
/// the NPU computes in: the same input, weights and biases taken as exact values, each layer's
/// factor mult x 2^-shift applied without rounding or saturation, ReLU as max(0, x), host
/// layers on the dequantised values divided by their output scale. Evaluated in double.
std::vector<std::vector<double>> float_network(const Workload& w);

/// One layer's output against the fp32 network.
struct LayerQuality {
  std::string layer;
  Precision precision = Precision::Int8;  ///< the layer's (host layers: int8)
  bool host = false;
  uint64_t elements = 0;
  double snr_db = 0;  ///< 10 log10(sum ref^2 / sum (out - ref)^2); 99 when exact
  double max_abs_error = 0, mean_abs_error = 0;
};

/// Per layer, in layer order: the reference run's outputs (int8 or bf16, in the same units)
/// against the fp32 network's. Errors accumulate along the network, as they do on the NPU.
std::vector<LayerQuality> network_quality(const Workload& w, const ReferenceResult& ref,
                                          const std::vector<std::vector<double>>& fp32);

/// Frozen inputs the output agreement is measured over.
inline constexpr int kAgreementInputs = 8;

/// The network output's agreement with the fp32 network: per row of the last layer's output
/// (its last axis, e.g. the classes of a classifier), whether the NPU's argmax is the fp32
/// argmax (top-1) and whether the fp32 argmax is among the NPU's 5 largest (top-5).
struct Agreement {
  int inputs = 0;
  uint64_t rows = 0;
  double top1 = 0, top5 = 0;  ///< fractions of rows
};
/// The agreement over `inputs` frozen generated inputs: input k is drawn uniformly over the
/// range of the workload's own input (generate_input) from a seed derived from the workload's
/// seed and k, with the same weights; each is run through the reference at the workload's
/// precisions (on `array`) and through the fp32 network. Deterministic.
Agreement output_agreement(const Workload& w, const isa::ArrayConfig& array,
                           int inputs = kAgreementInputs);

/// A layer the `auto` policy moved to BF16, and why.
struct Fallback {
  std::string layer;
  double int8_snr_db = 0;  ///< its SNR when it (and everything after it) ran int8
  double min_snr_db = 0;   ///< the guardrail it broke
  /// The NPU layers that read its output, moved to BF16 with it: an int8 layer's error is the
  /// rounding of its output to int8, so only readers that read it as bf16 remove it.
  std::vector<std::string> readers;
};

/// The `auto` policy: every NPU layer int8, then, in layer order, the first int8 layer whose SNR
/// is below `min_snr_db` falls back to BF16 with the NPU layers that read its output (and the
/// layers resolve_precisions joins to them),
/// the network is evaluated again, and so on until no int8 layer is below the guardrail. A
/// host layer below it cannot fall back and is left as it is (its quality stays in the report).
/// Deterministic; returns the fallbacks in the order taken.
std::vector<Fallback> apply_auto_precision(Workload& w, const isa::ArrayConfig& array,
                                           double min_snr_db);

}  // namespace bud::workload
