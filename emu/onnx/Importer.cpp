// ONNX import. The graph is first mapped to a small float IR in bud's layout (NHWC, weights as
// K x N im2col matrices), which is both the fp32 reference and what calibration runs; then every
// value gets a scale and every layer its int8 weights, int32 bias and POST multiplier.
#include "emu/onnx/Importer.h"

#include <google/protobuf/text_format.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>

// Rng.h uses unsigned __int128, which -Wpedantic flags; it is a GCC/Clang extension bud relies on.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#include "emu/core/Rng.h"
#pragma GCC diagnostic pop
#include "emu/workload/Quality.h"
#include "emu/workload/Reference.h"
#include "emu/workload/Workload.h"
#include "workload.pb.h"

namespace bud::onnx_import {
namespace {

using workload::Error;
using workload::HostOp;
using workload::Result;
using workload::Shape;

// ---------------------------------------------------------------------------------------------
// IR

enum class Kind : uint8_t { Conv, Dense, Add, Relu, Host, MatMul };

// A value (tensor) of the IR: NHWC, batch 1.
struct Value {
  Shape shape;
  int producer = -1;                  // IR node, -1: the graph input
  std::optional<double> fixed_scale;  // set by the model (QuantizeLinear, QLinear*) or by rules
  double scale = 1;
  int consumers = 0;
};

// How an ONNX tensor name refers to an IR value: layout-only ops make views.
struct View {
  int value = -1;
  Shape shape;              // the shape the consumer sees (same memory layout)
  double mult = 1;          // Mul/Div by a positive scalar: real = int8 * scale * mult
  bool transposed = false;  // a 2-D transpose only a host MatMul can absorb
  // Flatten of an image [1, C, H, W] -> [1, C*H*W]: the ONNX order (channel-major) differs from
  // the NHWC bytes, so only a dense layer with constant weights can read it, as a convolution
  // over the whole image with its weight rows permuted (docs/import.md, "Flatten").
  std::optional<Shape> nchw_image;
};

struct Node {
  Kind kind = Kind::Conv;
  std::string name;  // workload layer name
  View in, other;    // other: add / host matmul second operand
  int out = -1;
  // conv / dense: float weights K x N (K index (ky*kw + kx)*cg + ci), bias N
  int64_t c_out = 0, kh = 1, kw = 1, stride = 1, groups = 1;
  workload::Pads pads;
  std::vector<float> w, b;
  // QLinear*: the model's weight scale, one value (per tensor) or one per output channel.
  std::vector<double> fixed_w_scale;
  bool relu = false;
  double relu_hi = INFINITY;  // ReLU6: 6
  workload::HostParams host;
  // Dense: the workload layer writes the output transposed (V^T for an attention matmul that
  // reads it as weights); the IR value keeps the untransposed fp32 meaning.
  bool transpose_out = false;
  // Add: the last of the adds that merge attention heads (docs/import.md, "Multi-head
  // attention"); a constant added to its output is folded into this node's bias.
  int bias_into = -1;
};

// An ONNX tensor holding attention heads, as one IR view per head (docs/import.md,
// "Multi-head attention").
struct Heads {
  std::vector<View> views;  // head h: [S, N] (a transposed view: the head's [N, S])
  bool head_major = false;  // [H, S, N] (after the split's Transpose); false: [S, H, N]
  int batch = 0;            // 1: a leading batch dimension of 1 ([1, H, S, N])
};

// Error naming the node.
struct NodeRef {
  std::string file;
  int index = 0;
  std::string name, op;
  Error error(const std::string& why) const {
    return Error{file + ": node '" + name + "' (#" + std::to_string(index) + ", " + op +
                 "): " + why};
  }
};

// Merged heads read by anything but the output projection.
Error merged_misread(const NodeRef& ref, const std::string& name, const std::string& op) {
  return ref.error("merged attention heads ('" + name +
                   "') must be read by a constant-weight MatMul or Gemm (the output projection), "
                   "not " + op);
}

std::string dims_string(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

std::string shape_string(const Shape& s) { return s.to_string(); }

// ---------------------------------------------------------------------------------------------
// Reading ONNX tensors (initializers and Constant values)

template <class T>
std::vector<T> raw_as(const std::string& raw) {
  std::vector<T> v(raw.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), raw.data(), v.size() * sizeof(T));
  return v;
}

// Numeric data of a tensor as doubles, or an error text.
std::optional<std::vector<double>> tensor_values(const onnx::TensorProto& t, std::string& why) {
  std::vector<double> v;
  const bool raw = t.has_raw_data();
  switch (t.data_type()) {
    case onnx::TensorProto::FLOAT:
      if (raw)
        for (float f : raw_as<float>(t.raw_data())) v.push_back(f);
      else
        v.assign(t.float_data().begin(), t.float_data().end());
      break;
    case onnx::TensorProto::DOUBLE:
      if (raw)
        v = raw_as<double>(t.raw_data());
      else
        v.assign(t.double_data().begin(), t.double_data().end());
      break;
    case onnx::TensorProto::INT8:
      if (raw)
        for (int8_t x : raw_as<int8_t>(t.raw_data())) v.push_back(x);
      else
        v.assign(t.int32_data().begin(), t.int32_data().end());
      break;
    case onnx::TensorProto::UINT8:
      if (raw)
        for (uint8_t x : raw_as<uint8_t>(t.raw_data())) v.push_back(x);
      else
        v.assign(t.int32_data().begin(), t.int32_data().end());
      break;
    case onnx::TensorProto::INT32:
      if (raw)
        for (int32_t x : raw_as<int32_t>(t.raw_data())) v.push_back(x);
      else
        v.assign(t.int32_data().begin(), t.int32_data().end());
      break;
    case onnx::TensorProto::INT64:
      if (raw)
        for (int64_t x : raw_as<int64_t>(t.raw_data())) v.push_back(static_cast<double>(x));
      else
        for (int64_t x : t.int64_data()) v.push_back(static_cast<double>(x));
      break;
    default:
      why = "tensor '" + t.name() + "' has unsupported data type " + std::to_string(t.data_type());
      return std::nullopt;
  }
  int64_t count = 1;
  for (int64_t d : t.dims()) count *= d;
  if (static_cast<int64_t>(v.size()) != count) {
    why = "tensor '" + t.name() + "' holds " + std::to_string(v.size()) + " values but its dims " +
          dims_string({t.dims().begin(), t.dims().end()}) + " need " + std::to_string(count);
    return std::nullopt;
  }
  return v;
}

struct Constant {
  std::vector<int64_t> dims;
  std::vector<double> v;
  int data_type = 0;
};

// ---------------------------------------------------------------------------------------------
// Float execution of the IR (the fp32 reference and calibration)

using FloatTensor = std::vector<double>;

std::vector<double> view_data(const std::vector<FloatTensor>& vals, const View& v) {
  std::vector<double> d = vals[static_cast<size_t>(v.value)];
  if (v.mult != 1)
    for (double& x : d) x *= v.mult;
  return d;
}

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

FloatTensor run_node(const Node& n, const std::vector<Value>& values,
                     const std::vector<FloatTensor>& vals) {
  const std::vector<double> x = view_data(vals, n.in);
  const Shape& is = n.in.shape;
  const Shape& os = values[static_cast<size_t>(n.out)].shape;
  FloatTensor y(static_cast<size_t>(os.elements()), 0.0);
  switch (n.kind) {
    case Kind::Dense:
      for (int64_t i = 0; i < os.pixels(); ++i)
        for (int64_t j = 0; j < os.c; ++j) {
          double acc = n.b[static_cast<size_t>(j)];
          for (int64_t k = 0; k < is.c; ++k)
            acc += x[static_cast<size_t>(i * is.c + k)] * n.w[static_cast<size_t>(k * os.c + j)];
          y[static_cast<size_t>(i * os.c + j)] = acc;
        }
      break;
    case Kind::Conv: {
      const int64_t cg = is.c / n.groups, ng = os.c / n.groups;
      for (int64_t oy = 0; oy < os.h; ++oy)
        for (int64_t ox = 0; ox < os.w; ++ox)
          for (int64_t co = 0; co < os.c; ++co) {
            const int64_t g = co / ng;
            double acc = n.b[static_cast<size_t>(co)];
            for (int64_t ky = 0; ky < n.kh; ++ky)
              for (int64_t kx = 0; kx < n.kw; ++kx) {
                const int64_t iy = oy * n.stride + ky - n.pads.top,
                              ix = ox * n.stride + kx - n.pads.left;
                if (iy < 0 || iy >= is.h || ix < 0 || ix >= is.w) continue;
                for (int64_t ci = 0; ci < cg; ++ci)
                  acc += x[static_cast<size_t>((iy * is.w + ix) * is.c + g * cg + ci)] *
                         n.w[static_cast<size_t>(((ky * n.kw + kx) * cg + ci) * os.c + co)];
              }
            y[static_cast<size_t>((oy * os.w + ox) * os.c + co)] = acc;
          }
      break;
    }
    case Kind::Add: {
      const std::vector<double> b = view_data(vals, n.other);
      for (size_t i = 0; i < y.size(); ++i) y[i] = x[i] + b[i];
      break;
    }
    case Kind::Relu:
      y = x;
      break;
    case Kind::MatMul: {
      // On the NPU: x . other (other transposed: x . other^T), as the host op computes it.
      workload::HostParams p;
      p.op = HostOp::MatMul;
      p.transpose_other = n.other.transposed;
      y = workload::host_op_values(p, is, os, x, values[static_cast<size_t>(n.other.value)].shape,
                                   view_data(vals, n.other));
      break;
    }
    case Kind::Host: {
      const bool two = workload::host_op_reads_other(n.host.op);
      const std::vector<double> b = two ? view_data(vals, n.other) : std::vector<double>{};
      const Shape bs = two ? values[static_cast<size_t>(n.other.value)].shape : Shape{};
      workload::HostParams p = n.host;
      p.transpose_other = two && n.other.transposed;
      y = workload::host_op_values(p, is, os, x, bs, b);
      break;
    }
  }
  if (n.relu)
    for (double& v : y) v = std::clamp(v, 0.0, n.relu_hi);
  return y;
}

// ---------------------------------------------------------------------------------------------
// The importer

class Importer {
 public:
  Importer(std::string file, const ImportOptions& options)
      : file_(std::move(file)), opt_(options) {}

