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

/// Zero padding of a convolution: rows above and below, columns left and right of the input
/// (ONNX `pads` order [top, left, bottom, right]; TF-style SAME padding is asymmetric).
struct Pads {
  int64_t top = 0, left = 0, bottom = 0, right = 0;
  static Pads all(int64_t p) { return {p, p, p, p}; }
  bool symmetric() const { return top == left && top == bottom && top == right; }
  int64_t max() const;
  /// "1" (symmetric) or "[0, 0, 1, 1]".
  std::string to_string() const;
  bool operator==(const Pads&) const = default;
};

enum class LayerKind : uint8_t { Dense, Conv2d, Add, Relu, Host, MatMul };
/// "dense", "conv2d", "add", "relu", "host", "matmul".
const char* layer_kind_name(LayerKind k);

/// A precision of the NPU (docs/isa.md): a layer's GEMM (int8 operands into int32, or BF16
/// operands into fp32) and a tensor's element type (int8 or bf16).
enum class Precision : uint8_t { Int8, Bf16 };
/// "int8", "bf16".
const char* precision_name(Precision p);
/// Parses "int8" / "bf16" (any case).
std::optional<Precision> parse_precision(std::string_view s);

/// POST requantisation parameters (docs/isa.md, POST).
struct Quant {
  int16_t mult = 1;
  uint8_t shift = 0;
};

/// An operator run on the host between NPU layers (workload.proto HostSpec, docs/import.md).
enum class HostOp : uint8_t { Softmax, LayerNorm, Gelu, MaxPool, MatMul, Sigmoid, Concat };
/// "softmax", "layer_norm", "gelu", "max_pool", "matmul", "sigmoid", "concat".
const char* host_op_name(HostOp op);
/// The op reads a second operand (Layer::other): matmul, concat.
bool host_op_reads_other(HostOp op);

/// Parameters of a host layer. Values are dequantised with in_scale (other_scale for the MATMUL
/// and CONCAT
/// operand) and requantised with out_scale.
struct HostParams {
  HostOp op = HostOp::Softmax;
  float in_scale = 1, out_scale = 1, other_scale = 1;
  bool transpose_other = false;
  std::vector<float> gamma, beta;
  float epsilon = 1e-5f;
  int64_t kh = 1, kw = 1, stride = 1, pad = 0;
};

struct LayerData;

/// Index used in Layer::other for the workload input and for a fresh seeded tensor.
inline constexpr int kInputTensor = -1;
inline constexpr int kFreshTensor = -2;

/// One validated layer. Its primary input is the previous layer's output (the workload input for
/// layer 0).
struct Layer {
  std::string name;
  LayerKind kind = LayerKind::Dense;
  // dense: y[m x n] = x[m x k] . W[k x n] + b (transpose_output: y^T, n pixels of m channels);
  // matmul: y[m x n] = x[m x k] . other[n x k]^T
  int64_t m = 0, k = 0, n = 0;
  bool transpose_output = false;
  // conv2d (groups > 1: grouped, groups == c_in == c_out: depthwise)
  int64_t c_out = 0, kh = 0, kw = 0, stride = 1, groups = 1;
  Pads pads;
  /// The primary input: an earlier layer index or kInputTensor.
  int input = kInputTensor;
  // add, matmul, host matmul: the second operand (an earlier layer index, kInputTensor or
  // kFreshTensor)
  int other = kFreshTensor;
  HostParams host;  ///< kind Host
  /// Explicit weights/bias (imported models); null: generated from the seed.
  std::shared_ptr<const LayerData> data;
  Quant quant;
  /// Per-channel requantisation (dense and conv2d): one factor per output channel, replacing
  /// `quant`; empty: per tensor.
  std::vector<Quant> channel_quant;
  /// The factor of output channel `c` (`quant` for a padding lane past the channels).
  const Quant& quant_of(int64_t c) const {
    return c >= 0 && static_cast<size_t>(c) < channel_quant.size()
               ? channel_quant[static_cast<size_t>(c)]
               : quant;
  }
  bool per_channel() const { return !channel_quant.empty(); }
  bool relu = false;  ///< clamp_lo = 0 in POST (always true for kind Relu)
  /// The GEMM's precision (NPU layers; docs/workloads.md "Precision"). The layer reads its
  /// inputs in this precision.
  Precision precision = Precision::Int8;
  /// The element type of the layer's output tensor: the precision its consumers read (set by
  /// resolve_precisions; POST converts when it differs from `precision`).
  Precision out_type = Precision::Int8;
  /// Why resolve_precisions raised `precision` to BF16 (empty: it was asked for).
  std::string promoted_by;
  Shape in_shape, out_shape;
  std::string where;  ///< "FILE:LINE:COL" of the layer in its source, for messages
  /// Reduction length of the layer's GEMM view in logical elements (dense and matmul k, conv
  /// kh*kw*c_in/groups, add/relu/host: channels).
  int64_t reduction() const;
  /// A GEMM with a reduction over data (dense, conv2d, matmul), as opposed to the identity
  /// GEMMs of add and relu or a host layer.
  bool is_gemm() const {
    return kind == LayerKind::Dense || kind == LayerKind::Conv2d || kind == LayerKind::MatMul;
  }
  /// Its GEMM's weights are another activation, in weight-block layout (matmul: `other`; a
  /// transposed dense: its input).
  bool reads_blocks() const {
    return kind == LayerKind::MatMul || (kind == LayerKind::Dense && transpose_output);
  }
};

