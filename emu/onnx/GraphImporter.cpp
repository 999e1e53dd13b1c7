// ONNX import. The graph is first mapped to a small float IR in bud's layout (NHWC, weights as
// K x N im2col matrices), which is both the fp32 reference and what calibration runs; then every
// value gets a scale and every layer its int8 weights, int32 bias and POST multiplier.
#include "emu/onnx/GraphImporter.h"

#include <algorithm>
#include <cmath>
#include <limits>

// Rng.h uses unsigned __int128, which -Wpedantic flags; it is a GCC/Clang extension bud relies on.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#include "emu/core/Rng.h"
#pragma GCC diagnostic pop
#include "emu/workload/Quality.h"
#include "emu/workload/Reference.h"

namespace bud::onnx_import::detail {
namespace {

// A reference tensor's logical values (NHWC, int8 or bf16, padding lanes left out).
std::vector<double> logical(const workload::Tensor& t) {
  std::vector<double> v;
  v.reserve(static_cast<size_t>(t.shape.elements()));
  for (int64_t p = 0; p < t.shape.pixels(); ++p)
    for (int64_t c = 0; c < t.shape.c; ++c) v.push_back(t.value(p / t.shape.w, p % t.shape.w, c));
  return v;
}

LayerQuality layer_quality(const std::string& name, const std::vector<double>& q, double scale,
                           const FloatTensor& f) {
  LayerQuality lq;
  lq.layer = name;
  lq.elements = f.size();
  double se = 0, sr = 0, sa = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    double d = q[i] * scale - f[i];
    if (!std::isfinite(d)) d = std::numeric_limits<double>::infinity();  // a bf16 Inf or NaN
    se += d * d;
    sr += f[i] * f[i];
    sa += std::abs(d);
    lq.max_abs_error = std::max(lq.max_abs_error, std::abs(d));
  }
  lq.mean_abs_error = f.empty() ? 0 : sa / static_cast<double>(f.size());
  lq.snr_db = se > 0 ? (std::isinf(se) ? -99 : 10 * std::log10(std::max(sr, 1e-300) / se)) : 99;
  return lq;
}

// Adds one input's rows (the last axis, `width` values each) to an agreement tally (counts,
// divided by the rows at the end). Ties go to the lowest index in both.
void add_agreement(Agreement& a, const std::vector<double>& q, const FloatTensor& f,
                   size_t width) {
  if (width == 0 || q.size() != f.size()) return;
  ++a.inputs;
  for (size_t r = 0; r + width <= f.size(); r += width) {
    const size_t want = static_cast<size_t>(
        std::max_element(f.begin() + static_cast<long>(r), f.begin() + static_cast<long>(r + width)) -
        (f.begin() + static_cast<long>(r)));
    const size_t got = static_cast<size_t>(
        std::max_element(q.begin() + static_cast<long>(r), q.begin() + static_cast<long>(r + width)) -
        (q.begin() + static_cast<long>(r)));
    // Rank of the fp32 argmax among the int8 values: how many are larger, or equal and earlier.
    size_t rank = 0;
    for (size_t j = 0; j < width; ++j)
      if (q[r + j] > q[r + want] || (q[r + j] == q[r + want] && j < want)) ++rank;
    ++a.rows;
    if (got == want) a.top1 += 1;
    if (rank < 5) a.top5 += 1;
  }
}

}  // namespace

