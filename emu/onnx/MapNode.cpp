// The importer: one ONNX node to the float IR (docs/import.md, "What is imported").
#include "emu/onnx/GraphImporter.h"

#include <algorithm>
#include <cmath>

namespace bud::onnx_import::detail {

std::optional<Error> GraphImporter::map_node(const onnx::NodeProto& node, int index) {
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

}  // namespace bud::onnx_import::detail
