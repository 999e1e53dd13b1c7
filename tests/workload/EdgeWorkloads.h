// Workloads that stress the lowering's edge cases (shared by the workload and golden tests).
#pragma once

#include <utility>
#include <vector>

namespace bud::test {

/// (name, text) of each edge-case workload.
inline const std::vector<std::pair<const char*, const char*>>& edge_workloads() {
  static const std::vector<std::pair<const char*, const char*>> all = {
      // K and N not multiples of 8; a negative multiplier.
      {"odd_kn", R"(input_shape: [37, 13]
layer { name: "d" dense { m: 37 k: 13 n: 11 } quant { mult: -1 shift: 6 } })"},
      // M not a multiple of the tile (40, 40, 20 rows): the third tile waits for tokens.
      {"m_tail", R"(input_shape: [100, 200]
layer { name: "d" dense { m: 100 k: 200 n: 20 relu: true } })"},
      // Several N tiles (2, 2, 2, 2, 1 blocks) x M tiles (8 x 6 + 2): WGT halves alternate.
      {"n_tiles", R"(input_shape: [50, 1000]
layer { name: "d" dense { m: 50 k: 1000 n: 70 } })"},
      // Dense storing some channel blocks per N tile into a zero-bordered tensor for a conv.
      {"dense_to_conv", R"(input_shape: [4, 4, 600]
layer { name: "d" dense { m: 16 k: 600 n: 40 relu: true } }
layer { name: "c" conv2d { c_out: 8 kh: 3 kw: 3 pad: 1 } })"},
      // Strided conv with C_in = 3, non-square kernel; add reading a bordered tensor; relu
      // storing into a bordered tensor; 5x5 conv with pad 2; add of a fresh tensor; dense.
      {"conv_mix", R"(input_shape: [9, 7, 3]
layer { name: "c1" conv2d { c_out: 12 kh: 3 kw: 2 stride: 2 pad: 1 relu: true } }
layer { name: "c2" conv2d { c_out: 12 kh: 3 kw: 3 pad: 1 } }
layer { name: "a" add { other: "c1" relu: true } }
layer { name: "r" relu { } }
layer { name: "c3" conv2d { c_out: 9 kh: 5 kw: 5 pad: 2 } }
layer { name: "f" add { } quant { mult: 1 shift: 1 } }
layer { name: "d" dense { m: 20 k: 9 n: 7 } })"},
      // A conv with four M tiles, then a residual add of the (bordered) input.
      {"conv_tiles", R"(input_shape: [20, 20, 8]
layer { name: "c" conv2d { c_out: 8 kh: 3 kw: 3 pad: 1 } }
layer { name: "s" add { other: "input" } })"},
      // Wide elementwise layers: 2 pixels per tile for add (INP holds both operands).
      {"wide_add", R"(input_shape: [3, 3, 2048]
layer { name: "r" relu { } }
layer { name: "a" add { other: "input" } })"},
      // Branches (layer inputs other than the previous layer; the input feeds two convs with
      // different pads), grouped and depthwise convs, host layers between NPU layers.
      {"branches_groups_host", R"(input_shape: [6, 6, 16]
layer { name: "dw" conv2d { c_out: 16 kh: 3 kw: 3 pad: 1 groups: 16 relu: true } }
layer { name: "pw" conv2d { c_out: 24 kh: 1 kw: 1 } }
layer { name: "g" input: "input" conv2d { c_out: 24 kh: 5 kw: 5 stride: 1 pad: 2 groups: 4 } }
layer { name: "gp" host { op: MAX_POOL in_scale: 1 out_scale: 1 kh: 3 kw: 3 stride: 1 pad: 1 } }
layer { name: "a" input: "pw" add { other: "gp" relu: true } }
layer { name: "sm" host { op: SOFTMAX in_scale: 0.1 out_scale: 0.0078125 } }
layer { name: "d" dense { m: 36 k: 24 n: 8 } })"},
      // Reductions longer than half the WGT scratchpad (256 blocks) run in K chunks: dense
      // K = 2300 (288 blocks: 2 chunks of 144, K not a multiple of 8) with 3 N tiles; a conv
      // with C_in = 264 (3x3: 297 blocks, chunks of 149 and 148 that end mid kernel row).
      {"long_k", R"(input_shape: [20, 2300]
layer { name: "d" dense { m: 20 k: 2300 n: 20 relu: true } })"},
      {"long_k_conv", R"(input_shape: [6, 6, 264]
layer { name: "c" conv2d { c_out: 16 kh: 3 kw: 3 pad: 1 relu: true } })"},
      // Reductions longer than half the WGT scratchpad on every array variant (npu16 and npu32
      // hold K = 4096 in half of WGT): dense K = 5000 and a 3x3 conv with C_in = 480.
      {"long_k_all", R"(input_shape: [12, 5000]
layer { name: "d" dense { m: 12 k: 5000 n: 40 } })"},
      {"long_k_conv_all", R"(input_shape: [4, 4, 480]
layer { name: "c" conv2d { c_out: 24 kh: 3 kw: 3 pad: 1 relu: true } })"},
      // Per-channel requantisation (docs/isa.md, "Per-channel POST"): a conv calibrated per
      // channel with 3 output blocks per tile (period 3) over two M tiles; a dense layer with
      // explicit factors 2^5 apart, two negative; a per-tensor layer reading the per-channel
      // output. Then N tiles of 2, 2, 2, 2 and 1 blocks (period 2 and 1) and a chunked
      // reduction.
      {"per_channel", R"(input_shape: [24, 24, 8]
layer { name: "c" conv2d { c_out: 20 kh: 3 kw: 3 pad: 1 relu: true } quant { per_channel: true } }
layer { name: "d" dense { m: 576 k: 20 n: 11 }
  quant { channel_mult: [3, 96, -7, 200, 1, 50, -13, 255, 2, 33, 120]
          channel_shift: [4, 9, 5, 10, 3, 8, 6, 11, 0, 7, 9] } }
layer { name: "e" dense { m: 576 k: 11 n: 8 relu: true } })"},
      {"per_channel_n_tiles", R"(input_shape: [50, 1000]
layer { name: "d" dense { m: 50 k: 1000 n: 70 } quant { per_channel: true } })"},
      // Attention on the NPU (docs/workloads.md, "Attention"): scores Q . K^T and the output
      // P . V as matmuls reading K and V^T (a transposed dense of the input) through block
      // copies; the softmax between them on the host (its output read by a matmul as INP).
      {"attention", R"(input_shape: [16, 32]
layer { name: "q" dense { m: 16 k: 32 n: 32 } }
layer { name: "k" input: "input" dense { m: 16 k: 32 n: 32 } }
layer { name: "vt" input: "input" dense { m: 16 k: 32 n: 32 transpose_output: true } }
layer { name: "s" input: "q" matmul { other: "k" } }
layer { name: "p" host { op: SOFTMAX in_scale: 0.05 out_scale: 0.0078125 } }
layer { name: "o" matmul { other: "vt" } }
layer { name: "y" dense { m: 16 k: 32 n: 32 relu: true } })"},
      // Token and channel counts that are not multiples of 8 (partial blocks and padding rows
      // in the block copies), a matmul reading the input as `other`, one reading a relu's
      // output, and a matmul whose other has more pixels than a WGT half holds in one N tile.
      {"attention_odd", R"(input_shape: [13, 20]
layer { name: "k" dense { m: 13 k: 20 n: 20 } }
layer { name: "r" relu { } }
layer { name: "s" input: "input" matmul { other: "r" relu: true } }
layer { name: "vt" input: "input" dense { m: 13 k: 20 n: 20 transpose_output: true } }
layer { name: "o" input: "s" matmul { other: "vt" } }
layer { name: "t" input: "input" matmul { other: "input" } })"},
      {"attention_wide", R"(input_shape: [24, 2300]
layer { name: "x" dense { m: 24 k: 2300 n: 40 } }
layer { name: "s" input: "input" matmul { other: "input" } }
layer { name: "vt" input: "input" dense { m: 24 k: 2300 n: 24 transpose_output: true } })"},
      {"per_channel_long_k", R"(input_shape: [10, 2300]
layer { name: "d" dense { m: 10 k: 2300 n: 20 } quant { per_channel: true } })"},
  };
  return all;
}

}  // namespace bud::test
