// ONNX import: reads an ONNX model with the maintained ONNX protobuf classes (libonnx-dev),
// maps its graph to bud workload layers (NHWC int8), quantises float models from seeded
// calibration data, and writes the result as a workload (.textpb) with explicit data. Operators
// the NPU cannot run become host layers. See docs/import.md for the op table, the quantisation
// method and the host-fallback cost model.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "emu/isa/Isa.h"
#include "emu/workload/Result.h"

namespace bud::onnx_import {

/// Seed of the calibration inputs: frozen, so an import is reproducible and its scales do not
/// depend on the run's data seed.
inline constexpr uint64_t kCalibrationSeed = 0xB0D5EED;
/// Calibration inputs drawn from kCalibrationSeed.
inline constexpr int kCalibrationSamples = 8;

/// What to import and how.
struct ImportOptions {
  uint64_t seed = 1;  ///< seed of the run input (uniform floats in [-1, 1]), not of calibration
  /// The precision the quality figures are measured at (docs/workloads.md, "Precision"): empty
  /// for the imported int8 network, else "int8", "bf16", "auto" or a precision file's text
  /// (`precision_origin` names it in messages). The emitted workload is the same either way.
  std::string precision;
  std::string precision_origin = "precision";
  /// The array the figures are computed for (a BF16 result depends on it).
  isa::ArrayConfig array = isa::default_array();
  /// Quantise a float model's conv and dense weights per output channel (one weight scale and
  /// one POST factor per channel; docs/import.md "Quantisation") instead of per tensor. A
  /// QLinearConv with per-channel scales is imported per channel either way.
  bool per_channel = false;
  /// Run activation x activation MatMuls (attention) on the host, as the fallback, instead of
  /// as NPU matmul layers (docs/import.md, "Attention"): the baseline of the comparison.
  bool host_attention = false;
};

/// Quantisation error of the imported int8 network against the fp32 network computed from the
/// ONNX weights, on the run input, over the graph output.
struct QuantError {
  uint64_t elements = 0;
  double rms_error = 0;      ///< sqrt(mean((dequantised - fp32)^2))
  double max_abs_error = 0;  ///< max |dequantised - fp32|
  double rms_reference = 0;  ///< sqrt(mean(fp32^2))
  /// rms_error / rms_reference (0 when the reference is all zero).
  double relative() const { return rms_reference > 0 ? rms_error / rms_reference : 0; }
};

/// Quality of one layer's output against the fp32 network (its ONNX node computed in double
/// from the float weights), on the run input: the layer's values (int8, or bf16 at
/// ImportOptions::precision) dequantised with the layer's scale.
struct LayerQuality {
  std::string layer;
  uint64_t elements = 0;
  double snr_db = 0;     ///< 10 log10(sum fp32^2 / sum (dequantised - fp32)^2); 99 if exact
  double max_abs_error = 0;
  double mean_abs_error = 0;
};

/// Agreement of the network output with the fp32 network over kQualityInputs generated inputs
/// (seeds from kQualitySeed): per output row (the last axis), whether the int8 argmax is the
/// fp32 argmax (top-1) and whether the fp32 argmax is among the int8 (or bf16) top 5 (top-5).
struct Agreement {
  int inputs = 0;
  uint64_t rows = 0;
  double top1 = 0, top5 = 0;  ///< fractions of rows
};
/// The frozen inputs the agreement is measured on.
inline constexpr int kQualityInputs = 16;
inline constexpr uint64_t kQualitySeed = 0x51A11700;

/// A successful import.
struct ImportResult {
  std::string text;                      ///< the workload, protobuf text format (workload.proto)
  int onnx_nodes = 0;                    ///< nodes in the ONNX graph
  int layers = 0;                        ///< workload layers (NPU and host)
  std::vector<std::string> host_layers;  ///< "name (op)" of every host layer
  bool float_model = true;               ///< quantised by bud (false: scales came from the model)
  std::string output_layer;              ///< the layer holding the graph output
  double output_scale = 0;               ///< its quantisation scale
  QuantError error;
  /// The run input and the fp32 network's output on it (the ONNX shapes in NHWC order; a matrix
  /// row by row), for checking the import against another implementation of the model.
  std::vector<double> fp32_input, fp32_output;
  std::vector<LayerQuality> quality;  ///< every layer, in workload order
  Agreement agreement;
  /// What `quality`, `agreement` and `error` were measured at: "int8" (as imported) or
  /// ImportOptions::precision ("auto" and files: every layer's resolved precision, in order).
  std::vector<std::pair<std::string, std::string>> precisions;
};

/// Imports an ONNX model file. Errors are one line naming the file and, for graph problems, the
/// node: "FILE: node 'conv3' (#4, Conv): pads must be symmetric (got [1, 1, 0, 0])". Never throws.
workload::Result<ImportResult> import_file(const std::string& path,
                                           const ImportOptions& options = {});
/// The same for a serialised ModelProto already in memory; `file` is used in messages.
workload::Result<ImportResult> import_bytes(std::string_view bytes, const std::string& file,
                                            const ImportOptions& options = {});

/// True if `path` names an ONNX model (by its ".onnx" extension).
bool is_onnx_path(std::string_view path);

}  // namespace bud::onnx_import
