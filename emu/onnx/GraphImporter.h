// The mapping of one ONNX graph to a bud workload (docs/import.md): read_graph maps every node to
// the float IR (map_node and the op families in MapNode.cpp, MapCnn.cpp, MapAttention.cpp),
// quantise gives every value a scale, emit writes the workload, and run measures the result
// against the fp32 network. Internal to the importer (emu/onnx/Importer.h is the interface).
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "emu/onnx/Importer.h"
#include "emu/onnx/Ir.h"

namespace bud::onnx_import::detail {

class GraphImporter {
 public:
  GraphImporter(std::string file, const ImportOptions& options)
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

// A POST multiplier/shift for the real factor m > 0.
workload::Quant post_quant(double m);

}  // namespace bud::onnx_import::detail
