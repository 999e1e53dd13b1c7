// Plain-loop reference of every layer kind. Deliberately naive: it must be obviously right (its
// only concession to speed is the loop order, which keeps the weight rows contiguous).
#include "emu/workload/Reference.h"

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

}  // namespace

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
  const Tensor& x = index == 0 ? input : earlier[static_cast<size_t>(index - 1)];
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
              for (int64_t ci = 0; ci < is.c; ++ci) {
                const int64_t kk = (ky * l.kw + kx) * is.c + ci;
                const int8_t a = x.at(iy, ix, ci);
                const int8_t* wrow = &data.weights[static_cast<size_t>(kk * os.c)];
                for (int64_t co = 0; co < os.c; ++co) out[co] = mac(out[co], a, wrow[co]);
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
