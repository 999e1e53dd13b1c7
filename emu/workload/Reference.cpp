// Plain-loop reference of every layer kind. Deliberately naive: it must be obviously right (its
// only concession to speed is the loop order, which keeps the weight rows contiguous).
#include "emu/workload/Reference.h"

#include <algorithm>
#include <cmath>

#include "emu/numeric/Float.h"

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

int64_t padded_channels(int64_t c, const isa::ArrayConfig& a) {
  const int64_t b = a.rows;
  return (c + b - 1) / b * b;
}

// An empty bf16 tensor of shape s (padding lanes +0).
Tensor bf16_tensor(const Shape& s, const isa::ArrayConfig& a) {
  Tensor t;
  t.shape = s;
  t.padded_c = padded_channels(s.c, a);
  t.bf16.assign(static_cast<size_t>(s.pixels() * t.padded_c), 0);
  return t;
}

// An int8 tensor as bf16 (exact).
Tensor widen(const Tensor& q, const isa::ArrayConfig& a) {
  if (q.is_bf16()) return q;
  Tensor t = bf16_tensor(q.shape, a);
  for (int64_t p = 0; p < q.shape.pixels(); ++p)
    for (int64_t c = 0; c < q.shape.c; ++c)
      t.bf16[static_cast<size_t>(p * t.padded_c + c)] = numeric::bf16_from_float(
          static_cast<float>(q.data[static_cast<size_t>(p * q.shape.c + c)]));
  return t;
}

constexpr uint16_t kBf16One = 0x3f80;