Result<ImportResult> GraphImporter::run(std::string_view bytes) {
  onnx::ModelProto model;
  if (bytes.size() > (INT32_MAX / 2) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return Error{file_ +
                 ": not a readable ONNX model (protobuf parse failed: truncated or not "
                 "an ONNX file)"};
  if (!model.has_graph() || model.graph().node_size() == 0)
    return Error{file_ + ": ONNX model has no graph nodes (truncated or empty file)"};
  if (auto e = read_graph(model.graph())) return *e;
  keep_transposes_private();
  if (auto e = quantise()) return *e;
  Result<std::string> text = emit();
  if (!text) return Error{text.error()};

  // Check the emitted workload and measure the quantisation error on the run input.
  Result<workload::Workload> w = workload::parse_workload(*text, file_ + " (imported)");
  if (!w) return Error{w.error()};
  ImportResult r;
  r.text = std::move(text).value();
  r.onnx_nodes = onnx_nodes_;
  r.layers = static_cast<int>(w->layers.size());
  r.float_model = float_model_;
  for (const Node& n : nodes_)
    if (n.kind == Kind::Host)
      r.host_layers.push_back(n.name + " (" + host_op_name(n.host.op) + ")");
  const View out = *view_of(output_name_);
  const Value& ov = values_[static_cast<size_t>(out.value)];
  r.output_layer = nodes_[static_cast<size_t>(ov.producer)].name;
  r.output_scale = ov.scale * out.mult;
  // The figures at the asked precision (the emitted workload stays the imported int8 one).
  workload::Workload wm = *w;
  if (opt_.precision == "auto") {
    workload::apply_auto_precision(wm, opt_.array,
                                   wm.min_snr_db.value_or(workload::kDefaultMinSnrDb));
  } else if (!opt_.precision.empty()) {
    if (auto e = workload::assign_precision(wm, opt_.precision, opt_.precision_origin)) return *e;
  }
  for (const auto& l : wm.layers)
    r.precisions.emplace_back(l.name, l.kind == workload::LayerKind::Host
                                          ? "host"
                                          : workload::precision_name(l.precision));
  const workload::ReferenceResult ref = opt_.precision.empty()
                                            ? workload::reference_of(*w, opt_.array)
                                            : workload::run_reference(wm, opt_.array);
  const auto li = w->find_layer(r.output_layer);
  r.fp32_input = make_input(opt_.seed);
  const std::vector<FloatTensor> fl = run_float(r.fp32_input);
  const FloatTensor want = view_data(fl, out);
  r.fp32_output = want;
  const std::vector<double> got = logical(ref.layers[static_cast<size_t>(*li)]);
  double se = 0, sr = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double d = got[i] * r.output_scale - want[i];
    se += d * d;
    sr += want[i] * want[i];
    r.error.max_abs_error = std::max(r.error.max_abs_error, std::abs(d));
  }
  r.error.elements = want.size();
  r.error.rms_error = std::sqrt(se / static_cast<double>(want.size()));
  r.error.rms_reference = std::sqrt(sr / static_cast<double>(want.size()));
  // Per layer: its int8 output (the direct reference) against its node in fp32.
  for (size_t i = 0; i < nodes_.size() && i < ref.layers.size(); ++i) {
    const Node& n = nodes_[i];
    FloatTensor f = fl[static_cast<size_t>(n.out)];
    if (n.transpose_out) {  // the layer holds the value transposed
      const Shape& vs = values_[static_cast<size_t>(n.out)].shape;
      FloatTensor t(f.size());
      for (int64_t pi = 0; pi < vs.pixels(); ++pi)
        for (int64_t c = 0; c < vs.c; ++c)
          t[static_cast<size_t>(c * vs.pixels() + pi)] = f[static_cast<size_t>(pi * vs.c + c)];
      f = std::move(t);
    }
    const std::vector<double> q = logical(ref.layers[i]);
    if (q.size() != f.size()) continue;
    r.quality.push_back(layer_quality(n.name, q, values_[static_cast<size_t>(n.out)].scale, f));
  }
  // Agreement of the output over the frozen inputs: the same workload with another input.
  workload::Workload wq = wm;
  wq.reference = nullptr;
  const double in_scale = values_[static_cast<size_t>(input_value_)].scale;
  for (int k = 0; k < kQualityInputs; ++k) {
    uint64_t state = kQualitySeed + static_cast<uint64_t>(k);
    const FloatTensor x = make_input(emu::Rng::splitmix64(state));
    wq.input_data.resize(x.size());
    for (size_t i = 0; i < x.size(); ++i)
      wq.input_data[i] =
          static_cast<int8_t>(std::clamp(std::round(x[i] / in_scale), -128.0, 127.0));
    const workload::ReferenceResult rk = workload::run_reference(wq, opt_.array);
    const FloatTensor fk = view_data(run_float(x), out);
    add_agreement(r.agreement, logical(rk.layers[static_cast<size_t>(*li)]), fk,
                  static_cast<size_t>(out.shape.c));
  }
  if (r.agreement.rows > 0) {
    r.agreement.top1 /= static_cast<double>(r.agreement.rows);
    r.agreement.top5 /= static_cast<double>(r.agreement.rows);
  }
  return r;
}

