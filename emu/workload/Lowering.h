// Lowering: turns a validated workload into an NPU program (commands + initial DRAM image +
// tensor map), following docs/workloads.md: weight-stationary tiles over (N outer, M inner),
// double-buffered scratchpads, VTA-style dependency tokens, im2col convolution through 2-D
// strided LOADs, add/relu through identity GEMMs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "emu/isa/Isa.h"
#include "emu/workload/Result.h"
#include "emu/workload/Workload.h"

namespace bud::workload {

/// DRAM address map (bytes).
inline constexpr uint32_t kRingBase = 0;         ///< command ring
inline constexpr uint32_t kRingBytes = 0x10000;  ///< [0, 0x10000) reserved for the ring
inline constexpr uint32_t kRingCommands = kRingBytes / isa::kCommandBytes;  ///< 2048
inline constexpr uint32_t kDataBase = 0x10000;  ///< first byte of program data
inline constexpr uint32_t kTensorAlign = 64;    ///< every tensor starts 64-byte aligned
/// Entries of each scratchpad half used by one tile (double buffering) on the default array
/// (npu8); the lowering uses half of the depths of the ArrayConfig it lowers for.
inline constexpr uint32_t kInpHalf = isa::kBuffers[0].entries / 2,
                          kWgtHalf = isa::kBuffers[1].entries / 2,
                          kAccHalf = isa::kBuffers[2].entries / 2,
                          kOutHalf = isa::kBuffers[3].entries / 2;

/// Host-fallback cost model (docs/import.md): a host layer stalls the NPU for
/// kHostSyncCycles (drain, interrupt, driver round trip) + bytes moved / kHostBytesPerCycle +
/// per-element compute, all in NPU clock cycles.
inline constexpr uint64_t kHostSyncCycles = 2000;
inline constexpr uint64_t kHostBytesPerCycle = 8;
inline constexpr uint64_t kHostSoftmaxCycles = 8, kHostLayerNormCycles = 6, kHostGeluCycles = 4;
inline constexpr uint64_t kHostMacsPerCycle = 8;  ///< host int8 MACs per NPU cycle (MATMUL)
/// Cycles charged to host orchestration for host layer `l` (kind Host).
uint64_t host_op_cycles(const Layer& l);

/// What a tensor in DRAM holds.
enum class TensorRole : uint8_t {
  Input, Weights, Bias, Operand, Identity, Activation, Scales, Blocks
};
const char* tensor_role_name(TensorRole r);

/// A tensor placed in DRAM.
/// Activations (Input, Operand, Activation) are NHWC int8 with channels zero-padded to
/// `c_padded` (a multiple of the array's lanes B: 8 on npu8) and a zero border of `border` pixels
/// on every side: element (y, x, c) is at `addr + (y + border) * row_pitch + (x + border) *
/// pixel_pitch + c`. Weights are B x B blocks (nb-major, then kb; one WGT entry each, docs/isa.md
/// WGT layout), biases int32 little-endian rows of c_padded lanes, Identity one B x B identity
/// block, Scales (per-channel layers) one lane per padded output channel in POST's scale-entry
/// form (docs/isa.md, "Per-channel POST"), Blocks a copy of an activation in WGT block layout
/// for a layer that reads it as weights (docs/workloads.md, "Attention"). A transposed dense's
/// Weights are W^T in activation layout (its INP rows) and its Bias one row per output pixel.
struct TensorInfo {
  std::string name;  ///< layer outputs are named after their layer; "input"; "<layer>.weights"...
  int layer = -1;    ///< owning layer (-1: the workload input / shared identity)
  TensorRole role = TensorRole::Activation;
  uint32_t addr = 0;   ///< first byte (border included)
  uint32_t bytes = 0;  ///< allocation size
  Shape shape;         ///< logical shape (activations; weights: h = K, w = 1, c = N)
  uint32_t c_padded = 0, border = 0, pixel_pitch = 0, row_pitch = 0;
  /// Bytes per element of an activation: 1 (int8) or 2 (bf16, little endian); pixel_pitch is
  /// c_padded x elem_bytes.
  uint32_t elem_bytes = 1;
  bool check = false;  ///< a layer output that checkers compare against the reference
  /// Byte address of activation element (y, x, c).
  uint32_t element_addr(int64_t y, int64_t x, int64_t c) const {
    return static_cast<uint32_t>(addr + (y + border) * row_pitch + (x + border) * pixel_pitch +
                                 c * elem_bytes);
  }
};

/// A block of initialised DRAM. DRAM outside every region starts as zero.
struct DramRegion {
  uint32_t addr = 0;
  std::vector<uint8_t> bytes;
};

/// Where a layer's commands are, for the debugger's `where`.
struct LayerInfo {
  std::string name;
  LayerKind kind = LayerKind::Dense;
  /// The layer's GEMM precision (BF16 GEMMs issue half the MACs per iteration: the profiler's
  /// peak for the layer follows).
  Precision precision = Precision::Int8;
  /// Inclusive command indices (SYNC after it included) in the first pass; pass p's copy is
  /// offset by p * Program::pass_commands.
  uint32_t first_cmd = 0, last_cmd = 0;
  uint32_t tiles = 0;
  uint64_t gemm_iterations = 0;  ///< (m, nb, kb) iterations = cycles of the MAC array, all passes
  uint64_t useful_macs = 0;      ///< all passes
  uint64_t host_cycles = 0;  ///< kind Host: host_op_cycles() (NPU clock cycles), all passes; else 0
};

/// A lowered program.
struct Program {
  std::string workload;
  isa::ArrayConfig array = isa::default_array();  ///< the array variant it was lowered for
  std::vector<isa::Command> commands;  ///< cmd_id == index; ends with END (code 0)
  std::vector<DramRegion> dram_init;   ///< program data (the ring is not included)
  std::vector<TensorInfo> tensors;
  std::vector<LayerInfo> layers;
  uint64_t dram_bytes = kDefaultDramBytes;  ///< DRAM size the program was placed for
  uint32_t ring_base = kRingBase;
  uint32_t data_end = kDataBase;  ///< one past the last byte used by any tensor
  uint64_t gemm_iterations = 0;
  uint64_t useful_macs = 0;
  /// The layer list runs `passes` times (Workload::repeat); each pass is `pass_commands`
  /// commands, the same ones but for cmd_id and the last pass's END.
  uint32_t passes = 1;
  uint32_t pass_commands = 0;
  uint64_t host_cycles = 0;  ///< sum of the host layers' host_op_cycles(), all passes