// The fp32 accumulators of a BF16 layer over every padded output lane (pixels x nb*B), in the
// order the MAC array sums (docs/isa.md, "BF16 GEMM"): per lane, from the bias (or +0), one
// balanced-tree dot of L = B/2 products per reduction block, blocks in order. The reduction runs
// over the padded layout the lowering uses (docs/workloads.md): a conv's (tap, padded channel),
// zero weights where groups differ, +0 inputs outside the image.
std::vector<uint32_t> bf16_accumulators(const Layer& l, const Tensor& x, const Tensor* y,
                                        const LayerData& data, const isa::ArrayConfig& a) {
  const int64_t B = a.rows, L = B / 2;
  const Shape& os = l.out_shape;
  const int64_t np = padded_channels(os.c, a), pixels = os.pixels();
  std::vector<uint32_t> acc(static_cast<size_t>(pixels * np), 0);
  std::vector<uint16_t> in(static_cast<size_t>(L)), wt(static_cast<size_t>(L));
  if (l.reads_blocks()) {
    // matmul: INP rows are x's pixels, WGT columns `other`'s pixels, from +0. A transposed
    // dense: INP rows are W^T's rows (output pixel p = channel p of y), WGT columns x's pixels,
    // from the bias of row p (padding lanes +0). Both reduce over K in blocks of L lanes.
    const bool mm = l.kind == LayerKind::MatMul;
    const Tensor& cols = mm ? *y : x;
    const int64_t kb_n = (l.k + L - 1) / L;
    const int64_t real = mm ? l.n : l.m;  // real output lanes
    for (int64_t p = 0; p < pixels; ++p)
      for (int64_t o = 0; o < np; ++o) {
        uint32_t sum =
            !mm && o < real ? numeric::int32_to_fp32(data.bias[static_cast<size_t>(p)]) : 0;
        for (int64_t kb = 0; kb < kb_n; ++kb) {
          for (int64_t i = 0; i < L; ++i) {
            const int64_t row = kb * L + i;
            uint16_t xv = 0, wv = 0;
            if (mm)
              xv = x.bf16[static_cast<size_t>(p * x.padded_c + row)];
            else if (row < l.k)
              xv = numeric::bf16_from_float(
                  static_cast<float>(data.weights[static_cast<size_t>(row * l.n + p)]));
            if (o < real) wv = cols.bf16[static_cast<size_t>(o * cols.padded_c + row)];
            in[static_cast<size_t>(i)] = xv;
            wt[static_cast<size_t>(i)] = wv;
          }
          sum = numeric::add_fp32(sum, numeric::dot_bf16(in.data(), wt.data(), static_cast<int>(L)));
        }
        acc[static_cast<size_t>(p * np + o)] = sum;
      }
    return acc;
  }
  auto wbf16 = [&](int64_t k, int64_t o) {
    return numeric::bf16_from_float(
        static_cast<float>(data.weights[static_cast<size_t>(k * os.c + o)]));
  };
  if (l.kind == LayerKind::Dense || l.kind == LayerKind::Conv2d) {
    const bool conv = l.kind == LayerKind::Conv2d;
    const Shape& is = l.in_shape;
    const int64_t cp = x.padded_c;
    const int64_t kb_n = conv ? l.kh * l.kw * cp / L : (l.k + L - 1) / L;
    const int64_t cg = is.c / std::max<int64_t>(l.groups, 1),
                  ng = os.c / std::max<int64_t>(l.groups, 1);
    for (int64_t p = 0; p < pixels; ++p) {
      const int64_t oy = p / os.w, ox = p % os.w;
      for (int64_t o = 0; o < np; ++o) {
        uint32_t sum = o < os.c ? numeric::int32_to_fp32(data.bias[static_cast<size_t>(o)]) : 0;
        for (int64_t kb = 0; kb < kb_n; ++kb) {
          for (int64_t i = 0; i < L; ++i) {
            const int64_t row = kb * L + i;
            uint16_t xv = 0, wv = 0;
            if (!conv) {
              xv = x.bf16[static_cast<size_t>(p * cp + row)];  // m pixels of K channels
              if (row < l.k && o < os.c) wv = wbf16(row, o);
            } else {
              const int64_t tap = row / cp, ci = row % cp;
              const int64_t iy = oy * l.stride + tap / l.kw - l.pads.top,
                            ix = ox * l.stride + tap % l.kw - l.pads.left;
              if (iy >= 0 && iy < is.h && ix >= 0 && ix < is.w) xv = x.bf16_at(iy, ix, ci);
              if (ci < is.c && o < os.c && ci / cg == o / ng) wv = wbf16(tap * cg + ci % cg, o);
            }
            in[static_cast<size_t>(i)] = xv;
            wt[static_cast<size_t>(i)] = wv;
          }
          sum = numeric::add_fp32(sum, numeric::dot_bf16(in.data(), wt.data(), static_cast<int>(L)));
        }
        acc[static_cast<size_t>(p * np + o)] = sum;
      }
    }
    return acc;
  }
  // Add and relu: per B-channel block, a GEMM row of K = B (two reduction blocks) times the
  // identity, from +0; an add runs a second such GEMM on the other operand into the same lanes.
  for (int64_t p = 0; p < pixels; ++p)
    for (int64_t o = 0; o < np; ++o) {
      const int64_t blk = o / B * B, lane = o % B;
      uint32_t sum = 0;
      for (const Tensor* t : {&x, y}) {
        if (!t) continue;
        for (int64_t kb = 0; kb < 2; ++kb) {
          for (int64_t i = 0; i < L; ++i) {
            in[static_cast<size_t>(i)] = t->bf16[static_cast<size_t>(p * np + blk + kb * L + i)];
            wt[static_cast<size_t>(i)] = kb * L + i == lane ? kBf16One : 0;
          }
          sum = numeric::add_fp32(sum, numeric::dot_bf16(in.data(), wt.data(), static_cast<int>(L)));
        }
      }
      acc[static_cast<size_t>(p * np + o)] = sum;
    }
  return acc;
}

// POST's float path for one lane (docs/isa.md): bf16(v) x scale, v fp32.
uint32_t post_product(uint32_t v, uint16_t scale) {
  return numeric::mul_bf16(numeric::fp32_to_bf16(v), scale);
}

uint16_t post_to_bf16(uint32_t v, uint16_t scale, bool relu) {
  const uint16_t h = numeric::fp32_to_bf16(post_product(v, scale));
  return relu && (h & 0x8000u) && h != numeric::kBf16CanonicalNan ? uint16_t{0} : h;
}

