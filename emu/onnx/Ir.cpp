// The importer's float IR: reading ONNX tensors and attributes, and float execution.
#include "emu/onnx/Ir.h"

#include <algorithm>
#include <cstring>

#include "emu/workload/Reference.h"

namespace bud::onnx_import::detail {

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

// ---------------------------------------------------------------------------------------------
// Float execution of the IR (the fp32 reference and calibration)

std::vector<double> view_data(const std::vector<FloatTensor>& vals, const View& v) {
  std::vector<double> d = vals[static_cast<size_t>(v.value)];
  if (v.mult != 1)
    for (double& x : d) x *= v.mult;
  return d;
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

}  // namespace bud::onnx_import::detail