  Result<ImportResult> run(std::string_view bytes);

 private:
  std::optional<Error> read_graph(const onnx::GraphProto& g);
  std::optional<Error> map_node(const onnx::NodeProto& node, int index);
  // Multi-head attention: the split of a dense layer's output into heads, ops on heads (one node
  // per head), and the merged heads read by a constant MatMul/Gemm.
  std::optional<Error> split_heads(const NodeRef& ref, const View& x, const std::string& in_name,
                                   int64_t heads, int batch, const std::string& out_name);
  std::optional<Error> map_heads(const onnx::NodeProto& node, int index, const NodeRef& ref);
  std::optional<Error> map_merged(const onnx::NodeProto& node, int index, const NodeRef& ref);
  // CNN ops: Concat along channels (host concat layers), BatchNormalization (folded into the
  // producing conv or dense layer, else a depthwise 1x1 conv), a dense layer reading a
  // flattened image (a convolution over the whole image).
  std::optional<Error> map_concat(const onnx::NodeProto& node, int index, const NodeRef& ref);
  std::optional<Error> map_batch_norm(const onnx::NodeProto& node, int index, const NodeRef& ref,
                                      const View& x);
  static Node whole_image_conv(Node dense, const View& x);
  std::optional<Error> quantise();
  void keep_transposes_private();
  Result<std::string> emit() const;
  std::vector<FloatTensor> run_float(const FloatTensor& input) const;
  FloatTensor make_input(uint64_t seed) const;

  // Helpers for map_node.
  std::optional<View> view_of(const std::string& name) const {
    auto it = views_.find(name);
    if (it == views_.end()) return std::nullopt;
    return it->second;
  }
  const Constant* constant(const std::string& name) const {
    auto it = constants_.find(name);
    return it == constants_.end() ? nullptr : &it->second;
  }
  int add_value(const Shape& s, int producer) {
    Value v;
    v.shape = s;
    v.producer = producer;
    values_.push_back(v);
    return static_cast<int>(values_.size()) - 1;
  }
  // Appends a node producing ONNX tensor `out_name`.
  void add_node(Node n, const std::string& out_name, const Shape& out_shape) {
    n.out = add_value(out_shape, static_cast<int>(nodes_.size()));
    if (n.in.value >= 0) ++values_[static_cast<size_t>(n.in.value)].consumers;
    if (n.other.value >= 0) ++values_[static_cast<size_t>(n.other.value)].consumers;
    views_[out_name] = View{n.out, out_shape, 1, false, {}};
    nodes_.push_back(std::move(n));
  }
  std::string layer_name(const onnx::NodeProto& node, int index) {
    std::string base =
        node.name().empty() ? node.op_type() + "_" + std::to_string(index) : node.name();
    for (char& ch : base)
      if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.' || ch == '-'))
        ch = '_';
    if (base == "input") base = "input_";
    std::string name = base;
    for (int k = 2; used_names_.count(name); ++k) name = base + "_" + std::to_string(k);
    used_names_[name] = 1;
    return name;
  }

