// Plain-loop reference of every layer kind. Deliberately naive: it must be obviously right (its
// only concession to speed is the loop order, which keeps the weight rows contiguous).
#include "emu/workload/Reference.h"

#include <algorithm>
#include <cmath>

namespace bud::workload {
namespace {

// int32 wrapping multiply-accumulate, as the MAC array does it.
int32_t mac(int32_t acc, int8_t a, int8_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(acc) +
                              static_cast<uint32_t>(static_cast<int32_t>(a) * b));
}

const Tensor& operand(int ref, const Tensor& input, const std::vector<Tensor>& earlier) {
  return ref == kInputTensor ? input : earlier[static_cast<size_t>(ref)];
}

int8_t to_int8(double v, double scale) {
  const double r = std::round(v / scale);
  return static_cast<int8_t>(std::clamp(r, -128.0, 127.0));
}

}  // namespace

std::vector<double> host_op_values(const HostParams& p, const Shape& is, const Shape& os,
                                   const std::vector<double>& x, const Shape& other_shape,
                                   const std::vector<double>& other) {
  std::vector<double> y(static_cast<size_t>(os.elements()), 0.0);
  const int64_t rows = is.pixels(), c = is.c;
  auto at = [&](int64_t r, int64_t j) { return x[static_cast<size_t>(r * c + j)]; };
  switch (p.op) {
    case HostOp::Softmax:
      for (int64_t r = 0; r < rows; ++r) {
        double mx = -1e300, sum = 0;
        for (int64_t j = 0; j < c; ++j) mx = std::max(mx, at(r, j));
        for (int64_t j = 0; j < c; ++j)
          sum += y[static_cast<size_t>(r * c + j)] = std::exp(at(r, j) - mx);
        for (int64_t j = 0; j < c; ++j) y[static_cast<size_t>(r * c + j)] /= sum;
      }
      break;
    case HostOp::LayerNorm:
      for (int64_t r = 0; r < rows; ++r) {
        double mean = 0, var = 0;
        for (int64_t j = 0; j < c; ++j) mean += at(r, j);
        mean /= static_cast<double>(c);
        for (int64_t j = 0; j < c; ++j) var += (at(r, j) - mean) * (at(r, j) - mean);
        var /= static_cast<double>(c);
        const double inv = 1.0 / std::sqrt(var + p.epsilon);
        for (int64_t j = 0; j < c; ++j)
          y[static_cast<size_t>(r * c + j)] =
              (at(r, j) - mean) * inv * p.gamma[static_cast<size_t>(j)] +
              p.beta[static_cast<size_t>(j)];
      }
      break;
    case HostOp::Gelu:
      for (size_t i = 0; i < y.size(); ++i)
        y[i] = 0.5 * x[i] * (1.0 + std::erf(x[i] / std::sqrt(2.0)));
      break;
    case HostOp::MaxPool:
      for (int64_t oy = 0; oy < os.h; ++oy)
        for (int64_t ox = 0; ox < os.w; ++ox)
          for (int64_t ch = 0; ch < c; ++ch) {
            double mx = -1e300;
            for (int64_t ky = 0; ky < p.kh; ++ky)
              for (int64_t kx = 0; kx < p.kw; ++kx) {
                const int64_t iy = oy * p.stride + ky - p.pad, ix = ox * p.stride + kx - p.pad;
                if (iy < 0 || iy >= is.h || ix < 0 || ix >= is.w) continue;  // never wins
                mx = std::max(mx, x[static_cast<size_t>((iy * is.w + ix) * c + ch)]);
              }
            y[static_cast<size_t>((oy * os.w + ox) * c + ch)] = mx;
          }
      break;
    case HostOp::MatMul: {
      const int64_t n = os.c, bc = other_shape.c;
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double acc = 0;
          for (int64_t k = 0; k < c; ++k)
            acc += at(i, k) * (p.transpose_other ? other[static_cast<size_t>(j * bc + k)]
                                                 : other[static_cast<size_t>(k * bc + j)]);
          y[static_cast<size_t>(i * n + j)] = acc;
        }
      break;
    }
  }
  return y;
}

Tensor host_layer_output(const Workload& w, int index, const Tensor& input,
                         const std::vector<Tensor>& earlier) {
  const Layer& l = w.layers[static_cast<size_t>(index)];
  const HostParams& p = l.host;
  auto dequantised = [](const Tensor& t, double scale) {
    std::vector<double> v(t.data.size());
    for (size_t i = 0; i < v.size(); ++i) v[i] = t.data[i] * scale;
    return v;
  };
  const Tensor& x = operand(l.input, input, earlier);
  Shape other_shape;
  std::vector<double> other;
  if (p.op == HostOp::MatMul) {
    const Tensor& b = operand(l.other, input, earlier);
    other_shape = b.shape;
    other = dequantised(b, p.other_scale);
  }
  const std::vector<double> y =
      host_op_values(p, l.in_shape, l.out_shape, dequantised(x, p.in_scale), other_shape, other);
  Tensor out;
  out.shape = l.out_shape;
  out.data.resize(y.size());
  for (size_t i = 0; i < y.size(); ++i) out.data[i] = to_int8(y[i], p.out_scale);
  return out;
}