/// A loaded, validated workload. Data is not stored: it is generated from `seed`
/// (generate_input / generate_layer_data) whenever needed.
struct ReferenceResult;  // emu/workload/Reference.h

/// Caps on the lowering's tiles (workload.proto `max_tile_rows`, `max_tile_blocks`;
/// docs/workloads.md "Tiles"). 0 leaves that dimension as large as the half scratchpads allow,
/// so the default is the plan without caps.
struct TileLimits {
  uint32_t max_rows = 0;    ///< GEMM rows (output pixels) per tile, every NPU layer
  uint32_t max_blocks = 0;  ///< output blocks (B channels) per tile, dense and conv2d
  bool operator==(const TileLimits&) const = default;
};

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
  TileLimits tiles;  ///< caps on the tile plan (none by default)
  std::vector<Layer> layers;
  /// Passes over the layer list (workload.proto `repeat`; >= 1). Outputs are those of one pass.
  uint32_t repeat = 1;
  /// Explicit input (imported models); empty: generated from the seed.
  std::vector<int8_t> input_data;
  /// SNR guardrail of the `auto` precision policy in dB (workload.proto `min_snr_db`; unset:
  /// Quality.h kDefaultMinSnrDb).
  std::optional<double> min_snr_db;
  /// Element type of the workload input in DRAM (resolve_precisions: what its readers read).
  Precision input_type = Precision::Int8;
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
  /// Replaces the file's `max_tile_rows` / `max_tile_blocks` where non-zero.
  TileLimits tiles;
};

/// Largest `repeat` a workload may ask for.
inline constexpr uint32_t kMaxRepeat = 1'000'000;

/// Fixes the element types after a precision assignment (docs/workloads.md, "Precision"): layers
/// that read the same tensor (an add reads two) must read it in one precision, so every group of
/// layers joined that way runs BF16 if any of its members does (the raised ones get
/// `promoted_by`); each tensor's type is then its readers' precision (a tensor read only by the
/// host or by nobody keeps its producer's precision; the input defaults to int8). Resets the
/// cached reference when the workload has any BF16 layer. Host layers have no precision.
void resolve_precisions(Workload& w);
/// Applies a precision assignment (docs/workloads.md, "Precision"): "int8" or "bf16" sets every
/// NPU layer; anything else is the text of a precision file, one `LAYER PRECISION` per line
/// (`*` for every NPU layer, later lines win, `#` comments), `origin` naming it in messages
/// ("ORIGIN:LINE:COL: ..."). Then resolve_precisions. Error for an unknown layer or precision,
/// or a host layer.
std::optional<Error> assign_precision(Workload& w, std::string_view spec, std::string_view origin);
/// Whether any layer runs BF16.
bool has_bf16(const Workload& w);

/// Parses and validates a workload from text. `file` is only used in messages. Errors are one
/// line "FILE:LINE:COL: message" (1-based); never throws.
Result<Workload> parse_workload(std::string_view text, std::string_view file,
                                const LoadOptions& options = {});
/// Reads and parses a .textpb file.
Result<Workload> load_workload_file(const std::string& path, const LoadOptions& options = {});
/// A workload text with the non-zero caps of `tiles` set as its `max_tile_rows` /
/// `max_tile_blocks` (replacing the file's), so that the text alone lowers as the run did (replay
/// packets embed it). Unchanged without caps; appended when the text sets neither field, printed
/// again from its parse otherwise. Error (naming `file`) when the text does not parse.
Result<std::string> with_tile_limits(const std::string& text, const TileLimits& tiles,
                                     std::string_view file);

/// Generated data of one layer. Weights are K x N row-major int8 (K index for conv2d is
/// (ky * kw + kx) * c_in + ci); bias has N int32; `other` is the fresh add operand (out_shape
/// elements, NHWC) when Layer::other == kFreshTensor.
struct LayerData {
  std::vector<int8_t> weights;
  std::vector<int32_t> bias;
  std::vector<int8_t> other;
};
/// The workload input (input.elements() int8, NHWC): the explicit input_data, else generated
/// from the seed.
std::vector<int8_t> generate_input(const Workload& w);
/// Data of layer `index`: its explicit data, else generated from the seed (independent of other
/// layers' data).
LayerData generate_layer_data(const Workload& w, int index);

}  // namespace bud::workload
