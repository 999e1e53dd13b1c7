// The importer: multi-head attention (docs/import.md, "Multi-head attention").
#include "emu/onnx/GraphImporter.h"

#include <algorithm>
#include <cmath>

namespace bud::onnx_import::detail {

std::optional<Error> GraphImporter::split_heads(const NodeRef& ref, const View& x,
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

std::optional<Error> GraphImporter::map_heads(const onnx::NodeProto& node, int index,
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

std::optional<Error> GraphImporter::map_merged(const onnx::NodeProto& node, int index,
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

}  // namespace bud::onnx_import::detail
