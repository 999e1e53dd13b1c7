// A workload: a small neural-network graph (dense, conv2d, add, relu layers) with seeded data,
// loaded from protobuf text format (workload.proto) and validated so that lowering cannot fail
// on it. See docs/workloads.md.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "emu/workload/Result.h"

namespace bud::workload {

/// Default DRAM size in bytes.
inline constexpr uint64_t kDefaultDramBytes = 16ull << 20;

/// Shape of an int8 activation tensor. Every tensor is H x W x C (NHWC, batch 1); a matrix
/// [M, K] is H = M, W = 1, C = K with rank 2 (only affects how indices are printed).
struct Shape {
  int64_t h = 1, w = 1, c = 1;
  int rank = 3;
  /// Pixels (rows of the im2col / GEMM view).
  int64_t pixels() const { return h * w; }
  int64_t elements() const { return h * w * c; }
  bool operator==(const Shape& o) const { return h == o.h && w == o.w && c == o.c; }
  /// "16x64" (rank 2) or "8x8x16".
  std::string to_string() const;
};

enum class LayerKind : uint8_t { Dense, Conv2d, Add, Relu };
/// "dense", "conv2d", "add", "relu".
const char* layer_kind_name(LayerKind k);

/// POST requantisation parameters (docs/isa.md, POST).
struct Quant {
  int16_t mult = 1;
  uint8_t shift = 0;
};

/// Index used in Layer::other for the workload input and for a fresh seeded tensor.
inline constexpr int kInputTensor = -1;
inline constexpr int kFreshTensor = -2;

/// One validated layer. Its primary input is the previous layer's output (the workload input for
/// layer 0).
struct Layer {
  std::string name;
  LayerKind kind = LayerKind::Dense;
  // dense: y[m x n] = x[m x k] . W[k x n] + b
  int64_t m = 0, k = 0, n = 0;
  // conv2d
  int64_t c_out = 0, kh = 0, kw = 0, stride = 1, pad = 0;
  // add: the second operand (an earlier layer index, kInputTensor or kFreshTensor)
  int other = kFreshTensor;
  Quant quant;
  bool relu = false;  ///< clamp_lo = 0 in POST (always true for kind Relu)
  Shape in_shape, out_shape;
  std::string where;  ///< "FILE:LINE:COL" of the layer in its source, for messages
  /// Reduction length of the layer's GEMM view in logical elements (dense k, conv kh*kw*c_in,
  /// add/relu: channels).
  int64_t reduction() const;
};

/// A loaded, validated workload. Data is not stored: it is generated from `seed`
/// (generate_input / generate_layer_data) whenever needed.
struct ReferenceResult;  // emu/workload/Reference.h

struct Workload {
  std::string name;
  std::string description;
  std::string source;       ///< file name used in messages
  std::string input_where;  ///< "FILE:LINE:COL" of input_shape, for messages
  uint64_t seed = 0;
  Shape input;
  uint64_t dram_bytes = kDefaultDramBytes;
  /// Lowering alternates two scratchpad halves per tile (false: `single_buffer: true`, one half
  /// for every tile, no overlap across tiles).
  bool double_buffer = true;
  std::vector<Layer> layers;
  /// The direct reference's run of this workload (emu/workload/Reference.h), computed by the
  /// load's quantisation calibration, which needs every layer's accumulators anyway: checks use
  /// it instead of computing every layer a second time. Null for a hand-built Workload;
  /// run_reference() recomputes it either way (a test compares the two on every built-in).
  std::shared_ptr<const ReferenceResult> reference;

  /// Index of the layer with this name.
  std::optional<int> find_layer(std::string_view name) const;
};

/// Options for loading.
struct LoadOptions {
  /// Replaces the file's `seed` (default quantisation is calibrated with the final seed).
  std::optional<uint64_t> seed;
};

/// Parses and validates a workload from text. `file` is only used in messages. Errors are one
/// line "FILE:LINE:COL: message" (1-based); never throws.
Result<Workload> parse_workload(std::string_view text, std::string_view file,
                                const LoadOptions& options = {});
/// Reads and parses a .textpb file.
Result<Workload> load_workload_file(const std::string& path, const LoadOptions& options = {});

/// Generated data of one layer. Weights are K x N row-major int8 (K index for conv2d is
/// (ky * kw + kx) * c_in + ci); bias has N int32; `other` is the fresh add operand (out_shape
/// elements, NHWC) when Layer::other == kFreshTensor.
struct LayerData {
  std::vector<int8_t> weights;
  std::vector<int32_t> bias;
  std::vector<int8_t> other;
};
/// The workload input (input.elements() int8, NHWC), generated from the seed.
std::vector<int8_t> generate_input(const Workload& w);
/// Data of layer `index`, generated from the seed (independent of other layers' data).
LayerData generate_layer_data(const Workload& w, int index);

}  // namespace bud::workload