// Output of a layer from its accumulators (fp32 bit patterns when `fp32`, else int32), every
// padded lane (`np` per pixel), through POST's float path to the layer's output type.
Tensor float_post(const Layer& l, const std::vector<uint32_t>& acc, int64_t np, bool fp32,
                  const isa::ArrayConfig& a, uint64_t& saturations) {
  const int64_t pixels = l.out_shape.pixels();
  // Each lane's factor: the layer's, or per channel its channel's (padding lanes: `quant`).
  std::vector<uint16_t> lane_scale(static_cast<size_t>(np));
  for (int64_t o = 0; o < np; ++o)
    lane_scale[static_cast<size_t>(o)] = post_scale_bf16(l.quant_of(o));
  auto scale = [&](int64_t o) { return lane_scale[static_cast<size_t>(o)]; };
  auto v = [&](size_t i) {
    return fp32 ? acc[i] : numeric::int32_to_fp32(static_cast<int32_t>(acc[i]));
  };
  if (l.out_type == Precision::Bf16) {
    Tensor t = bf16_tensor(l.out_shape, a);
    for (int64_t p = 0; p < pixels; ++p)
      for (int64_t o = 0; o < t.padded_c; ++o)
        t.bf16[static_cast<size_t>(p * t.padded_c + o)] =
            post_to_bf16(v(static_cast<size_t>(p * np + o)), scale(o), l.relu);
    return t;
  }
  Tensor t;
  t.shape = l.out_shape;
  t.data.resize(static_cast<size_t>(l.out_shape.elements()));
  const int8_t lo = l.relu ? 0 : -128;
  for (int64_t p = 0; p < pixels; ++p)
    for (int64_t o = 0; o < np; ++o) {
      bool sat = false;
      const int8_t q =
          numeric::fp32_to_int8(post_product(v(static_cast<size_t>(p * np + o)), scale(o)), &sat);
      saturations += sat;
      if (o < l.out_shape.c)
        t.data[static_cast<size_t>(p * l.out_shape.c + o)] = std::max(q, lo);
    }
  return t;
}

}  // namespace

double Tensor::value(int64_t y, int64_t x, int64_t c) const {
  if (is_bf16()) return numeric::fp32_as_float(numeric::bf16_to_fp32(bf16_at(y, x, c)));
  return at(y, x, c);
}

