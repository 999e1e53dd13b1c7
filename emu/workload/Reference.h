// Direct reference: computes every layer of a workload straight from its description with plain
// loops (no commands, tiles or im2col), with the same integer semantics as the NPU (int32
// wrapping accumulation, POST requantisation). The golden model and the RTL are checked
// against it.
#pragma once

#include <cstdint>
#include <vector>

#include "emu/isa/Isa.h"
#include "emu/workload/Workload.h"

namespace bud::workload {

/// A tensor, NHWC: a logical int8 tensor (no padding), or a bf16 tensor.
struct Tensor {
  Shape shape;
  std::vector<int8_t> data;  ///< int8 elements (empty for a bf16 tensor)
  /// A bf16 tensor's elements, its channels padded to `padded_c` (the array's lanes) as in DRAM:
  /// the padding lanes are computed too, since a NaN or Inf there reaches the real lanes of the
  /// next layer through its zero weights (docs/workloads.md, "Precision").
  std::vector<uint16_t> bf16;
  int64_t padded_c = 0;  ///< > 0: a bf16 tensor
  bool is_bf16() const { return padded_c > 0; }
  int8_t at(int64_t y, int64_t x, int64_t c) const {
    return data[static_cast<size_t>((y * shape.w + x) * shape.c + c)];
  }
  uint16_t bf16_at(int64_t y, int64_t x, int64_t c) const {
    return bf16[static_cast<size_t>((y * shape.w + x) * padded_c + c)];
  }
  /// Element (y, x, c) as a real number in the tensor's units (int8 value or bf16 value).
  double value(int64_t y, int64_t x, int64_t c) const;
};

/// Every tensor of a reference run.
struct ReferenceResult {
  Tensor input;                ///< the workload input
  std::vector<Tensor> layers;  ///< output of each layer, in layer order
  uint64_t saturations = 0;    ///< lanes where requantisation clamped to int8 (as POST counts)
};

/// Runs the whole workload. `array`: the variant whose lanes order a BF16 layer's sums (an int8
/// workload's result does not depend on it).
ReferenceResult run_reference(const Workload& w,
                              const isa::ArrayConfig& array = isa::default_array());
/// The workload's reference run: the one computed at load (Workload::reference) when there is
/// one (int8 workloads), else run_reference(w, array).
ReferenceResult reference_of(const Workload& w,
                             const isa::ArrayConfig& array = isa::default_array());
/// The bf16 scale a float-path POST of layer `l` multiplies by: mult x 2^-shift, rounded to bf16
/// (docs/workloads.md, "Precision").
uint16_t post_scale_bf16(const Quant& q);

/// Layer `l`'s int8 output from its accumulators (POST requantisation with its quant and relu);
/// adds the lanes that clamped to `saturations`.
Tensor requantize_layer(const Layer& l, const std::vector<int32_t>& acc, uint64_t& saturations);

/// The int32 accumulators of layer `index` (out_shape.elements(), NHWC; before requantisation)
/// given the workload input, the outputs of the earlier layers and the layer's data.
std::vector<int32_t> layer_accumulators(const Workload& w, int index, const Tensor& input,
                                        const std::vector<Tensor>& earlier, const LayerData& data);

/// A host op on real values (docs/import.md, "Host fallback"): `x` is the dequantised input of
/// shape `in`, `other` the dequantised MATMUL operand; returns `out`.elements() values. Shared
/// by the host layers' int8 reference and the importer's fp32 network.
std::vector<double> host_op_values(const HostParams& p, const Shape& in, const Shape& out,
                                   const std::vector<double>& x, const Shape& other_shape,
                                   const std::vector<double>& other);

/// Output of host layer `index` (kind Host) given the workload input and the earlier layers'
/// outputs: dequantise, compute in float (double), requantise with round-half-away and clamp.
/// Deterministic: the same inputs give the same bytes on every run.
Tensor host_layer_output(const Workload& w, int index, const Tensor& input,
                         const std::vector<Tensor>& earlier,
                         const isa::ArrayConfig& array = isa::default_array());

/// POST semantics for one lane (docs/isa.md): returns the int8 result; `saturated` (if not null)
/// is set when the rounded value did not fit int8.
int8_t requantize(int32_t acc, const Quant& q, bool relu, bool* saturated = nullptr);

}  // namespace bud::workload