int8_t requantize(int32_t acc, const Quant& q, bool relu, bool* saturated) {
  const int64_t p = static_cast<int64_t>(acc) * q.mult;
  const int64_t r = q.shift ? (p + (int64_t{1} << (q.shift - 1))) >> q.shift : p;
  const int64_t s = r < -128 ? -128 : (r > 127 ? 127 : r);
  if (saturated) *saturated = r != s;
  const int64_t lo = relu ? 0 : -128;
  return static_cast<int8_t>(s < lo ? lo : s);
}

std::vector<int32_t> layer_accumulators(const Workload& w, int index, const Tensor& input,
                                        const std::vector<Tensor>& earlier, const LayerData& data) {
  const Layer& l = w.layers[static_cast<size_t>(index)];
  const Tensor& x = operand(l.input, input, earlier);
  const Shape& os = l.out_shape;
  std::vector<int32_t> acc(static_cast<size_t>(os.elements()), 0);
  switch (l.kind) {
    case LayerKind::Dense:
      // x viewed as m x k (pixels x channels), W is k x n. The sum runs over kk in the outer
      // loop so that the inner loop walks a row of W (contiguous); the result is the same sum.
      for (int64_t i = 0; i < l.m; ++i) {
        int32_t* out = &acc[static_cast<size_t>(i * l.n)];
        for (int64_t j = 0; j < l.n; ++j) out[j] = data.bias[static_cast<size_t>(j)];
        for (int64_t kk = 0; kk < l.k; ++kk) {
          const int8_t a = x.data[static_cast<size_t>(i * l.k + kk)];
          const int8_t* wrow = &data.weights[static_cast<size_t>(kk * l.n)];
          for (int64_t j = 0; j < l.n; ++j) out[j] = mac(out[j], a, wrow[j]);
        }
      }
      break;
    case LayerKind::Conv2d: {
      // The same order trick: output channels innermost, over a contiguous row of W.
      const Shape& is = l.in_shape;
      for (int64_t oy = 0; oy < os.h; ++oy)
        for (int64_t ox = 0; ox < os.w; ++ox) {
          int32_t* out = &acc[static_cast<size_t>((oy * os.w + ox) * os.c)];
          for (int64_t co = 0; co < os.c; ++co) out[co] = data.bias[static_cast<size_t>(co)];
          for (int64_t ky = 0; ky < l.kh; ++ky)
            for (int64_t kx = 0; kx < l.kw; ++kx) {
              const int64_t iy = oy * l.stride + ky - l.pad;
              const int64_t ix = ox * l.stride + kx - l.pad;
              if (iy < 0 || iy >= is.h || ix < 0 || ix >= is.w) continue;  // zero padding
              // Group g: input channels [g*cg, (g+1)*cg) feed outputs [g*ng, (g+1)*ng).
              const int64_t cg = is.c / l.groups, ng = os.c / l.groups;
              for (int64_t ci = 0; ci < is.c; ++ci) {
                const int64_t g = ci / cg;
                const int64_t kk = (ky * l.kw + kx) * cg + ci % cg;
                const int8_t a = x.at(iy, ix, ci);
                const int8_t* wrow = &data.weights[static_cast<size_t>(kk * os.c)];
                for (int64_t co = g * ng; co < (g + 1) * ng; ++co)
                  out[co] = mac(out[co], a, wrow[co]);
              }
            }
        }
      break;
    }
    case LayerKind::Add: {
      const std::vector<int8_t>& b =
          l.other == kFreshTensor ? data.other : operand(l.other, input, earlier).data;
      for (size_t i = 0; i < acc.size(); ++i) acc[i] = int32_t{x.data[i]} + int32_t{b[i]};
      break;
    }
    case LayerKind::Relu:
      for (size_t i = 0; i < acc.size(); ++i) acc[i] = x.data[i];
      break;
    case LayerKind::Host:
      break;  // no accumulators: host_layer_output()
  }
  return acc;
}

Tensor requantize_layer(const Layer& l, const std::vector<int32_t>& acc, uint64_t& saturations) {
  Tensor out;
  out.shape = l.out_shape;
  out.data.resize(acc.size());
  for (size_t j = 0; j < acc.size(); ++j) {
    bool sat = false;
    out.data[j] = requantize(acc[j], l.quant, l.relu, &sat);
    saturations += sat;
  }
  return out;
}

ReferenceResult run_reference(const Workload& w) {
  ReferenceResult r;
  r.input.shape = w.input;
  r.input.data = generate_input(w);
  for (size_t i = 0; i < w.layers.size(); ++i) {
    if (w.layers[i].kind == LayerKind::Host) {
      r.layers.push_back(host_layer_output(w, static_cast<int>(i), r.input, r.layers));
      continue;
    }
    const LayerData data = generate_layer_data(w, static_cast<int>(i));
    const std::vector<int32_t> acc =
        layer_accumulators(w, static_cast<int>(i), r.input, r.layers, data);
    r.layers.push_back(requantize_layer(w.layers[i], acc, r.saturations));
  }
  return r;
}

ReferenceResult reference_of(const Workload& w) {
  return w.reference ? *w.reference : run_reference(w);
}

}  // namespace bud::workload