// A dense layer writes its output transposed only for the one NPU matmul that reads it as
// weights: if anything else reads that value too (seen only once the whole graph is mapped), the
// matmul falls back to the host and the layer writes its output as it is.
void GraphImporter::keep_transposes_private() {
  for (Node& n : nodes_) {
    if (n.kind != Kind::MatMul || n.other.transposed) continue;
    const Value& v = values_[static_cast<size_t>(n.other.value)];
    Node& producer = nodes_[static_cast<size_t>(v.producer)];
    const View out = *view_of(output_name_);
    if (v.consumers == 1 && out.value != n.other.value) continue;
    producer.transpose_out = false;
    n.kind = Kind::Host;
    n.host.op = HostOp::MatMul;
    n.host.transpose_other = false;
  }
}

std::optional<Error> GraphImporter::read_graph(const onnx::GraphProto& g) {
  onnx_nodes_ = g.node_size();
  for (const auto& t : g.initializer()) {
    std::string why;
    auto v = tensor_values(t, why);
    if (!v) return Error{file_ + ": initializer '" + t.name() + "': " + why};
    constants_[t.name()] =
        Constant{{t.dims().begin(), t.dims().end()}, std::move(*v), t.data_type()};
  }
  // The one graph input that is not an initializer.
  for (const auto& in : g.input()) {
    if (constants_.count(in.name())) continue;
    if (input_value_ >= 0)
      return Error{file_ + ": graph input '" + in.name() +
                   "': bud imports models with one input (found a second)"};
    const auto& tt = in.type().tensor_type();
    if (!tt.has_shape())
      return Error{file_ + ": graph input '" + in.name() + "': no shape (bud needs static shapes)"};
    std::vector<int64_t> dims;
    for (int i = 0; i < tt.shape().dim_size(); ++i) {
      const auto& d = tt.shape().dim(i);
      if (!d.has_dim_value())
        return Error{file_ + ": graph input '" + in.name() + "': dynamic dimension " +
                     std::to_string(i) + (d.has_dim_param() ? " '" + d.dim_param() + "'" : "") +
                     " (bud needs static shapes; export with fixed sizes)"};
      dims.push_back(d.dim_value());
    }
    if (tt.elem_type() != onnx::TensorProto::FLOAT)
      return Error{file_ + ": graph input '" + in.name() + "': element type " +
                   std::to_string(tt.elem_type()) + " (bud needs a float input)"};
    std::string why;
    auto s = to_shape(dims, why);
    if (!s) return Error{file_ + ": graph input '" + in.name() + "': " + why};
    input_value_ = add_value(*s, -1);
    input_name_ = in.name();
    views_[in.name()] = View{input_value_, *s, 1, false, {}};
  }
  if (input_value_ < 0) return Error{file_ + ": graph has no (non-initializer) input"};
  if (g.output_size() != 1)
    return Error{file_ + ": graph has " + std::to_string(g.output_size()) +
                 " outputs (bud imports models with one output)"};
  output_name_ = g.output(0).name();
  for (const auto& n : g.node())
    for (const auto& i : n.input()) ++uses_[i];
  for (int i = 0; i < g.node_size(); ++i)
    if (auto e = map_node(g.node(i), i)) return e;
  auto out = view_of(output_name_);
  if (!out || out->value == input_value_)
    return Error{file_ + ": graph output '" + output_name_ + "' is not produced by any layer"};
  if (out->nchw_image)
    return Error{file_ + ": graph output '" + output_name_ + "' flattens the image " +
                 shape_string(*out->nchw_image) +
                 " in NCHW order, which is not bud's NHWC layout (end the graph with a dense layer)"};
  return std::nullopt;
}

}  // namespace bud::onnx_import::detail
