// The fp32 network and the quality figures. Plain loops, like the direct reference: it must be
// obviously right.
#include "emu/workload/Quality.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "emu/core/Rng.h"

namespace bud::workload {
namespace {

double factor(const Quant& q) { return std::ldexp(static_cast<double>(q.mult), -q.shift); }

}  // namespace

std::vector<std::vector<double>> float_network(const Workload& w) {
  std::vector<double> input;
  for (const int8_t v : generate_input(w)) input.push_back(v);
  std::vector<std::vector<double>> out;
  auto operand = [&](int ref) -> const std::vector<double>& {
    return ref == kInputTensor ? input : out[static_cast<size_t>(ref)];
  };
  for (size_t i = 0; i < w.layers.size(); ++i) {
    const Layer& l = w.layers[i];
    const Shape& os = l.out_shape;
    const std::vector<double>& x = operand(l.input);
    std::vector<double> y(static_cast<size_t>(os.elements()), 0.0);
    const LayerData data = generate_layer_data(w, static_cast<int>(i));
    switch (l.kind) {
      case LayerKind::Dense:
        for (int64_t r = 0; r < l.m; ++r)
          for (int64_t j = 0; j < l.n; ++j) {
            double acc = data.bias[static_cast<size_t>(j)];
            for (int64_t k = 0; k < l.k; ++k)
              acc += x[static_cast<size_t>(r * l.k + k)] *
                     data.weights[static_cast<size_t>(k * l.n + j)];
            // transpose_output: y^T, n pixels of m channels
            y[static_cast<size_t>(l.transpose_output ? j * l.m + r : r * l.n + j)] = acc;
          }
        break;
      case LayerKind::MatMul: {
        const std::vector<double>& b = operand(l.other);
        for (int64_t r = 0; r < l.m; ++r)
          for (int64_t j = 0; j < l.n; ++j) {
            double acc = 0;
            for (int64_t k = 0; k < l.k; ++k)
              acc += x[static_cast<size_t>(r * l.k + k)] * b[static_cast<size_t>(j * l.k + k)];
            y[static_cast<size_t>(r * l.n + j)] = acc;
          }
        break;
      }
      case LayerKind::Conv2d: {
        const Shape& is = l.in_shape;
        const int64_t cg = is.c / l.groups, ng = os.c / l.groups;
        for (int64_t oy = 0; oy < os.h; ++oy)
          for (int64_t ox = 0; ox < os.w; ++ox)
            for (int64_t co = 0; co < os.c; ++co) {
              const int64_t g = co / ng;
              double acc = data.bias[static_cast<size_t>(co)];
              for (int64_t ky = 0; ky < l.kh; ++ky)
                for (int64_t kx = 0; kx < l.kw; ++kx) {
                  const int64_t iy = oy * l.stride + ky - l.pads.top,
                                ix = ox * l.stride + kx - l.pads.left;
                  if (iy < 0 || iy >= is.h || ix < 0 || ix >= is.w) continue;
                  for (int64_t c = 0; c < cg; ++c)
                    acc += x[static_cast<size_t>((iy * is.w + ix) * is.c + g * cg + c)] *
                           data.weights[static_cast<size_t>(((ky * l.kw + kx) * cg + c) * os.c + co)];
                }
              y[static_cast<size_t>((oy * os.w + ox) * os.c + co)] = acc;
            }
        break;
      }
      case LayerKind::Add: {
        std::vector<double> fresh;
        if (l.other == kFreshTensor)
          for (const int8_t v : data.other) fresh.push_back(v);
        const std::vector<double>& b = l.other == kFreshTensor ? fresh : operand(l.other);
        for (size_t e = 0; e < y.size(); ++e) y[e] = x[e] + b[e];
        break;
      }
      case LayerKind::Relu:
        y = x;
        break;
      case LayerKind::Host: {
        const HostParams& p = l.host;
        std::vector<double> xs = x, other;
        for (double& v : xs) v *= p.in_scale;
        Shape other_shape;
        if (host_op_reads_other(p.op)) {
          other = operand(l.other);
          for (double& v : other) v *= p.other_scale;
          other_shape = l.other == kInputTensor ? w.input
                                                : w.layers[static_cast<size_t>(l.other)].out_shape;
        }
        y = host_op_values(p, l.in_shape, os, xs, other_shape, other);
        for (double& v : y) v /= p.out_scale;
        out.push_back(std::move(y));
        continue;
      }
    }
    const auto nc = static_cast<size_t>(os.c);
    for (size_t e = 0; e < y.size(); ++e) {
      double& v = y[e];
      v *= factor(l.quant_of(static_cast<int64_t>(e % nc)));
      if (l.relu) v = std::max(v, 0.0);
    }
    out.push_back(std::move(y));
  }
  return out;
}

std::vector<LayerQuality> network_quality(const Workload& w, const ReferenceResult& ref,
                                          const std::vector<std::vector<double>>& fp32) {
  std::vector<LayerQuality> q;
  for (size_t i = 0; i < w.layers.size() && i < ref.layers.size() && i < fp32.size(); ++i) {
    const Layer& l = w.layers[i];
    const Tensor& t = ref.layers[i];
    const std::vector<double>& f = fp32[i];
    LayerQuality lq;
    lq.layer = l.name;
    lq.host = l.kind == LayerKind::Host;
    lq.precision = lq.host ? Precision::Int8 : l.precision;
    lq.elements = f.size();
    double se = 0, sr = 0, sa = 0;
    const Shape& s = t.shape;
    for (int64_t p = 0; p < s.pixels(); ++p)
      for (int64_t c = 0; c < s.c; ++c) {
        const double r = f[static_cast<size_t>(p * s.c + c)];
        double d = t.value(p / s.w, p % s.w, c) - r;
        if (!std::isfinite(d)) d = std::numeric_limits<double>::infinity();
        se += d * d;
        sr += r * r;
        sa += std::abs(d);
        lq.max_abs_error = std::max(lq.max_abs_error, std::abs(d));
      }
    lq.mean_abs_error = f.empty() ? 0 : sa / static_cast<double>(f.size());
    lq.snr_db = se > 0 ? (std::isinf(se) ? -99 : 10 * std::log10(std::max(sr, 1e-300) / se)) : 99;
    q.push_back(lq);
  }
  return q;
}

Agreement output_agreement(const Workload& w, const isa::ArrayConfig& array, int inputs) {
  Agreement a;
  if (w.layers.empty()) return a;
  const std::vector<int8_t> base = generate_input(w);
  const auto [lo, hi] = std::minmax_element(base.begin(), base.end());
  const int lo_v = base.empty() ? -16 : *lo, hi_v = base.empty() ? 16 : *hi;
  for (int k = 0; k < inputs; ++k) {
    Workload wk = w;
    wk.reference.reset();
    uint64_t state = w.seed ^ (uint64_t{0xA6EE3E47} + static_cast<uint64_t>(k));
    emu::Rng rng(emu::Rng::splitmix64(state));
    wk.input_data.resize(static_cast<size_t>(w.input.elements()));
    for (auto& x : wk.input_data) x = static_cast<int8_t>(rng.range(lo_v, hi_v));
    const ReferenceResult ref = run_reference(wk, array);
    const std::vector<std::vector<double>> fp32 = float_network(wk);
    const Tensor& t = ref.layers.back();
    const std::vector<double>& f = fp32.back();
    const Shape& s = t.shape;
    std::vector<int> order(static_cast<size_t>(s.c));
    std::vector<double> row(static_cast<size_t>(s.c));
    for (int64_t p = 0; p < s.pixels(); ++p) {
      auto want = f.begin() + p * s.c;
      const int64_t fp_arg = std::max_element(want, want + s.c) - want;
      for (int64_t c = 0; c < s.c; ++c) {
        const double v = t.value(p / s.w, p % s.w, c);  // a NaN ranks last
        row[static_cast<size_t>(c)] = std::isnan(v) ? -std::numeric_limits<double>::infinity() : v;
      }
      std::iota(order.begin(), order.end(), 0);
      // The NPU's ranking of the row (ties: the lower index first, as max_element picks).
      std::stable_sort(order.begin(), order.end(), [&](int x, int y) {
        return row[static_cast<size_t>(x)] > row[static_cast<size_t>(y)];
      });
      if (order.front() == fp_arg) a.top1 += 1;
      if (std::find(order.begin(), order.begin() + std::min<int64_t>(5, s.c), fp_arg) !=
          order.begin() + std::min<int64_t>(5, s.c))
        a.top5 += 1;
      ++a.rows;
    }
    ++a.inputs;
  }
  if (a.rows) {
    a.top1 /= static_cast<double>(a.rows);
    a.top5 /= static_cast<double>(a.rows);
  }
  return a;
}

std::vector<Fallback> apply_auto_precision(Workload& w, const isa::ArrayConfig& array,
                                           double min_snr_db) {
  for (Layer& l : w.layers) l.precision = Precision::Int8;
  resolve_precisions(w);
  const std::vector<std::vector<double>> fp32 = float_network(w);
  std::vector<Fallback> taken;
  // Each round moves at least one int8 layer to BF16, so there are at most as many rounds as
  // layers.
  for (size_t round = 0; round < w.layers.size(); ++round) {
    const std::vector<LayerQuality> q = network_quality(w, run_reference(w, array), fp32);
    const auto bad = std::find_if(q.begin(), q.end(), [&](const LayerQuality& lq) {
      return !lq.host && lq.precision == Precision::Int8 && lq.snr_db < min_snr_db;
    });
    if (bad == q.end()) break;
    const int li = static_cast<int>(bad - q.begin());
    Fallback f{w.layers[static_cast<size_t>(li)].name, bad->snr_db, min_snr_db, {}};
    w.layers[static_cast<size_t>(li)].precision = Precision::Bf16;
    for (Layer& r : w.layers)
      if (r.kind != LayerKind::Host && (r.input == li || (r.kind == LayerKind::Add && r.other == li)) &&
          r.precision != Precision::Bf16) {
        r.precision = Precision::Bf16;
        f.readers.push_back(r.name);
      }
    taken.push_back(std::move(f));
    resolve_precisions(w);
  }
  return taken;
}

}  // namespace bud::workload