  std::string file_;
  ImportOptions opt_;
  std::map<std::string, Constant> constants_;
  std::map<std::string, View> views_;
  std::map<std::string, Heads> heads_;                // ONNX tensors holding attention heads
  std::map<std::string, std::vector<View>> merged_;   // heads reshaped back to [S, H * N]
  std::map<std::string, int> used_names_;
  std::map<std::string, int> uses_;  // ONNX tensor name -> number of node inputs reading it
  std::vector<Value> values_;
  std::vector<Node> nodes_;
  int input_value_ = -1;
  std::string input_name_, output_name_;
  bool float_model_ = true;
  int onnx_nodes_ = 0;
};

// Attribute lookup helpers.
const onnx::AttributeProto* attr(const onnx::NodeProto& n, const char* name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}
int64_t attr_int(const onnx::NodeProto& n, const char* name, int64_t dflt) {
  const auto* a = attr(n, name);
  return a ? a->i() : dflt;
}
double attr_float(const onnx::NodeProto& n, const char* name, double dflt) {
  const auto* a = attr(n, name);
  return a ? a->f() : dflt;
}
std::vector<int64_t> attr_ints(const onnx::NodeProto& n, const char* name) {
  const auto* a = attr(n, name);
  if (!a) return {};
  return {a->ints().begin(), a->ints().end()};
}

// ONNX shape (batch first) -> bud Shape. Rank 4 [1, C, H, W]; rank 3 [1, S, D]; rank 2 [S, D].
std::optional<Shape> to_shape(const std::vector<int64_t>& d, std::string& why) {
  for (int64_t x : d)
    if (x <= 0) {
      why = "dimension " + dims_string(d) + " must be positive";
      return std::nullopt;
    }
  if (d.size() == 4 && d[0] == 1) return Shape{d[2], d[3], d[1], 3};
  if (d.size() == 3 && d[0] == 1) return Shape{d[1], 1, d[2], 2};
  if (d.size() == 2) return Shape{d[0], 1, d[1], 2};
  why = "shape " + dims_string(d) + " is not [1, C, H, W], [1, S, D] or [S, D]";
  return std::nullopt;
}

Result<ImportResult> Importer::run(std::string_view bytes) {
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
void Importer::keep_transposes_private() {
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

std::optional<Error> Importer::read_graph(const onnx::GraphProto& g) {
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

std::optional<Error> Importer::map_node(const onnx::NodeProto& node, int index) {
  const NodeRef ref{file_, index, node.name(), node.op_type()};
  const std::string& op = node.op_type();
  auto input = [&](int i) -> std::string { return i < node.input_size() ? node.input(i) : ""; };
  if (node.output_size() < 1) return ref.error("has no output");
  const std::string out_name = node.output(0);

  // Constant nodes become constants.
  if (op == "Constant") {
    const auto* a = attr(node, "value");
    if (!a || !a->has_t()) return ref.error("only the tensor 'value' form is supported");
    std::string why;
    auto v = tensor_values(a->t(), why);
    if (!v) return ref.error(why);
    constants_[out_name] =
        Constant{{a->t().dims().begin(), a->t().dims().end()}, std::move(*v), a->t().data_type()};
    return std::nullopt;
  }

  if (heads_.count(input(0))) return map_heads(node, index, ref);
  if (merged_.count(input(0))) return map_merged(node, index, ref);
  if (heads_.count(input(1)))
    return ref.error("input '" + input(1) + "' holds attention heads but input '" + input(0) +
                     "' does not");
  if (merged_.count(input(1))) return merged_misread(ref, input(1), op);

  // The first input must be an activation for every other op.
  const std::optional<View> x = view_of(input(0));
  if (!x) {
    if (constant(input(0)))
      return ref.error("input '" + input(0) +
                       "' is a constant: bud maps ops on activations only (fold constants first)");
    return ref.error("input '" + input(0) +
                     "' is not produced by an earlier node (graph not in "
                     "topological order, or truncated)");
  }
  const Shape& xs = x->shape;
  // A flattened image keeps its ONNX (channel-major) order only through to a dense layer.
  if (op != "Gemm" && op != "MatMul" && op != "QLinearMatMul" && op != "Identity" &&
      op != "Dropout")
    for (int i = 0; i < node.input_size(); ++i)
      if (auto v = view_of(input(i)); v && v->nchw_image)
        return ref.error("input '" + input(i) + "' flattens the image " +
                         shape_string(*v->nchw_image) +
                         " in NCHW order: only a Gemm or MatMul with constant weights can read "
                         "it (bud permutes the weight rows), not " + op);
  auto need_scalar = [&](int i, double& out) -> std::optional<Error> {
    const Constant* c = constant(input(i));
    if (!c || c->v.size() != 1)
      return ref.error("input " + std::to_string(i) + " ('" + input(i) +
                       "') must be a scalar constant");
    out = c->v[0];
    return std::nullopt;
  };
  auto need_zero_point = [&](int i) -> std::optional<Error> {
    if (input(i).empty()) return std::nullopt;
    const Constant* c = constant(input(i));
    if (!c) return ref.error("zero point '" + input(i) + "' must be a constant");
    if (c->data_type != onnx::TensorProto::INT8)
      return ref.error("zero point '" + input(i) + "' must be int8 (bud's datapath is int8)");
    for (double v : c->v)
      if (v != 0)
        return ref.error("zero point '" + input(i) + "' is " + std::to_string(int(v)) +
                         ": the NPU's POST has no offset, only symmetric (zero point 0) int8");
    return std::nullopt;
  };
  auto fix_scale = [&](const View& v, double s) -> std::optional<Error> {
    Value& val = values_[static_cast<size_t>(v.value)];
    const double want = s / v.mult;
    if (val.fixed_scale && std::abs(*val.fixed_scale - want) > 1e-6 * want)
      return ref.error("scale " + std::to_string(s) + " conflicts with the scale " +
                       std::to_string(*val.fixed_scale) + " already fixed for '" + input(0) + "'");
    val.fixed_scale = want;
    return std::nullopt;
  };

  // Fused activation: a Relu / Clip(0, 6) whose input is the sole use of a conv/dense/add output.
  if (op == "Relu" || op == "Clip") {
    double lo = 0, hi = INFINITY;
    if (op == "Clip") {
      lo = attr_float(node, "min", -INFINITY);
      hi = attr_float(node, "max", INFINITY);
      if (!input(1).empty())
        if (auto e = need_scalar(1, lo)) return e;
      if (!input(2).empty())
        if (auto e = need_scalar(2, hi)) return e;
      if (lo != 0 || !(hi == 6 || std::isinf(hi)))
        return ref.error("Clip range [" + std::to_string(lo) + ", " + std::to_string(hi) +
                         "] unsupported: only [0, 6] (ReLU6) and [0, inf) (ReLU) map to POST");
    }
    if (x->mult != 1 || x->transposed) return ref.error("input is a scaled or transposed view");
    Value& v = values_[static_cast<size_t>(x->value)];
    const bool fusable = v.producer >= 0 && uses_[input(0)] == 1 && input(0) != output_name_ &&
                         nodes_[static_cast<size_t>(v.producer)].kind != Kind::Host &&
                         !nodes_[static_cast<size_t>(v.producer)].relu;
    if (fusable) {
      nodes_[static_cast<size_t>(v.producer)].relu = true;
      nodes_[static_cast<size_t>(v.producer)].relu_hi = hi;
      if (!std::isinf(hi)) v.fixed_scale = hi / 127.0;  // ReLU6: 6.0 is int8 127
      views_[out_name] = View{x->value, xs, 1, false, {}};
      return std::nullopt;
    }
    Node n;
    n.kind = Kind::Relu;
    n.name = layer_name(node, index);
    n.in = *x;
    n.relu = true;
    n.relu_hi = hi;
    add_node(std::move(n), out_name, xs);
    if (!std::isinf(hi)) values_.back().fixed_scale = hi / 127.0;
    return std::nullopt;
  }

  if (op == "Conv" || op == "QLinearConv") {
    const bool q = op == "QLinearConv";
    if (xs.rank != 3) return ref.error("input is " + shape_string(xs) + ", not an NCHW image");
    const int wi = q ? 3 : 1;
    const Constant* w = constant(input(wi));
    if (!w || w->dims.size() != 4)
      return ref.error("weights '" + input(wi) +
                       "' must be a constant [C_out, C_in/group, kH, kW]");
    Node n;
    n.kind = Kind::Conv;
    n.name = layer_name(node, index);
    n.in = *x;
    n.groups = attr_int(node, "group", 1);
    n.c_out = w->dims[0];
    n.kh = w->dims[2];
    n.kw = w->dims[3];
    if (n.groups < 1 || xs.c % n.groups != 0 || n.c_out % n.groups != 0 ||
        w->dims[1] != xs.c / n.groups)
      return ref.error("group " + std::to_string(n.groups) + " does not fit weights " +
                       dims_string(w->dims) + " and " + std::to_string(xs.c) + " input channels");
    const auto strides = attr_ints(node, "strides");
    const auto pads = attr_ints(node, "pads");
    const auto dil = attr_ints(node, "dilations");
    const auto* ap = attr(node, "auto_pad");
    if (ap && ap->s() != "NOTSET")
      return ref.error("auto_pad " + ap->s() + " unsupported (use pads)");
    for (int64_t d : dil)
      if (d != 1) return ref.error("dilations " + dims_string(dil) + " unsupported (only 1)");
    if (!strides.empty() && (strides.size() != 2 || strides[0] != strides[1] || strides[0] < 1))
      return ref.error("strides " + dims_string(strides) + " must be equal and positive");
    if (!pads.empty() && (pads.size() != 4 || *std::min_element(pads.begin(), pads.end()) < 0 ||
                          *std::max_element(pads.begin(), pads.end()) > 255))
      return ref.error("pads " + dims_string(pads) +
                       " must be 4 values [top, left, bottom, right] in [0, 255]");
    n.stride = strides.empty() ? 1 : strides[0];
    if (!pads.empty()) n.pads = workload::Pads{pads[0], pads[1], pads[2], pads[3]};
    const int64_t ph = n.pads.top + n.pads.bottom, pw = n.pads.left + n.pads.right;
    if (xs.h + ph < n.kh || xs.w + pw < n.kw)
      return ref.error("kernel does not fit the input " + shape_string(xs));
    const int64_t cg = xs.c / n.groups;
    const int64_t ng = n.c_out / n.groups;
    (void)ng;
    std::vector<double> wscale(static_cast<size_t>(n.c_out), 1.0);
    double x_scale = 1, y_scale = 1;
    if (q) {
      float_model_ = false;
      if (auto e = need_scalar(1, x_scale)) return e;
      if (auto e = need_zero_point(2)) return e;
      const Constant* ws = constant(input(4));
      if (!ws || (ws->v.size() != 1 && static_cast<int64_t>(ws->v.size()) != n.c_out))
        return ref.error("w_scale must be a constant scalar or one per output channel");
      for (int64_t c = 0; c < n.c_out; ++c)
        wscale[static_cast<size_t>(c)] = ws->v[ws->v.size() == 1 ? 0 : static_cast<size_t>(c)];
      if (auto e = need_zero_point(5)) return e;
      if (auto e = need_scalar(6, y_scale)) return e;
      if (auto e = need_zero_point(7)) return e;
      if (auto e = fix_scale(*x, x_scale)) return e;
      n.fixed_w_scale.assign(ws->v.begin(), ws->v.end());
    }
    n.w.assign(static_cast<size_t>(n.kh * n.kw * cg * n.c_out), 0.0f);
    for (int64_t co = 0; co < n.c_out; ++co)
      for (int64_t ci = 0; ci < cg; ++ci)
        for (int64_t ky = 0; ky < n.kh; ++ky)
          for (int64_t kx = 0; kx < n.kw; ++kx)
            n.w[static_cast<size_t>(((ky * n.kw + kx) * cg + ci) * n.c_out + co)] =
                static_cast<float>(
                    w->v[static_cast<size_t>(((co * cg + ci) * n.kh + ky) * n.kw + kx)] *
                    wscale[static_cast<size_t>(co)]);
    n.b.assign(static_cast<size_t>(n.c_out), 0.0f);
    const std::string bname = input(q ? 8 : 2);
    if (!bname.empty()) {
      const Constant* b = constant(bname);
      if (!b || static_cast<int64_t>(b->v.size()) != n.c_out)
        return ref.error("bias '" + bname + "' must be a constant of C_out values");
      for (int64_t c = 0; c < n.c_out; ++c)
        n.b[static_cast<size_t>(c)] = static_cast<float>(
            b->v[static_cast<size_t>(c)] * (q ? x_scale * wscale[static_cast<size_t>(c)] : 1.0));
    }
    const Shape os{(xs.h + ph - n.kh) / n.stride + 1, (xs.w + pw - n.kw) / n.stride + 1,
                   n.c_out, 3};
    add_node(std::move(n), out_name, os);
    if (q) values_.back().fixed_scale = y_scale;
    return std::nullopt;
  }

  if (op == "Gemm" || op == "MatMul" || op == "QLinearMatMul") {
    const bool q = op == "QLinearMatMul";
    const std::string bname = input(q ? 3 : 1);
    const Constant* w = constant(bname);
    double a_scale = 1, b_scale = 1, y_scale = 1;
    if (q) {
      float_model_ = false;
      if (auto e = need_scalar(1, a_scale)) return e;
      if (auto e = need_zero_point(2)) return e;
      if (auto e = need_scalar(4, b_scale)) return e;
      if (auto e = need_zero_point(5)) return e;
      if (auto e = need_scalar(6, y_scale)) return e;
      if (auto e = need_zero_point(7)) return e;
      if (auto e = fix_scale(*x, a_scale)) return e;
    }
    if (!w) {
      // Two activations (attention): the NPU cannot load an activation as weights.
      if (op == "Gemm") return ref.error("B must be a constant (weights)");
      if (x->nchw_image)
        return ref.error("A flattens the image " + shape_string(*x->nchw_image) +
                         " in NCHW order: B must be constant weights to absorb it");
      const std::optional<View> b = view_of(bname);
      if (!b) return ref.error("input '" + bname + "' is not produced by an earlier node");
      if (q)
        if (auto e = fix_scale(*b, b_scale)) return e;
      const Shape& bs = b->shape;
      const int64_t bk = b->transposed ? bs.pixels() : bs.pixels();
      (void)bk;
      const int64_t k = b->transposed ? bs.c : bs.pixels();
      const int64_t nn = b->transposed ? bs.pixels() : bs.c;
      if (x->transposed || xs.c != k)
        return ref.error("operands " + shape_string(xs) + " and " + shape_string(bs) +
                         (b->transposed ? " (transposed)" : "") + " do not multiply");
      Node n;
      n.name = layer_name(node, index);
      n.in = *x;
      n.other = *b;
      // On the NPU (docs/import.md, "Attention"): x . B^T reads B's block copy as weights; x . B
      // needs B^T, which B's producer writes when it is a dense layer read only here.
      const Value& bv = values_[static_cast<size_t>(b->value)];
      Node* producer = bv.producer >= 0 ? &nodes_[static_cast<size_t>(bv.producer)] : nullptr;
      const bool transposable = producer && producer->kind == Kind::Dense &&
                                !producer->transpose_out && producer->fixed_w_scale.size() <= 1 &&
                                uses_[bname] == 1 && b->mult == 1 && bname != output_name_;
      if (!opt_.host_attention && (b->transposed || transposable)) {
        n.kind = Kind::MatMul;
        if (!b->transposed) producer->transpose_out = true;
      } else {
        n.kind = Kind::Host;
        n.host.op = HostOp::MatMul;
        n.host.transpose_other = b->transposed;
      }
      add_node(std::move(n), out_name, Shape{xs.pixels(), 1, nn, 2});
      if (q) values_.back().fixed_scale = y_scale;
      return std::nullopt;
    }
    if (x->transposed) return ref.error("A is a transposed view");
    bool trans_b = false;
    double alpha = 1, beta = 1;
    if (op == "Gemm") {
      if (attr_int(node, "transA", 0) != 0) return ref.error("transA = 1 unsupported");
      trans_b = attr_int(node, "transB", 0) != 0;
      alpha = attr_float(node, "alpha", 1);
      beta = attr_float(node, "beta", 1);
    }
    if (w->dims.size() != 2)
      return ref.error("B must be a 2-D constant, got " + dims_string(w->dims));
    const int64_t k = trans_b ? w->dims[1] : w->dims[0];
    const int64_t nn = trans_b ? w->dims[0] : w->dims[1];
    if (k != xs.c)
      return ref.error("B is " + dims_string(w->dims) + (trans_b ? " (transB)" : "") +
                       " but the input is " + shape_string(xs) + " (K = " + std::to_string(xs.c) +
                       ")");
    Node n;
    n.kind = Kind::Dense;
    n.name = layer_name(node, index);
    n.in = *x;
    n.c_out = nn;
    n.w.resize(static_cast<size_t>(k * nn));
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < nn; ++j)
        n.w[static_cast<size_t>(i * nn + j)] = static_cast<float>(
            alpha * b_scale * w->v[static_cast<size_t>(trans_b ? j * k + i : i * nn + j)]);
    if (q) n.fixed_w_scale = {b_scale};
    n.b.assign(static_cast<size_t>(nn), 0.0f);
    if (op == "Gemm" && !input(2).empty()) {
      const Constant* c = constant(input(2));
      if (!c || (c->v.size() != 1 && static_cast<int64_t>(c->v.size()) != nn))
        return ref.error("C must be a constant scalar or N values");
      for (int64_t j = 0; j < nn; ++j)
        n.b[static_cast<size_t>(j)] =
            static_cast<float>(beta * c->v[c->v.size() == 1 ? 0 : static_cast<size_t>(j)]);
    }
    Shape os = xs;
    os.c = nn;
    if (x->nchw_image) n = whole_image_conv(std::move(n), *x);
    add_node(std::move(n), out_name, os);
    if (q) values_.back().fixed_scale = y_scale;
    return std::nullopt;
  }

  if (op == "Add") {
    const std::optional<View> b = view_of(input(1));
    if (!b) {
      // Bias add after a MatMul: fold into the producer's bias.
      const Constant* c = constant(input(1));
      Value& v = values_[static_cast<size_t>(x->value)];
      const Node* pn = v.producer >= 0 ? &nodes_[static_cast<size_t>(v.producer)] : nullptr;
      // The bias goes to the dense layer, or for merged heads to the first head's dense layer.
      const int into = !pn ? -1 : pn->kind == Kind::Dense ? v.producer : pn->bias_into;
      if (c && into >= 0 && uses_[input(0)] == 1 && x->mult == 1 && !pn->relu &&
          (c->v.size() == 1 || static_cast<int64_t>(c->v.size()) == xs.c)) {
        Node& p = nodes_[static_cast<size_t>(into)];
        for (int64_t j = 0; j < xs.c; ++j)
          p.b[static_cast<size_t>(j)] +=
              static_cast<float>(c->v[c->v.size() == 1 ? 0 : static_cast<size_t>(j)]);
        views_[out_name] = *x;
        return std::nullopt;
      }
      return ref.error("second input '" + input(1) +
                       "' is a constant that cannot be folded into a dense layer's bias");
    }
    if (!(b->shape == xs) || x->transposed || b->transposed)
      return ref.error("operands " + shape_string(xs) + " and " + shape_string(b->shape) +
                       " differ (no broadcasting)");
    Node n;
    n.kind = Kind::Add;
    n.name = layer_name(node, index);
    n.in = *x;
    n.other = *b;
    add_node(std::move(n), out_name, xs);
    return std::nullopt;
  }

  if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool") {
    if (xs.rank != 3) return ref.error("input is " + shape_string(xs) + ", not an NCHW image");
    const bool global = op == "GlobalAveragePool";
    const auto k = attr_ints(node, "kernel_shape");
    const auto strides = attr_ints(node, "strides");
    const auto pads = attr_ints(node, "pads");
    if (!global && (k.size() != 2 || k[0] < 1 || k[1] < 1))
      return ref.error("kernel_shape " + dims_string(k) + " must be 2 positive values");
    if (attr_int(node, "ceil_mode", 0) != 0) return ref.error("ceil_mode = 1 unsupported");
    if (!strides.empty() && (strides.size() != 2 || strides[0] != strides[1] || strides[0] < 1))
      return ref.error("strides " + dims_string(strides) + " must be equal and positive");
    if (!pads.empty() && (pads.size() != 4 || pads[0] != pads[1] || pads[0] != pads[2] ||
                          pads[0] != pads[3] || pads[0] < 0))
      return ref.error("pads " + dims_string(pads) + " must be symmetric and non-negative");
    const int64_t kh = global ? xs.h : k[0], kw = global ? xs.w : k[1];
    const int64_t stride = strides.empty() ? 1 : strides[0], pad = pads.empty() ? 0 : pads[0];
    if (xs.h + 2 * pad < kh || xs.w + 2 * pad < kw || pad >= std::min(kh, kw))
      return ref.error("window does not fit the input " + shape_string(xs));
    const Shape os{(xs.h + 2 * pad - kh) / stride + 1, (xs.w + 2 * pad - kw) / stride + 1, xs.c, 3};
    Node n;
    n.name = layer_name(node, index);
    n.in = *x;
    if (op == "MaxPool") {
      // The MAC array cannot take a maximum: host fallback.
      n.kind = Kind::Host;
      n.host.op = HostOp::MaxPool;
      n.host.kh = kh;
      n.host.kw = kw;
      n.host.stride = stride;
      n.host.pad = pad;
      add_node(std::move(n), out_name, os);
      return std::nullopt;
    }
    // Average pooling is a depthwise convolution with weights 1 / (kh * kw) on the NPU.
    if (pad != 0)
      return ref.error("padded AveragePool unsupported (its divisor varies at borders)");
    n.kind = Kind::Conv;
    n.groups = xs.c;
    n.c_out = xs.c;
    n.kh = kh;
    n.kw = kw;
    n.stride = stride;
    n.w.assign(static_cast<size_t>(kh * kw * xs.c), static_cast<float>(1.0 / double(kh * kw)));
    n.b.assign(static_cast<size_t>(xs.c), 0.0f);
    add_node(std::move(n), out_name, os);
    return std::nullopt;
  }

  if (op == "Sigmoid") {
    // Host fallback, as Softmax: the POST has no exponential (docs/import.md, "Host fallback").
    Node n;
    n.kind = Kind::Host;
    n.name = layer_name(node, index);
    n.in = *x;
    n.host.op = HostOp::Sigmoid;
    add_node(std::move(n), out_name, xs);
    values_.back().fixed_scale = 1.0 / 127;  // in (0, 1)
    return std::nullopt;
  }
  if (op == "Concat") return map_concat(node, index, ref);
  if (op == "BatchNormalization") return map_batch_norm(node, index, ref, *x);

  if (op == "Softmax" || op == "LayerNormalization" || op == "Gelu") {
    const int64_t axis = attr_int(node, "axis", -1);
    const int rank = xs.rank == 3 ? 4 : 2;
    if (op != "Gelu" && axis != -1 && axis != rank - 1)
      return ref.error("axis " + std::to_string(axis) + " unsupported (only the last axis)");
    if (op != "Gelu" && xs.rank == 3 && xs.pixels() > 1)
      return ref.error("on an image the last ONNX axis is W, not channels: unsupported");
    if (op == "Gelu" && attr(node, "approximate") && attr(node, "approximate")->s() != "none")
      return ref.error("approximate = " + attr(node, "approximate")->s() +
                       " unsupported (erf form only)");
    Node n;
    n.kind = Kind::Host;
    n.name = layer_name(node, index);
    n.in = *x;
    n.host.op = op == "Softmax" ? HostOp::Softmax : op == "Gelu" ? HostOp::Gelu : HostOp::LayerNorm;
    if (op == "LayerNormalization") {
      const Constant* g = constant(input(1));
      const Constant* b = constant(input(2));
      if (!g || static_cast<int64_t>(g->v.size()) != xs.c)
        return ref.error("scale '" + input(1) + "' must be a constant of " + std::to_string(xs.c) +
                         " values");
      n.host.gamma.assign(g->v.begin(), g->v.end());
      if (b && static_cast<int64_t>(b->v.size()) == xs.c)
        n.host.beta.assign(b->v.begin(), b->v.end());
      else if (!input(2).empty())
        return ref.error("bias '" + input(2) + "' must be a constant of " + std::to_string(xs.c) +
                         " values");
      else
        n.host.beta.assign(static_cast<size_t>(xs.c), 0.0f);
      n.host.epsilon = static_cast<float>(attr_float(node, "epsilon", 1e-5));
    }
    const bool softmax = n.host.op == HostOp::Softmax;
    add_node(std::move(n), out_name, xs);
    if (softmax) values_.back().fixed_scale = 1.0 / 127;  // probabilities in [0, 1]
    return std::nullopt;
  }

  // Layout-only and scale-only ops: views of the same int8 tensor.
  if (op == "Flatten" || op == "Reshape" || op == "Transpose" || op == "Identity" ||
      op == "Squeeze" || op == "Unsqueeze" || op == "Dropout") {
    View v = *x;
    if (op == "Transpose") {
      auto perm = attr_ints(node, "perm");
      // 2-D transposes of a matrix ([S, D] or [1, S, D]): only a host MatMul can absorb them.
      const bool swap2 =
          (perm == std::vector<int64_t>{1, 0}) || (perm == std::vector<int64_t>{0, 2, 1});
      const bool identity = [&] {
        for (size_t i = 0; i < perm.size(); ++i)
          if (perm[i] != static_cast<int64_t>(i)) return false;
        return !perm.empty();
      }();
      if (identity) {
      } else if (swap2 && xs.rank == 2) {
        v.transposed = !v.transposed;
      } else {
        return ref.error("perm " + dims_string(perm) + " is not layout-only on " +
                         shape_string(xs));
      }
      views_[out_name] = v;
      return std::nullopt;
    }
    if (op == "Flatten" || op == "Reshape" || op == "Squeeze" || op == "Unsqueeze") {
      // Layout-only when the NHWC bytes keep their meaning: the tensor is one pixel, or only
      // leading 1s change around [S, D].
      std::vector<int64_t> target;
      if (op == "Reshape") {
        const Constant* c = constant(input(1));
        if (!c) return ref.error("shape '" + input(1) + "' must be a constant");
        for (double d : c->v) target.push_back(static_cast<int64_t>(d));
      }
      if (x->transposed) return ref.error("reshaping a transposed view is not layout-only");
      // [S, D] -> [S, H, D / H] (or [1, S, H, D / H]): the split into attention heads.
      if (op == "Reshape" && xs.rank == 2 && (target.size() == 3 || target.size() == 4)) {
        const int batch = target.size() == 4 ? 1 : 0;
        const int64_t s_dim = target[static_cast<size_t>(batch)];
        const int64_t h = target[static_cast<size_t>(batch + 1)];
        const int64_t n = target[static_cast<size_t>(batch + 2)];
        if ((batch == 0 || target[0] == 1) && (s_dim == xs.pixels() || s_dim == -1) && h > 1 &&
            (n == -1 ? xs.c % h == 0 : h * n == xs.c))
          return split_heads(ref, *x, input(0), h, batch, out_name);
      }
      Shape ns = xs;
      // Flatten [1, C, H, W] -> [1, C*H*W] (Flatten axis 0 or 1, Reshape to [1, -1]).
      const bool flattens =
          xs.rank == 3 &&
          (op == "Flatten" ? attr_int(node, "axis", 1) == 1 || attr_int(node, "axis", 1) == 0 ||
                                 attr_int(node, "axis", 1) == -3
                           : op == "Reshape" && target.size() == 2 && target[0] == 1 &&
                                 (target[1] == -1 || target[1] == xs.elements()));
      if (xs.pixels() == 1) {
        ns = Shape{1, 1, xs.c, 2};
      } else if (flattens) {
        ns = Shape{1, 1, xs.elements(), 2};
        v.nchw_image = xs;
      } else if (op == "Reshape") {
        int64_t last = target.empty() ? 0 : target.back();
        int64_t lead = 1;
        for (size_t i = 0; i + 1 < target.size(); ++i) lead *= target[i];
        if (target.size() < 2 || last != xs.c || (lead != xs.pixels() && lead != -xs.pixels()))
          return ref.error("reshape of " + shape_string(xs) + " to " + dims_string(target) +
                           " is not layout-only (NHWC channels must stay last)");
        ns = Shape{xs.pixels(), 1, xs.c, xs.rank};
      } else if (xs.rank == 3) {
        return ref.error(op + " of " + shape_string(xs) +
                         " is not layout-only (NCHW flattening "
                         "order differs from NHWC)");
      }
      v.shape = ns;
    }
    views_[out_name] = v;
    return std::nullopt;
  }
  if (op == "Mul" || op == "Div") {
    double c = 0;
    if (!constant(input(1)) || constant(input(1))->v.size() != 1)
      return ref.error(
          "only multiplication/division by a positive scalar constant is supported "
          "(it changes the scale, not the int8 data)");
    c = constant(input(1))->v[0];
    if (!(c > 0)) return ref.error("scalar " + std::to_string(c) + " must be positive");
    View v = *x;
    v.mult *= op == "Mul" ? c : 1.0 / c;
    views_[out_name] = v;
    return std::nullopt;
  }
  if (op == "QuantizeLinear" || op == "DequantizeLinear") {
    double s = 0;
    if (auto e = need_scalar(1, s)) return e;
    if (!(s > 0)) return ref.error("scale must be positive");
    if (auto e = need_zero_point(2)) return e;
    if (auto e = fix_scale(*x, s)) return e;
    float_model_ = false;
    views_[out_name] = *x;
    return std::nullopt;
  }
  return ref.error("unsupported operator (docs/import.md lists what bud imports)");
}

// ---------------------------------------------------------------------------------------------
// CNN ops (docs/import.md): Concat, BatchNormalization, Flatten into a dense layer.

// Concat of N activations along channels: N - 1 host concat layers, each appending the next
// input's channels. A host layer dequantises each operand with its own scale, so the branches
// keep their calibrated scales.
std::optional<Error> Importer::map_concat(const onnx::NodeProto& node, int index,
                                          const NodeRef& ref) {
  if (node.input_size() < 2) return ref.error("needs two or more inputs");
  std::vector<View> in;
  for (int i = 0; i < node.input_size(); ++i) {
    auto v = view_of(node.input(i));
    if (!v)
      return ref.error("input '" + node.input(i) +
                       (constant(node.input(i)) ? "' is a constant: bud concatenates activations"
                                                : "' is not produced by an earlier node"));
    if (v->transposed) return ref.error("input '" + node.input(i) + "' is a transposed view");
    in.push_back(*v);
  }
  const Shape& s0 = in[0].shape;
  const int64_t axis = attr_int(node, "axis", 1);
  const bool channels = s0.rank == 3 ? axis == 1 || axis == -3 : axis == 1 || axis == -1;
  if (!channels)
    return ref.error("axis " + std::to_string(axis) + " unsupported on " + shape_string(s0) +
                     ": only the channel axis (1)");
  View acc = in[0];
  for (size_t i = 1; i < in.size(); ++i) {
    if (in[i].shape.h != acc.shape.h || in[i].shape.w != acc.shape.w)
      return ref.error("input '" + node.input(static_cast<int>(i)) + "' is " +
                       shape_string(in[i].shape) + " but the others are " +
                       shape_string(acc.shape) + " (concatenated along channels)");
    Node n;
    n.kind = Kind::Host;
    n.name = layer_name(node, index);
    n.in = acc;
    n.other = in[i];
    n.host.op = HostOp::Concat;
    Shape os = acc.shape;
    os.c += in[i].shape.c;
    const std::string name = i + 1 == in.size()
                                 ? node.output(0)
                                 : node.output(0) + "#concat" + std::to_string(i);
    add_node(std::move(n), name, os);
    acc = *view_of(name);
  }
  return std::nullopt;
}

// BatchNormalization (inference): y = (x - mean) * g + beta with g = scale / sqrt(var + eps),
// per channel. Folded into the producer's weights and bias when x is a conv or dense output read
// only here (what inference compilers do), else a depthwise 1x1 conv of weights g, bias
// beta - mean * g.
std::optional<Error> Importer::map_batch_norm(const onnx::NodeProto& node, int index,
                                              const NodeRef& ref, const View& x) {
  if (attr_int(node, "training_mode", 0) != 0)
    return ref.error("training_mode = 1 unsupported (inference only)");
  const Shape& xs = x.shape;
  const char* what[] = {"scale", "B", "input_mean", "input_var"};
  std::vector<const Constant*> p(4);
  for (int i = 0; i < 4; ++i) {
    p[static_cast<size_t>(i)] = i + 1 < node.input_size() ? constant(node.input(i + 1)) : nullptr;
    if (!p[static_cast<size_t>(i)] || static_cast<int64_t>(p[static_cast<size_t>(i)]->v.size()) != xs.c)
      return ref.error(std::string(what[i]) + " must be a constant of " + std::to_string(xs.c) +
                       " values (one per channel)");
  }
  const double eps = attr_float(node, "epsilon", 1e-5);
  std::vector<double> g(static_cast<size_t>(xs.c)), t(static_cast<size_t>(xs.c));
  for (size_t c = 0; c < g.size(); ++c) {
    const double var = p[3]->v[c] + eps;
    if (!(var > 0)) return ref.error("input_var + epsilon must be positive");
    g[c] = p[0]->v[c] / std::sqrt(var);
    t[c] = p[1]->v[c] - p[2]->v[c] * g[c];
  }
  const Value& v = values_[static_cast<size_t>(x.value)];
  Node* pn = v.producer >= 0 ? &nodes_[static_cast<size_t>(v.producer)] : nullptr;
  const bool foldable = pn && (pn->kind == Kind::Conv || pn->kind == Kind::Dense) && !pn->relu &&
                        !pn->transpose_out && pn->fixed_w_scale.empty() && !v.fixed_scale &&
                        x.mult == 1 && v.consumers == 0 && uses_[node.input(0)] == 1 &&
                        node.input(0) != output_name_;
  if (foldable) {
    const auto cols = static_cast<size_t>(pn->c_out);
    for (size_t j = 0; j < pn->w.size(); ++j)
      pn->w[j] = static_cast<float>(pn->w[j] * g[j % cols]);
    for (size_t c = 0; c < cols; ++c) pn->b[c] = static_cast<float>(pn->b[c] * g[c] + t[c]);
    views_[node.output(0)] = x;
    return std::nullopt;
  }
  if (xs.rank != 3)
    return ref.error("on " + shape_string(xs) +
                     ": only foldable into the conv or dense layer that produces its input");
  Node n;
  n.kind = Kind::Conv;
  n.name = layer_name(node, index);
  n.in = x;
  n.groups = n.c_out = xs.c;
  n.w.assign(g.begin(), g.end());
  n.b.assign(t.begin(), t.end());
  add_node(std::move(n), node.output(0), xs);
  return std::nullopt;
}

// A dense layer over an image flattened in NCHW order: the same products as a convolution whose
// kernel is the whole image, with the weight row of ONNX element (c, y, x) moved to the NHWC
// position ((y * W + x) * C + c). The NPU then reads the image as it is.
Node Importer::whole_image_conv(Node dense, const View& x) {
  const Shape& im = *x.nchw_image;
  Node n = std::move(dense);
  const std::vector<float> rows = std::move(n.w);
  const int64_t cols = n.c_out;
  n.w.assign(rows.size(), 0.0f);
  for (int64_t c = 0; c < im.c; ++c)
    for (int64_t y = 0; y < im.h; ++y)
      for (int64_t xx = 0; xx < im.w; ++xx) {
        const int64_t from = (c * im.h + y) * im.w + xx, to = (y * im.w + xx) * im.c + c;
        std::copy_n(rows.begin() + from * cols, cols, n.w.begin() + to * cols);
      }
  n.kind = Kind::Conv;
  n.kh = im.h;
  n.kw = im.w;
  n.in = View{x.value, im, x.mult, false, std::nullopt};
  return n;
}

// ---------------------------------------------------------------------------------------------
// Multi-head attention (docs/import.md): heads are separate IR values, one node per head.

std::optional<Error> Importer::split_heads(const NodeRef& ref, const View& x,
                                           const std::string& in_name, int64_t heads, int batch,
                                           const std::string& out_name) {
  const Value& v = values_[static_cast<size_t>(x.value)];
  const int pi = v.producer;
  // The heads are the column blocks of the projection's weights: the dense layer becomes one
  // dense layer per head.
  if (pi < 0 || nodes_[static_cast<size_t>(pi)].kind != Kind::Dense ||
      nodes_[static_cast<size_t>(pi)].transpose_out || nodes_[static_cast<size_t>(pi)].relu ||
      uses_[in_name] != 1 || x.mult != 1 || in_name == output_name_)
    return ref.error("splitting '" + in_name + "' into " + std::to_string(heads) +
                     " attention heads needs a dense layer (a constant-weight MatMul/Gemm) read "
                     "only by this Reshape");
  const Node whole = nodes_[static_cast<size_t>(pi)];
  const Shape whole_shape = v.shape;
  const std::optional<double> fixed = v.fixed_scale;
  const int64_t d = whole.c_out, n = d / heads, k = whole.in.shape.c;
  if (!whole.fixed_w_scale.empty() && whole.fixed_w_scale.size() != 1 &&
      static_cast<int64_t>(whole.fixed_w_scale.size()) != d)
    return ref.error("weight scales of '" + whole.name +
                     "' are neither per tensor nor per channel");
  Heads hd;
  hd.batch = batch;
  for (int64_t h = 0; h < heads; ++h) {
    Node p = whole;
    p.name = whole.name + "_h" + std::to_string(h);
    for (int j = 2; used_names_.count(p.name); ++j)
      p.name = whole.name + "_h" + std::to_string(h) + "_" + std::to_string(j);
    used_names_[p.name] = 1;
    p.c_out = n;
    p.w.assign(static_cast<size_t>(k * n), 0.0f);
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < n; ++j)
        p.w[static_cast<size_t>(i * n + j)] = whole.w[static_cast<size_t>(i * d + h * n + j)];
    p.b.assign(whole.b.begin() + h * n, whole.b.begin() + (h + 1) * n);
    if (whole.fixed_w_scale.size() > 1)
      p.fixed_w_scale.assign(whole.fixed_w_scale.begin() + h * n,
                             whole.fixed_w_scale.begin() + (h + 1) * n);
    Shape hs = whole_shape;
    hs.c = n;
    if (h == 0) {
      // The first head takes the projection's place (its value keeps the index).
      nodes_[static_cast<size_t>(pi)] = std::move(p);
      values_[static_cast<size_t>(x.value)].shape = hs;
      hd.views.push_back(View{x.value, hs, 1, false, {}});
    } else {
      add_node(std::move(p), out_name + "#h" + std::to_string(h), hs);
      values_.back().fixed_scale = fixed;
      hd.views.push_back(views_[out_name + "#h" + std::to_string(h)]);
    }
  }
  heads_[out_name] = std::move(hd);
  return std::nullopt;
}

std::optional<Error> Importer::map_heads(const onnx::NodeProto& node, int index,
                                         const NodeRef& ref) {
  const std::string& op = node.op_type();
  const std::string in_name = node.input(0);
  const std::string out_name = node.output(0);
  const Heads& in = heads_.at(in_name);
  const int64_t nheads = static_cast<int64_t>(in.views.size());
  if (out_name == output_name_)
    return ref.error("the graph output holds attention heads (merge them with Transpose and "
                     "Reshape first)");
  if (op == "Transpose") {
    // Perms over [S, H, N] / [H, S, N] (a leading batch of 1 stays first).
    std::vector<int64_t> perm = attr_ints(node, "perm");
    if (in.batch == 1) {
      if (perm.size() != 4 || perm[0] != 0)
        return ref.error("perm " + dims_string(perm) + " moves the batch dimension");
      perm.erase(perm.begin());
      for (auto& p : perm) --p;
    }
    Heads out = in;
    const bool swap_sh = perm == std::vector<int64_t>{1, 0, 2};
    bool transposed = in.views.front().transposed;
    if (!in.head_major && swap_sh) {
      out.head_major = true;  // [S, H, N] -> [H, S, N]
    } else if (!in.head_major && perm == std::vector<int64_t>{1, 2, 0}) {
      out.head_major = true;  // [S, H, N] -> [H, N, S]: each head transposed (K^T)
      transposed = !transposed;
    } else if (in.head_major && perm == std::vector<int64_t>{0, 2, 1}) {
      transposed = !transposed;
    } else if (in.head_major && swap_sh && !transposed) {
      out.head_major = false;  // [H, S, N] -> [S, H, N], before the merge
    } else {
      return ref.error("perm " + dims_string(attr_ints(node, "perm")) +
                       " of attention heads is not a head split, merge or per-head transpose");
    }
    for (auto& v : out.views) v.transposed = transposed;
    heads_[out_name] = std::move(out);
    return std::nullopt;
  }
  if (op == "Reshape") {
    // [S, H, N] -> [S, H * N]: the heads merged back into one tensor.
    const Constant* c = node.input_size() > 1 ? constant(node.input(1)) : nullptr;
    if (!c) return ref.error("shape '" + (node.input_size() > 1 ? node.input(1) : std::string()) +
                             "' must be a constant");
    std::vector<int64_t> target;
    for (double d : c->v) target.push_back(static_cast<int64_t>(d));
    const View& v0 = in.views.front();
    const int64_t s_rows = v0.shape.pixels(), width = nheads * v0.shape.c;
    const bool ok = !in.head_major && !v0.transposed &&
                    ((target.size() == 2 && (target[0] == s_rows || target[0] == -1) &&
                      (target[1] == width || target[1] == -1)) ||
                     (target.size() == 3 && target[0] == 1 &&
                      (target[1] == s_rows || target[1] == -1) &&
                      (target[2] == width || target[2] == -1)));
    if (!ok)
      return ref.error("reshape of attention heads to " + dims_string(target) +
                       " is not the merge [S, H * N] of [S, H, N]");
    merged_[out_name] = in.views;
    return std::nullopt;
  }
  if (!in.head_major || in.views.front().transposed)
    return ref.error(op + " of attention heads needs them as [H, S, N] (after the split's "
                          "Transpose)");
  // Any other op runs once per head, on the heads' own tensors (names "T#hN"); a second input
  // holding heads is taken head by head.
  const std::set<std::string> per_head = {"MatMul", "Mul", "Div", "Softmax", "Relu",
                                          "Identity", "Dropout", "Gelu"};
  if (!per_head.count(op))
    return ref.error(op + " on attention heads is unsupported (docs/import.md, \"Multi-head "
                          "attention\")");
  Heads out;
  out.head_major = true;
  out.batch = in.batch;
  for (int64_t h = 0; h < nheads; ++h) {
    const std::string tag = "#h" + std::to_string(h);
    onnx::NodeProto hn = node;
    hn.set_name((node.name().empty() ? op + "_" + std::to_string(index) : node.name()) + "_h" +
                std::to_string(h));
    for (int i = 0; i < hn.input_size(); ++i) {
      auto it = heads_.find(node.input(i));
      if (it == heads_.end()) continue;
      if (static_cast<int64_t>(it->second.views.size()) != nheads || !it->second.head_major)
        return ref.error("inputs '" + in_name + "' and '" + node.input(i) +
                         "' hold different heads");
      const std::string name = node.input(i) + tag;
      views_[name] = it->second.views[static_cast<size_t>(h)];
      uses_[name] = uses_[node.input(i)];
      hn.set_input(i, name);
    }
    hn.set_output(0, out_name + tag);
    // The last axis of [H, S, N] ([1, H, S, N]) is the last axis of each head's [S, N].
    for (auto& a : *hn.mutable_attribute())
      if (a.name() == "axis" && a.i() == 2 + in.batch) a.set_i(-1);
    if (auto e = map_node(hn, index)) return e;
    out.views.push_back(views_.at(out_name + tag));
  }
  heads_[out_name] = std::move(out);
  return std::nullopt;
}

std::optional<Error> Importer::map_merged(const onnx::NodeProto& node, int index,
                                          const NodeRef& ref) {
  const std::string& op = node.op_type();
  const std::vector<View>& heads = merged_.at(node.input(0));
  const int64_t n = heads.front().shape.c, width = n * static_cast<int64_t>(heads.size());
  const Constant* w = node.input_size() > 1 ? constant(node.input(1)) : nullptr;
  // The output projection over concatenated heads is the sum of each head times its block of
  // weight rows: one dense layer per head, added up.
  if (!(op == "MatMul" || op == "Gemm") || !w || w->dims.size() != 2)
    return merged_misread(ref, node.input(0), op);
  bool trans_b = false;
  double alpha = 1;
  if (op == "Gemm") {
    if (attr_int(node, "transA", 0) != 0) return ref.error("transA = 1 unsupported");
    trans_b = attr_int(node, "transB", 0) != 0;
    alpha = attr_float(node, "alpha", 1);
  }
  const int64_t k = trans_b ? w->dims[1] : w->dims[0], nn = trans_b ? w->dims[0] : w->dims[1];
  if (k != width)
    return ref.error("B is " + dims_string(w->dims) + " but the merged heads are " +
                     std::to_string(width) + " wide");
  const std::string out_name = node.output(0);
  const std::string base = node.name().empty() ? op + "_" + std::to_string(index) : node.name();
  std::string sum;
  int first_dense = -1;
  for (size_t h = 0; h < heads.size(); ++h) {
    const std::string tag = "#h" + std::to_string(h);
    views_[node.input(0) + tag] = heads[h];
    uses_[node.input(0) + tag] = 1;
    // Head h's block of rows of B, as [N, nn].
    Constant block{{n, nn}, std::vector<double>(static_cast<size_t>(n * nn)), w->data_type};
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < nn; ++j) {
        const int64_t r = static_cast<int64_t>(h) * n + i;
        block.v[static_cast<size_t>(i * nn + j)] =
            alpha * w->v[static_cast<size_t>(trans_b ? j * k + r : r * nn + j)];
      }
    constants_[node.input(1) + tag] = std::move(block);
    onnx::NodeProto hn;
    hn.set_name(base + "_h" + std::to_string(h));
    hn.set_op_type("Gemm");
    hn.add_input(node.input(0) + tag);
    hn.add_input(node.input(1) + tag);
    // The bias (Gemm's C) once, on the first head's layer.
    if (h == 0 && op == "Gemm" && node.input_size() > 2 && !node.input(2).empty()) {
      hn.add_input(node.input(2));
      if (const auto* beta = attr(node, "beta")) *hn.add_attribute() = *beta;
    }
    const std::string part = heads.size() == 1 ? out_name : out_name + tag;
    hn.add_output(part);
    if (auto e = map_node(hn, index)) return e;
    if (h == 0) first_dense = values_[static_cast<size_t>(views_.at(part).value)].producer;
    if (h == 0) {
      sum = part;
      continue;
    }
    onnx::NodeProto add;
    add.set_name(base + "_sum" + std::to_string(h));
    add.set_op_type("Add");
    add.add_input(sum);
    add.add_input(part);
    sum = h + 1 == heads.size() ? out_name : out_name + "#sum" + std::to_string(h);
    add.add_output(sum);
    uses_[add.input(0)] = 1;
    uses_[part] = 1;
    if (auto e = map_node(add, index)) return e;
  }
  if (heads.size() > 1)
    nodes_[static_cast<size_t>(values_[static_cast<size_t>(views_.at(out_name).value)].producer)]
        .bias_into = first_dense;
  return std::nullopt;
}

FloatTensor Importer::make_input(uint64_t seed) const {
  emu::Rng rng(seed);
  FloatTensor v(static_cast<size_t>(values_[static_cast<size_t>(input_value_)].shape.elements()));
  for (double& x : v) x = static_cast<double>(rng.range(-1000000, 1000000)) / 1e6;
  return v;
}

std::vector<FloatTensor> Importer::run_float(const FloatTensor& input) const {
  std::vector<FloatTensor> vals(values_.size());
  vals[static_cast<size_t>(input_value_)] = input;
  for (const Node& n : nodes_) vals[static_cast<size_t>(n.out)] = run_node(n, values_, vals);
  return vals;
}

// A POST multiplier/shift for the real factor m > 0: the largest shift that keeps |mult| in
// [1, 16383] (most precision without approaching int16 overflow).
workload::Quant post_quant(double m) {
  workload::Quant q;
  for (int s = 31; s >= 0; --s) {
    const double mult = std::round(std::ldexp(m, s));
    if (mult <= 16383) {
      q.shift = static_cast<uint8_t>(s);
      q.mult = static_cast<int16_t>(std::max(1.0, mult));
      return q;
    }
  }
  q.shift = 0;
  q.mult = 16383;
  return q;
}

std::optional<Error> Importer::quantise() {
  // Per-tensor activation scales: the largest magnitude over the calibration inputs / 127.
  std::vector<double> maxabs(values_.size(), 0.0);
  for (int i = 0; i < kCalibrationSamples; ++i) {
    uint64_t seed = kCalibrationSeed + static_cast<uint64_t>(i);
    const auto vals = run_float(make_input(emu::Rng::splitmix64(seed)));
    for (size_t v = 0; v < vals.size(); ++v)
      for (double x : vals[v]) maxabs[v] = std::max(maxabs[v], std::abs(x));
  }
  for (size_t v = 0; v < values_.size(); ++v)
    values_[v].scale =
        values_[v].fixed_scale ? *values_[v].fixed_scale : std::max(maxabs[v], 1e-6) / 127.0;
  // Max pooling keeps the scale (exact in int8).
  for (const Node& n : nodes_)
    if (n.kind == Kind::Host && n.host.op == HostOp::MaxPool &&
        !values_[static_cast<size_t>(n.out)].fixed_scale)
      values_[static_cast<size_t>(n.out)].scale =
          values_[static_cast<size_t>(n.in.value)].scale * n.in.mult;
  // Add: POST has one multiplier for the sum, so both operands need the same scale. Give the
  // operand whose producer can requantise freely (an NPU or host layer read only by this add)
  // the scale of the other.
  for (const Node& n : nodes_) {
    if (n.kind != Kind::Add) continue;
    auto eff = [&](const View& v) { return values_[static_cast<size_t>(v.value)].scale * v.mult; };
    if (std::abs(eff(n.in) - eff(n.other)) <= 1e-9 * eff(n.in)) continue;
    auto settable = [&](const View& v) {
      const Value& val = values_[static_cast<size_t>(v.value)];
      return val.producer >= 0 && !val.fixed_scale && val.consumers == 1;
    };
    if (settable(n.other) && settable(n.in)) {
      // Both free: the larger scale, so that neither saturates.
      const double common = std::max(eff(n.in), eff(n.other));
      for (const View* v : {&n.in, &n.other}) {
        Value& val = values_[static_cast<size_t>(v->value)];
        val.scale = common / v->mult;
        val.fixed_scale = val.scale;
      }
    } else if (settable(n.other)) {
      Value& val = values_[static_cast<size_t>(n.other.value)];
      val.scale = eff(n.in) / n.other.mult;
      val.fixed_scale = val.scale;
    } else if (settable(n.in)) {
      Value& val = values_[static_cast<size_t>(n.in.value)];
      val.scale = eff(n.other) / n.in.mult;
      val.fixed_scale = val.scale;
    } else {
      return Error{file_ + ": layer '" + n.name + "' (Add): operands have different scales (" +
                   std::to_string(eff(n.in)) + ", " + std::to_string(eff(n.other)) +
                   ") and neither producer can be requantised to match"};
    }
  }
  return std::nullopt;
}

Result<std::string> Importer::emit() const {
  workload::WorkloadSpec spec;
  spec.set_name(file_.substr(file_.find_last_of('/') + 1));
  spec.set_description("imported from " + file_ + " by bud import (" +
                       (float_model_ ? "float model quantised by bud" : "quantised model") + ")");
  spec.set_seed(opt_.seed);
  const Value& iv = values_[static_cast<size_t>(input_value_)];
  if (iv.shape.rank == 2) {
    spec.add_input_shape(static_cast<int32_t>(iv.shape.h));
    spec.add_input_shape(static_cast<int32_t>(iv.shape.c));
  } else {
    for (int64_t d : {iv.shape.h, iv.shape.w, iv.shape.c})
      spec.add_input_shape(static_cast<int32_t>(d));
  }
  // The run input, quantised with the input's scale.
  const FloatTensor in = make_input(opt_.seed);
  std::string bytes(in.size(), '\0');
  for (size_t i = 0; i < in.size(); ++i)
    bytes[i] = static_cast<char>(
        static_cast<int8_t>(std::clamp(std::round(in[i] / iv.scale), -128.0, 127.0)));
  spec.set_input_data(bytes);

  auto ref_name = [&](const View& v) -> std::string {
    const Value& val = values_[static_cast<size_t>(v.value)];
    return val.producer < 0 ? "input" : nodes_[static_cast<size_t>(val.producer)].name;
  };
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    workload::LayerSpec* l = spec.add_layer();
    l->set_name(n.name);
    const int prev = i == 0 ? input_value_ : nodes_[i - 1].out;
    if (n.in.value != prev) l->set_input(ref_name(n.in));
    const double s_in = values_[static_cast<size_t>(n.in.value)].scale * n.in.mult;
    const double s_out = values_[static_cast<size_t>(n.out)].scale;
    switch (n.kind) {
      case Kind::Conv:
      case Kind::Dense: {
        // Weight scales: the model's (QLinear*), else max |w| / 127 over the tensor or, per
        // channel (ImportOptions::per_channel), over each output channel's weights.
        const auto cols = static_cast<size_t>(n.c_out);
        std::vector<double> wmax(cols, 0.0);
        double wmax_all = 0;
        for (size_t j = 0; j < n.w.size(); ++j) {
          const double a = std::abs(static_cast<double>(n.w[j]));
          wmax[j % cols] = std::max(wmax[j % cols], a);
          wmax_all = std::max(wmax_all, a);
        }
        // A transposed output runs the channels along the pixels: one factor for the tensor.
        const bool per_channel = n.fixed_w_scale.empty() ? opt_.per_channel && !n.transpose_out
                                                         : n.fixed_w_scale.size() > 1;
        std::vector<double> ws(cols);
        for (size_t c = 0; c < cols; ++c) {
          if (!n.fixed_w_scale.empty())
            ws[c] = n.fixed_w_scale[per_channel ? c : 0];
          else if (per_channel && wmax[c] > 0)
            ws[c] = wmax[c] / 127.0;
          else  // per tensor, or an all-zero channel: the tensor's scale
            ws[c] = std::max(wmax_all, 1e-12) / 127.0;
        }
        std::string wq(n.w.size(), '\0');
        for (size_t j = 0; j < n.w.size(); ++j)
          wq[j] = static_cast<char>(
              static_cast<int8_t>(std::clamp(std::round(n.w[j] / ws[j % cols]), -127.0, 127.0)));
        l->set_weights(wq);
        for (size_t c = 0; c < n.b.size(); ++c)
          l->add_bias(static_cast<int32_t>(
              std::clamp(std::round(n.b[c] / (s_in * ws[c])), -2147483648.0, 2147483647.0)));
        if (per_channel) {
          for (size_t c = 0; c < cols; ++c) {
            const workload::Quant q = post_quant(s_in * ws[c] / s_out);
            l->mutable_quant()->add_channel_mult(q.mult);
            l->mutable_quant()->add_channel_shift(q.shift);
          }
        } else {
          const workload::Quant q = post_quant(s_in * ws[0] / s_out);
          l->mutable_quant()->set_mult(q.mult);
          l->mutable_quant()->set_shift(q.shift);
        }
        if (n.kind == Kind::Conv) {
          auto* c = l->mutable_conv2d();
          c->set_c_out(static_cast<int32_t>(n.c_out));
          c->set_kh(static_cast<int32_t>(n.kh));
          c->set_kw(static_cast<int32_t>(n.kw));
          if (n.stride != 1) c->set_stride(static_cast<int32_t>(n.stride));
          if (!n.pads.symmetric())
            for (int64_t p : {n.pads.top, n.pads.left, n.pads.bottom, n.pads.right})
              c->add_pads(static_cast<int32_t>(p));
          else if (n.pads.top != 0)
            c->set_pad(static_cast<int32_t>(n.pads.top));
          if (n.groups != 1) c->set_groups(static_cast<int32_t>(n.groups));
          c->set_relu(n.relu);
        } else {
          auto* d = l->mutable_dense();
          d->set_m(static_cast<int32_t>(n.in.shape.pixels()));
          d->set_k(static_cast<int32_t>(n.in.shape.c));
          d->set_n(static_cast<int32_t>(n.c_out));
          d->set_relu(n.relu);
          if (n.transpose_out) d->set_transpose_output(true);
        }
        break;
      }
      case Kind::Add:
      case Kind::Relu: {
        const workload::Quant q = post_quant(s_in / s_out);
        l->mutable_quant()->set_mult(q.mult);
        l->mutable_quant()->set_shift(q.shift);
        if (n.kind == Kind::Add) {
          l->mutable_add()->set_other(ref_name(n.other));
          l->mutable_add()->set_relu(n.relu);
        } else {
          l->mutable_relu();
        }
        break;
      }
      case Kind::MatMul: {
        // The workload's matmul is x . other^T: `other` is the transposed view's value, or the
        // producer that writes B^T.
        const double s_other =
            values_[static_cast<size_t>(n.other.value)].scale * n.other.mult;
        const workload::Quant q = post_quant(s_in * s_other / s_out);
        l->mutable_quant()->set_mult(q.mult);
        l->mutable_quant()->set_shift(q.shift);
        l->mutable_matmul()->set_other(ref_name(n.other));
        l->mutable_matmul()->set_relu(n.relu);
        break;
      }
      case Kind::Host: {
        auto* h = l->mutable_host();
        h->set_in_scale(static_cast<float>(s_in));
        h->set_out_scale(static_cast<float>(s_out));
        switch (n.host.op) {
          case HostOp::Softmax:
            h->set_op(workload::HostSpec::SOFTMAX);
            break;
          case HostOp::Gelu:
            h->set_op(workload::HostSpec::GELU);
            break;
          case HostOp::Sigmoid:
            h->set_op(workload::HostSpec::SIGMOID);
            break;
          case HostOp::Concat:
            h->set_op(workload::HostSpec::CONCAT);
            h->set_other(ref_name(n.other));
            h->set_other_scale(static_cast<float>(
                values_[static_cast<size_t>(n.other.value)].scale * n.other.mult));
            break;
          case HostOp::LayerNorm:
            h->set_op(workload::HostSpec::LAYER_NORM);
            for (float g : n.host.gamma) h->add_gamma(g);
            for (float b : n.host.beta) h->add_beta(b);
            h->set_epsilon(n.host.epsilon);
            break;
          case HostOp::MaxPool:
            h->set_op(workload::HostSpec::MAX_POOL);
            h->set_kh(static_cast<int32_t>(n.host.kh));
            h->set_kw(static_cast<int32_t>(n.host.kw));
            h->set_stride(static_cast<int32_t>(n.host.stride));
            h->set_pad(static_cast<int32_t>(n.host.pad));
            break;
          case HostOp::MatMul:
            h->set_op(workload::HostSpec::MATMUL);
            h->set_other(ref_name(n.other));
            h->set_other_scale(static_cast<float>(
                values_[static_cast<size_t>(n.other.value)].scale * n.other.mult));
            h->set_transpose_other(n.other.transposed);
            break;
        }
        break;
      }
    }
  }
  std::string text;
  google::protobuf::TextFormat::Printer printer;
  if (!printer.PrintToString(spec, &text)) return Error{file_ + ": cannot print the workload"};
  return "# Generated by `bud import` from " + file_ + ". Scales: docs/import.md.\n" + text;
}

}  // namespace

bool is_onnx_path(std::string_view path) {
  return path.size() > 5 && path.substr(path.size() - 5) == ".onnx";
}

Result<ImportResult> import_bytes(std::string_view bytes, const std::string& file,
                                  const ImportOptions& options) {
  Importer imp(file, options);
  return imp.run(bytes);
}

Result<ImportResult> import_file(const std::string& path, const ImportOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot open ONNX file"};
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Error{path + ": cannot read ONNX file"};
  return import_bytes(ss.str(), path, options);
}

}  // namespace bud::onnx_import
