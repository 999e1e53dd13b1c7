// The importer's float IR (docs/import.md): ONNX tensors mapped to NHWC values and views, the
// nodes that compute them (conv and dense weights as K x N im2col matrices), and the float
// execution that is both the fp32 reference and what calibration runs. Internal to the importer.
#pragma once

#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "emu/workload/Result.h"
#include "emu/workload/Workload.h"

namespace bud::onnx_import::detail {

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
Error merged_misread(const NodeRef& ref, const std::string& name, const std::string& op);
/// "[1, 2, 3]".
std::string dims_string(const std::vector<int64_t>& d);
std::string shape_string(const Shape& s);

// An initializer or Constant value.
struct Constant {
  std::vector<int64_t> dims;
  std::vector<double> v;
  int data_type = 0;
};
// Numeric data of a tensor as doubles, or nullopt with the reason in `why`.
std::optional<std::vector<double>> tensor_values(const onnx::TensorProto& t, std::string& why);

// Attribute lookup.
const onnx::AttributeProto* attr(const onnx::NodeProto& n, const char* name);
int64_t attr_int(const onnx::NodeProto& n, const char* name, int64_t dflt);
double attr_float(const onnx::NodeProto& n, const char* name, double dflt);
std::vector<int64_t> attr_ints(const onnx::NodeProto& n, const char* name);
// ONNX shape (batch first) -> bud Shape. Rank 4 [1, C, H, W]; rank 3 [1, S, D]; rank 2 [S, D].
std::optional<Shape> to_shape(const std::vector<int64_t>& d, std::string& why);

// Float execution of the IR.
using FloatTensor = std::vector<double>;
// A view's values (its value times the view's factor).
std::vector<double> view_data(const std::vector<FloatTensor>& vals, const View& v);
// One node on the values computed so far.
FloatTensor run_node(const Node& n, const std::vector<Value>& values,
                     const std::vector<FloatTensor>& vals);

}  // namespace bud::onnx_import::detail
