// The importer: CNN ops (docs/import.md): Concat, BatchNormalization, Flatten into a dense head.
#include "emu/onnx/GraphImporter.h"

#include <algorithm>
#include <cmath>

namespace bud::onnx_import::detail {

// Concat of N activations along channels: N - 1 host concat layers, each appending the next
// input's channels. A host layer dequantises each operand with its own scale, so the branches
// keep their calibrated scales.
std::optional<Error> GraphImporter::map_concat(const onnx::NodeProto& node, int index,
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
std::optional<Error> GraphImporter::map_batch_norm(const onnx::NodeProto& node, int index,
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
Node GraphImporter::whole_image_conv(Node dense, const View& x) {
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

}  // namespace bud::onnx_import::detail