  const TensorInfo* find_tensor(std::string_view name) const;
  /// Index of the layer that command `cmd` belongs to (in any pass).
  std::optional<int> layer_of_command(uint32_t cmd) const;
};

/// How one layer is tiled. Every tile holds `rows` GEMM rows (pixels) of `nb_tile` output
/// blocks with the full reduction (`kb` blocks); the last M tile may be shorter.
struct TilePlan {
  int64_t pixels = 0;   ///< rows of the layer's GEMM view (output pixels)
  int64_t kb = 0;       ///< reduction blocks per row (add/relu: B-channel blocks per pixel)
  int64_t nb = 0;       ///< output blocks per row
  int64_t rows = 0;     ///< pixels per tile
  int64_t nb_tile = 0;  ///< output blocks per tile
  int64_t m_tiles = 0, n_tiles = 0;
  /// Dense and conv2d whose reduction does not fit half the WGT scratchpad in one piece: each
  /// tile's GEMM runs in k_chunks steps of kb_chunk reduction blocks (the last may be shorter),
  /// each loading its slice of INP and WGT and accumulating into the tile's ACC; 1 otherwise.
  int64_t k_chunks = 1, kb_chunk = 0;
  /// ACC entries per tile holding the per-channel scale entries (nb_tile for a per-channel
  /// layer, at the end of the ACC half; 0 otherwise).
  int64_t scale_entries = 0;
};
/// Tiles a (validated-shape) layer into half scratchpads; fails when even a one-row tile does not
/// fit, with a message (no location) naming the scratchpad. `limits` caps rows and output blocks
/// per tile (the workload's TileLimits; none by default: the largest tiles that fit).
Result<TilePlan> plan_tiles(const Layer& layer,
                            const isa::ArrayConfig& array = isa::default_array(),
                            const TileLimits& limits = {});

/// Byte size of every tensor and where it goes, without generating data. Fails (message with the
/// location of the layer whose tensor does not fit) if the image exceeds the DRAM.
Result<std::vector<TensorInfo>> plan_dram(const Workload& w,
                                          const isa::ArrayConfig& array = isa::default_array());

/// Lowers a workload (which parse_workload validated). Fails only for programs that do not fit
/// the DRAM or number more than 2^32 - 1 commands; parse_workload already reports those, so a
/// loaded workload lowers successfully. A program may be longer than the ring (kRingCommands):
/// the host driver refills the ring as the NPU retires commands.
/// `array`: the variant to lower for (the design's, emu/run/Designs.h design_array()); tiles,
/// channel padding and weight blocks follow its lanes and depths. Fails for a non-square array.
Result<Program> lower(const Workload& w, const isa::ArrayConfig& array = isa::default_array());

/// The encoded commands as they sit in the command ring (at program.ring_base), all of them: a
/// program longer than kRingCommands passes through the ring a window at a time.
DramRegion ring_image(const Program& p);

}  // namespace bud::workload