uint16_t post_scale_bf16(const Quant& q) {
  return numeric::bf16_from_float(std::ldexp(static_cast<float>(q.mult), -static_cast<int>(q.shift)));
}

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
    case HostOp::Sigmoid:
      for (size_t i = 0; i < y.size(); ++i) y[i] = 1.0 / (1.0 + std::exp(-x[i]));
      break;
    case HostOp::Concat: {
      const int64_t bc = other_shape.c, n = os.c;
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t j = 0; j < c; ++j) y[static_cast<size_t>(r * n + j)] = at(r, j);
        for (int64_t j = 0; j < bc; ++j)
          y[static_cast<size_t>(r * n + c + j)] = other[static_cast<size_t>(r * bc + j)];
      }
      break;
    }
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
                         const std::vector<Tensor>& earlier, const isa::ArrayConfig& array) {
  const Layer& l = w.layers[static_cast<size_t>(index)];
  const HostParams& p = l.host;
  auto dequantised = [](const Tensor& t, double scale) {
    std::vector<double> v(static_cast<size_t>(t.shape.elements()));
    for (int64_t px = 0; px < t.shape.pixels(); ++px)
      for (int64_t c = 0; c < t.shape.c; ++c)
        v[static_cast<size_t>(px * t.shape.c + c)] = t.value(px / t.shape.w, px % t.shape.w, c) * scale;
    return v;
  };
  const Tensor& x = operand(l.input, input, earlier);
  Shape other_shape;
  std::vector<double> other;
  if (host_op_reads_other(p.op)) {
    const Tensor& b = operand(l.other, input, earlier);
    other_shape = b.shape;
    other = dequantised(b, p.other_scale);
  }
  const std::vector<double> y =
      host_op_values(p, l.in_shape, l.out_shape, dequantised(x, p.in_scale), other_shape, other);
  if (l.out_type == Precision::Bf16) {
    // Read by BF16 layers: the value in output-scale units, rounded to bf16 (no saturation).
    Tensor out = bf16_tensor(l.out_shape, array);
    for (int64_t px = 0; px < l.out_shape.pixels(); ++px)
      for (int64_t c = 0; c < l.out_shape.c; ++c)
        out.bf16[static_cast<size_t>(px * out.padded_c + c)] = numeric::bf16_from_float(
            static_cast<float>(y[static_cast<size_t>(px * l.out_shape.c + c)] / p.out_scale));
    return out;
  }
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
      if (l.transpose_output) {  // y^T: n pixels of m channels
        std::vector<int32_t> t(acc.size());
        for (int64_t i = 0; i < l.m; ++i)
          for (int64_t j = 0; j < l.n; ++j)
            t[static_cast<size_t>(j * l.m + i)] = acc[static_cast<size_t>(i * l.n + j)];
        acc = std::move(t);
      }
      break;
    case LayerKind::MatMul: {
      // y[i][j] = sum over kk of x[i][kk] . other[j][kk] (both m/n pixels of k channels).
      const std::vector<int8_t>& b = operand(l.other, input, earlier).data;
      for (int64_t i = 0; i < l.m; ++i)
        for (int64_t j = 0; j < l.n; ++j) {
          int32_t sum = 0;
          for (int64_t kk = 0; kk < l.k; ++kk)
            sum = mac(sum, x.data[static_cast<size_t>(i * l.k + kk)],
                      b[static_cast<size_t>(j * l.k + kk)]);
          acc[static_cast<size_t>(i * l.n + j)] = sum;
        }
      break;
    }
    case LayerKind::Conv2d: {
      // The same order trick: output channels innermost, over a contiguous row of W.
      const Shape& is = l.in_shape;
      for (int64_t oy = 0; oy < os.h; ++oy)
        for (int64_t ox = 0; ox < os.w; ++ox) {
          int32_t* out = &acc[static_cast<size_t>((oy * os.w + ox) * os.c)];
          for (int64_t co = 0; co < os.c; ++co) out[co] = data.bias[static_cast<size_t>(co)];
          for (int64_t ky = 0; ky < l.kh; ++ky)
            for (int64_t kx = 0; kx < l.kw; ++kx) {
              const int64_t iy = oy * l.stride + ky - l.pads.top;
              const int64_t ix = ox * l.stride + kx - l.pads.left;
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
    const auto c = static_cast<int64_t>(j % static_cast<size_t>(l.out_shape.c));
    out.data[j] = requantize(acc[j], l.quant_of(c), l.relu, &sat);
    saturations += sat;
  }
  return out;
}

ReferenceResult run_reference(const Workload& w, const isa::ArrayConfig& array) {
  ReferenceResult r;
  r.input.shape = w.input;
  r.input.data = generate_input(w);
  if (w.input_type == Precision::Bf16) r.input = widen(r.input, array);
  for (size_t i = 0; i < w.layers.size(); ++i) {
    const Layer& l = w.layers[i];
    const int li = static_cast<int>(i);
    if (l.kind == LayerKind::Host) {
      r.layers.push_back(host_layer_output(w, li, r.input, r.layers, array));
      continue;
    }
    const LayerData data = generate_layer_data(w, li);
    const int64_t np = padded_channels(l.out_shape.c, array);
    if (l.precision == Precision::Int8) {
      const std::vector<int32_t> acc = layer_accumulators(w, li, r.input, r.layers, data);
      if (l.out_type == Precision::Int8) {
        r.layers.push_back(requantize_layer(l, acc, r.saturations));
        continue;
      }
      // int32 accumulators (padding lanes 0) through the float path to bf16.
      std::vector<uint32_t> wide(static_cast<size_t>(l.out_shape.pixels() * np), 0);
      for (int64_t p = 0; p < l.out_shape.pixels(); ++p)
        for (int64_t o = 0; o < l.out_shape.c; ++o)
          wide[static_cast<size_t>(p * np + o)] =
              static_cast<uint32_t>(acc[static_cast<size_t>(p * l.out_shape.c + o)]);
      r.layers.push_back(float_post(l, wide, np, false, array, r.saturations));
      continue;
    }
    const Tensor& x = operand(l.input, r.input, r.layers);
    Tensor fresh;
    const Tensor* y = nullptr;
    if (l.kind == LayerKind::MatMul) y = &operand(l.other, r.input, r.layers);
    if (l.kind == LayerKind::Add) {
      if (l.other == kFreshTensor) {
        fresh = widen(Tensor{l.out_shape, data.other, {}, 0}, array);
        y = &fresh;
      } else {
        y = &operand(l.other, r.input, r.layers);
      }
    }
    const std::vector<uint32_t> acc = bf16_accumulators(l, x, y, data, array);
    r.layers.push_back(float_post(l, acc, np, true, array, r.saturations));
  }
  return r;
}

ReferenceResult reference_of(const Workload& w, const isa::ArrayConfig& array) {
  return w.reference && !has_bf16(w) ? *w.reference : run_reference(w, array);
}

}  // namespace bud::workload
