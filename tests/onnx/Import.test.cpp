// ONNX import: op mapping, bit-exact runs of the imported production-shape models on the golden
// model against the direct reference, quantisation error against fp32, error cases, and the
// textpb round trip.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <onnx/onnx_pb.h>

#include "emu/golden/Checker.h"
#include "emu/golden/GoldenNpu.h"
#include "emu/onnx/Importer.h"
#include "emu/workload/Lowering.h"
#include "emu/workload/Reference.h"

using namespace bud;
using namespace bud::workload;

namespace {

std::string model_path(const std::string& name) {
  return std::string(BUD_SOURCE_DIR) + "/examples/onnx/" + name + ".onnx";
}
std::string data_path(const std::string& name) {
  return std::string(BUD_SOURCE_DIR) + "/tests/onnx/data/" + name;
}

onnx_import::ImportResult imported(const std::string& name) {
  auto r = onnx_import::import_file(model_path(name));
  INFO(r.error());
  REQUIRE(r.ok());
  return std::move(r).value();
}

Workload loaded(const onnx_import::ImportResult& r, const std::string& name) {
  auto w = parse_workload(r.text, name);
  INFO(w.error());
  REQUIRE(w.ok());
  return std::move(w).value();
}

// Kinds of the workload's layers, e.g. "conv2d conv2d host add".
std::string kinds(const Workload& w) {
  std::string s;
  for (const Layer& l : w.layers)
    s += std::string(s.empty() ? "" : " ") +
         (l.kind == LayerKind::Host ? host_op_name(l.host.op) : layer_kind_name(l.kind));
  return s;
}

// Lowers, runs on the golden model and compares every NPU layer with the direct reference.
golden::CheckReport golden_check(const Workload& w, Program* out = nullptr) {
  auto p = lower(w);
  INFO(p.error());
  REQUIRE(p.ok());
  golden::GoldenNpu npu(p->dram_bytes);
  const golden::RunResult run = golden::run_program(npu, *p);
  INFO(run.error);
  REQUIRE(run.ok);
  if (out) *out = *p;
  return golden::check_outputs(*p, run_reference(w), npu.dram());
}

// An independent fp32 evaluator of the CNN ops in ONNX's own NCHW layout, straight from the
// model's nodes and initializers: what the importer's NHWC float network (weight permutations,
// folds and all) must reproduce.
class NchwEvaluator {
 public:
  struct T {
    std::vector<int64_t> dims;  // [1, C, H, W] or [1, N]
    std::vector<double> v;
  };
  explicit NchwEvaluator(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    REQUIRE(model_.ParseFromIstream(&in));
    for (const auto& t : model_.graph().initializer()) {
      std::vector<float> f(t.raw_data().size() / 4);
      std::memcpy(f.data(), t.raw_data().data(), f.size() * 4);
      vals_[t.name()] = T{{t.dims().begin(), t.dims().end()}, {f.begin(), f.end()}};
    }
  }
  // x in NHWC order (the importer's fp32_input); the output as the importer lays it out.
  std::vector<double> run(const std::vector<double>& nhwc) {
    const auto& d = model_.graph().input(0).type().tensor_type().shape();
    const int64_t c = d.dim(1).dim_value(), h = d.dim(2).dim_value(), w = d.dim(3).dim_value();
    T x{{1, c, h, w}, std::vector<double>(nhwc.size())};
    for (int64_t ci = 0; ci < c; ++ci)
      for (int64_t p = 0; p < h * w; ++p) x.v[static_cast<size_t>(ci * h * w + p)] = nhwc[static_cast<size_t>(p * c + ci)];
    vals_[model_.graph().input(0).name()] = x;
    for (const auto& n : model_.graph().node()) vals_[n.output(0)] = node(n);
    return vals_[model_.graph().output(0).name()].v;  // [1, N]: the same order
  }

 private:
  static std::vector<int64_t> ints(const onnx::NodeProto& n, const char* name) {
    for (const auto& a : n.attribute())
      if (a.name() == name) return {a.ints().begin(), a.ints().end()};
    return {};
  }
  T node(const onnx::NodeProto& n) {
    const T& x = vals_.at(n.input(0));
    const std::string& op = n.op_type();
    T y = x;
    if (op == "Relu") {
      for (double& e : y.v) e = std::max(e, 0.0);
    } else if (op == "Sigmoid") {
      for (double& e : y.v) e = 1 / (1 + std::exp(-e));
    } else if (op == "Flatten") {
      y.dims = {1, static_cast<int64_t>(x.v.size())};
    } else if (op == "BatchNormalization") {
      const int64_t c = x.dims[1], hw = static_cast<int64_t>(x.v.size()) / c;
      const auto &g = vals_.at(n.input(1)).v, &b = vals_.at(n.input(2)).v,
                 &m = vals_.at(n.input(3)).v, &var = vals_.at(n.input(4)).v;
      for (int64_t ci = 0; ci < c; ++ci)
        for (int64_t p = 0; p < hw; ++p) {
          double& e = y.v[static_cast<size_t>(ci * hw + p)];
          e = (e - m[ci]) / std::sqrt(var[ci] + 1e-5) * g[ci] + b[ci];
        }
    } else if (op == "Concat") {
      y.v.clear();
      y.dims[1] = 0;
      for (const auto& in : n.input()) {
        const T& t = vals_.at(in);
        y.v.insert(y.v.end(), t.v.begin(), t.v.end());  // channel-major: blocks append
        y.dims[1] += t.dims[1];
      }
    } else if (op == "Gemm") {
      const T& w = vals_.at(n.input(1));
      const T& b = vals_.at(n.input(2));
      const int64_t k = w.dims[0], nn = w.dims[1];
      y = T{{1, nn}, std::vector<double>(static_cast<size_t>(nn))};
      for (int64_t j = 0; j < nn; ++j) {
        double acc = b.v[static_cast<size_t>(j)];
        for (int64_t i = 0; i < k; ++i) acc += x.v[static_cast<size_t>(i)] * w.v[static_cast<size_t>(i * nn + j)];
        y.v[static_cast<size_t>(j)] = acc;
      }
    } else if (op == "GlobalAveragePool") {
      const int64_t c = x.dims[1], hw = x.dims[2] * x.dims[3];
      y = T{{1, c, 1, 1}, std::vector<double>(static_cast<size_t>(c), 0.0)};
      for (int64_t ci = 0; ci < c; ++ci)
        for (int64_t p = 0; p < hw; ++p) y.v[static_cast<size_t>(ci)] += x.v[static_cast<size_t>(ci * hw + p)] / double(hw);
    } else if (op == "Conv" || op == "MaxPool") {
      const bool conv = op == "Conv";
      const T* w = conv ? &vals_.at(n.input(1)) : nullptr;
      const auto k = conv ? std::vector<int64_t>{w->dims[2], w->dims[3]} : ints(n, "kernel_shape");
      auto st = ints(n, "strides"), pd = ints(n, "pads");
      if (st.empty()) st = {1, 1};
      if (pd.empty()) pd = {0, 0, 0, 0};
      const int64_t ci_n = x.dims[1], h = x.dims[2], wd = x.dims[3];
      const int64_t co_n = conv ? w->dims[0] : ci_n;
      const int64_t oh = (h + pd[0] + pd[2] - k[0]) / st[0] + 1, ow = (wd + pd[1] + pd[3] - k[1]) / st[1] + 1;
      y = T{{1, co_n, oh, ow}, std::vector<double>(static_cast<size_t>(co_n * oh * ow))};
      for (int64_t co = 0; co < co_n; ++co)
        for (int64_t oy = 0; oy < oh; ++oy)
          for (int64_t ox = 0; ox < ow; ++ox) {
            double acc = conv ? vals_.at(n.input(2)).v[static_cast<size_t>(co)] : -1e300;
            for (int64_t ci = conv ? 0 : co; ci < (conv ? ci_n : co + 1); ++ci)
              for (int64_t ky = 0; ky < k[0]; ++ky)
                for (int64_t kx = 0; kx < k[1]; ++kx) {
                  const int64_t iy = oy * st[0] + ky - pd[0], ix = ox * st[1] + kx - pd[1];
                  if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
                  const double e = x.v[static_cast<size_t>((ci * h + iy) * wd + ix)];
                  if (conv)
                    acc += e * w->v[static_cast<size_t>(((co * ci_n + ci) * k[0] + ky) * k[1] + kx)];
                  else
                    acc = std::max(acc, e);
                }
            y.v[static_cast<size_t>((co * oh + oy) * ow + ox)] = acc;
          }
    } else {
      FAIL("the test evaluator has no " << op);
    }
    return y;
  }
  onnx::ModelProto model_;
  std::map<std::string, T> vals_;
};

}  // namespace

TEST_CASE("CNN ops: Flatten into a dense head, BatchNormalization, Concat, SAME pads, Sigmoid",
          "[onnx][cnn]") {
  // LeNet-style: SAME-padded stride-2 conv and BN (folded), Flatten of 4x4x12 read by a Gemm (a
  // conv over the whole image), Sigmoid on the host.
  const auto lenet = imported("lenet_tiny");
  const Workload lw = loaded(lenet, "lenet_tiny");
  CHECK(kinds(lw) == "conv2d conv2d max_pool conv2d dense sigmoid");
  CHECK(lw.layers[0].pads == Pads{0, 0, 1, 1});
  CHECK(lw.layers[0].out_shape == (Shape{8, 8, 6, 3}));
  CHECK(lw.layers[3].kh == 4);  // the Flatten + Gemm: a 4x4 kernel over 4x4x12
  CHECK(lw.layers[3].c_out == 32);
  CHECK(lw.layers[5].host.op == HostOp::Sigmoid);
  // Inception block: Concat of three branches (two host concats), BN after it as a depthwise
  // 1x1 conv, BN after a conv folded into it.
  const auto inc = imported("inception_tiny");
  const Workload iw = loaded(inc, "inception_tiny");
  CHECK(kinds(iw) ==
        "conv2d conv2d conv2d max_pool conv2d concat concat conv2d conv2d conv2d dense");
  CHECK(iw.layers[6].out_shape == (Shape{16, 16, 20, 3}));
  CHECK(iw.layers[7].groups == 20);  // the unfoldable BN
  for (const auto* r : {&lenet, &inc}) {
    INFO(r->output_layer);
    // The importer's float network is the ONNX network: an NCHW evaluator of the model agrees.
    NchwEvaluator ev(model_path(r == &lenet ? "lenet_tiny" : "inception_tiny"));
    const std::vector<double> want = ev.run(r->fp32_input);
    REQUIRE(want.size() == r->fp32_output.size());
    for (size_t i = 0; i < want.size(); ++i) CHECK(std::abs(want[i] - r->fp32_output[i]) < 1e-4);
    // Quality of the int8 network: every layer above 30 dB, the output's top-1 >= 90%.
    for (const auto& q : r->quality) {
      INFO(q.layer);
      CHECK(q.snr_db > 30);
    }
    CHECK(r->error.relative() < 0.02);
    CHECK(r->agreement.top1 >= 0.9);
  }
  for (const Workload* w : {&lw, &iw}) CHECK(golden_check(*w).ok());
  // At BF16 too (the emitted workload is the same; the figures follow the precision).
  onnx_import::ImportOptions bf;
  bf.precision = "bf16";
  const auto lb = onnx_import::import_file(model_path("lenet_tiny"), bf);
  REQUIRE(lb.ok());
  CHECK(lb->quality.back().snr_db > lenet.quality.back().snr_db);
  // Asymmetric pads at stride 1 ([1, 1, 0, 0]: 8x8 -> 7x7) import too.
  const auto asym = onnx_import::import_file(data_path("asym_pads.onnx"));
  REQUIRE(asym.ok());
  const Workload aw = loaded(*asym, "asym_pads");
  CHECK(aw.layers[0].pads == Pads{1, 1, 0, 0});
  CHECK(aw.layers[0].out_shape == (Shape{7, 7, 8, 3}));
  CHECK(golden_check(aw).ok());
}

TEST_CASE("ONNX ops map to workload layers", "[onnx][mapping]") {
  SECTION(
      "ResNet-style: conv (stride, pad), max pool on the host, residual add with fused relu, "
      "1x1 stride-2 shortcut, global average pool as depthwise conv, flatten, gemm") {
    const Workload w = loaded(imported("resnet_tiny"), "resnet");
    CHECK(kinds(w).rfind("conv2d max_pool conv2d conv2d add", 0) == 0);
    CHECK(w.layers[0].stride == 2);
    CHECK(w.layers[0].pads == bud::workload::Pads::all(1));
    CHECK(w.layers[0].relu);  // Relu fused into the conv
    CHECK(w.layers[1].host.kh == 3);
    const Layer& add = w.layers[4];
    CHECK(add.relu);
    CHECK(add.input == 3);
    CHECK(add.other == 1);  // the shortcut is the pool's output
    const Layer& gap = w.layers[w.layers.size() - 2];
    CHECK(gap.kind == LayerKind::Conv2d);
    CHECK(gap.groups == gap.c_out);
    CHECK(gap.kh == 1);  // 32x32 / 2 (stem) / 2 (pool) / 2 / 2 / 2 = 1x1 before the pool
    CHECK(w.layers.back().kind == LayerKind::Dense);
    CHECK(w.layers.back().out_shape.c == 10);
    int shortcuts = 0;
    for (const Layer& l : w.layers)
      shortcuts += l.kind == LayerKind::Conv2d && l.kh == 1 && l.stride == 2;
    CHECK(shortcuts == 3);
  }
  SECTION(
      "MobileNetV2-style: depthwise convs, ReLU6 as a fixed 6/127 scale, projection without "
      "relu, residual add") {
    const Workload w = loaded(imported("mobilenet_tiny"), "mobilenet");
    int depthwise = 0, adds = 0;
    for (const Layer& l : w.layers) {
      depthwise += l.kind == LayerKind::Conv2d && l.groups > 1 && l.groups == l.c_out;
      adds += l.kind == LayerKind::Add;
    }
    CHECK(depthwise == 5);  // 4 blocks + the global average pool
    CHECK(adds == 2);
  }
  SECTION(
      "transformer block: dense projections, attention matmuls on the NPU, softmax, layer norm "
      "and gelu on the host") {
    const onnx_import::ImportResult r = imported("transformer_tiny");
    const Workload w = loaded(r, "transformer");
    CHECK(kinds(w) ==
          "dense dense dense matmul softmax matmul dense add layer_norm dense gelu dense add "
          "layer_norm");
    // Scores Q . K^T: a matmul reading K (the second projection) as weights. P . V: the value
    // projection writes V^T, which the second matmul reads.
    const Layer& qk = w.layers[3];
    CHECK(qk.kind == LayerKind::MatMul);
    CHECK(qk.other == 1);
    CHECK(qk.out_shape == Shape{16, 1, 16, 2});
    CHECK(w.layers[2].transpose_output);
    CHECK(w.layers[2].out_shape == Shape{32, 1, 16, 2});
    const Layer& av = w.layers[5];
    CHECK(av.kind == LayerKind::MatMul);
    CHECK(av.other == 2);
    CHECK(av.out_shape == Shape{16, 1, 32, 2});
    CHECK(w.layers[9].out_shape.c == 128);  // FFN 4x
    CHECK(r.host_layers.size() == 4);
    // The fallback on request: both matmuls on the host, V as it is.
    onnx_import::ImportOptions o;
    o.host_attention = true;
    const auto host = onnx_import::import_file(model_path("transformer_tiny"), o);
    REQUIRE(host.ok());
    const Workload hw = loaded(*host, "transformer");
    CHECK(hw.layers[3].kind == LayerKind::Host);
    CHECK(hw.layers[3].host.transpose_other);
    CHECK_FALSE(hw.layers[2].transpose_output);
    CHECK(host->host_layers.size() == 6);
  }
  SECTION(
      "quantised model: QuantizeLinear, QLinearConv (per-tensor and per-channel weights kept "
      "exactly), DequantizeLinear, QLinearMatMul") {
    const onnx_import::ImportResult r = imported("qlinear_tiny");
    CHECK_FALSE(r.float_model);
    const Workload w = loaded(r, "qlinear");
    CHECK(kinds(w) == "conv2d conv2d conv2d dense");
    // QLinearConv 1: x 1/127, w 0.004, y 0.05: mult / 2^shift = 0.004 / 127 / 0.05.
    const Quant q = w.layers[0].quant;
    CHECK(std::ldexp(double(q.mult), -q.shift) == Approx(0.004 / 127 / 0.05).epsilon(1e-3));
    CHECK_FALSE(w.layers[0].per_channel());
    // QLinearConv 2 has one weight scale per output channel: the model's int8 weights (drawn
    // from [-90, 90]) are kept as they are, and POST requantises each channel with its own
    // factor 0.05 x w_scale[c] / 0.04, w_scale in [0.003, 0.005].
    const Layer& pc = w.layers[1];
    REQUIRE(pc.per_channel());
    REQUIRE(pc.channel_quant.size() == 16);
    int wmax = 0;
    for (const int8_t v : pc.data->weights) wmax = std::max(wmax, std::abs(int{v}));
    CHECK(wmax == 90);
    std::set<std::pair<int, int>> factors;
    for (const Quant& cq : pc.channel_quant) {
      const double f = std::ldexp(double(cq.mult), -cq.shift);
      CHECK(f >= 0.05 * 0.003 / 0.04 * 0.999);
      CHECK(f <= 0.05 * 0.005 / 0.04 * 1.001);
      factors.insert({cq.mult, cq.shift});
    }
    CHECK(factors.size() > 8);
    CHECK(r.error.relative() < 0.15);  // the model's own coarse scales dominate
  }
}

TEST_CASE("multi-head attention: heads split from the projections, per head on the NPU, merged "
          "by the output projection", "[onnx][mapping][mha]") {
  const onnx_import::ImportResult r = imported("mha_tiny");
  const Workload w = loaded(r, "mha");
  // 4 heads of 8: Q, K and V projections split per head, Q.K^T and P.V per head on the NPU,
  // softmax per head on the host, the output projection as a dense layer per head added up.
  CHECK(kinds(w) ==
        "dense dense dense dense dense dense dense dense dense dense dense dense "
        "matmul matmul matmul matmul softmax softmax softmax softmax matmul matmul matmul matmul "
        "dense dense add dense add dense add add layer_norm");
  for (int h = 0; h < 4; ++h) {
    INFO("head " << h);
    const Layer& q = w.layers[static_cast<size_t>(h)];
    CHECK(q.out_shape == Shape{16, 1, 8, 2});
    CHECK(w.layers[static_cast<size_t>(8 + h)].transpose_output);  // V^T
    const Layer& qk = w.layers[static_cast<size_t>(12 + h)];
    CHECK(qk.input == h);
    CHECK(qk.other == 4 + h);  // K of the same head
    CHECK(qk.out_shape == Shape{16, 1, 16, 2});
    const Layer& av = w.layers[static_cast<size_t>(20 + h)];
    CHECK(av.input == 16 + h);  // the head's softmax
    CHECK(av.other == 8 + h);
    CHECK(av.out_shape == Shape{16, 1, 8, 2});
  }
  CHECK(r.host_layers.size() == 5);

  // The fp32 network the import built equals the model computed straight from its ONNX
  // initializers (whole projections, heads as column blocks, concatenation): the split and the
  // merge keep the model's meaning.
  onnx::ModelProto m;
  {
    std::ifstream in(model_path("mha_tiny"), std::ios::binary);
    REQUIRE(m.ParseFromIstream(&in));
  }
  std::map<std::string, std::vector<double>> init;
  for (const auto& t : m.graph().initializer()) {
    std::vector<double> v;
    if (t.data_type() == onnx::TensorProto::FLOAT) {
      std::vector<float> f(t.raw_data().size() / 4);
      std::memcpy(f.data(), t.raw_data().data(), f.size() * 4);
      v.assign(f.begin(), f.end());
    }
    init[t.name()] = v;
  }
  std::vector<std::vector<double>> weights, biases;
  std::vector<double> gamma, beta;
  for (const auto& n : m.graph().node()) {
    if (n.op_type() == "MatMul" && init.count(n.input(1))) weights.push_back(init[n.input(1)]);
    if (n.op_type() == "Add" && init.count(n.input(1))) biases.push_back(init[n.input(1)]);
    if (n.op_type() == "LayerNormalization") {
      gamma = init[n.input(1)];
      beta = init[n.input(2)];
    }
  }
  REQUIRE(weights.size() == 4);
  REQUIRE(biases.size() == 4);
  constexpr int S = 16, D = 32, H = 4, N = 8;
  const std::vector<double>& x = r.fp32_input;
  REQUIRE(x.size() == size_t{S * D});
  auto linear = [&](const std::vector<double>& a, int which) {
    std::vector<double> y(S * D);
    for (int i = 0; i < S; ++i)
      for (int j = 0; j < D; ++j) {
        double acc = biases[which][j];
        for (int k = 0; k < D; ++k) acc += a[i * D + k] * weights[which][k * D + j];
        y[i * D + j] = acc;
      }
    return y;
  };
  const auto q = linear(x, 0), k = linear(x, 1), v = linear(x, 2);
  std::vector<double> concat(S * D);
  for (int h = 0; h < H; ++h)
    for (int i = 0; i < S; ++i) {
      std::vector<double> p(S);
      double top = -1e300, sum = 0;
      for (int j = 0; j < S; ++j) {
        double dot = 0;
        for (int c = 0; c < N; ++c) dot += q[i * D + h * N + c] * k[j * D + h * N + c];
        p[j] = dot / std::sqrt(double{N});
        top = std::max(top, p[j]);
      }
      for (double& e : p) sum += (e = std::exp(e - top));
      for (int c = 0; c < N; ++c) {
        double acc = 0;
        for (int j = 0; j < S; ++j) acc += p[j] / sum * v[j * D + h * N + c];
        concat[i * D + h * N + c] = acc;
      }
    }
  const auto o = linear(concat, 3);
  REQUIRE(r.fp32_output.size() == size_t{S * D});
  double worst = 0;
  for (int i = 0; i < S; ++i) {
    double mean = 0, var = 0;
    for (int j = 0; j < D; ++j) mean += (x[i * D + j] + o[i * D + j]) / D;
    for (int j = 0; j < D; ++j) var += std::pow(x[i * D + j] + o[i * D + j] - mean, 2) / D;
    for (int j = 0; j < D; ++j) {
      const double want =
          (x[i * D + j] + o[i * D + j] - mean) / std::sqrt(var + 1e-5) * gamma[j] + beta[j];
      worst = std::max(worst, std::abs(want - r.fp32_output[static_cast<size_t>(i * D + j)]));
    }
  }
  INFO("largest difference " << worst);
  CHECK(worst < 1e-5);
  CHECK(r.agreement.top1 > 0.9);

  // With --host-attention the products go to the host per head; the split and merge stay.
  onnx_import::ImportOptions o2;
  o2.host_attention = true;
  const auto host = onnx_import::import_file(model_path("mha_tiny"), o2);
  REQUIRE(host.ok());
  CHECK(host->host_layers.size() == 13);

  // With a leading batch dimension of 1 throughout and the output bias as an Add after the
  // projection (folded into its first head's layer): same layers but the bias's own.
  const auto batch = onnx_import::import_file(data_path("mha_batch.onnx"));
  INFO(batch.error());
  REQUIRE(batch.ok());
  const Workload bw = loaded(*batch, "mha_batch");
  CHECK(bw.layers.size() == 31);  // no residual add, no layer norm
  CHECK(golden_check(bw).ok());
}

TEST_CASE("imported models run bit-exactly on the golden model against the direct reference",
          "[onnx][models]") {
  for (const char* name :
       {"resnet_tiny", "mobilenet_tiny", "transformer_tiny", "mha_tiny", "qlinear_tiny",
        "lenet_tiny", "inception_tiny"}) {
    for (const bool per_channel : {false, true}) {
      INFO(name << (per_channel ? " per channel" : ""));
      onnx_import::ImportOptions io;
      io.per_channel = per_channel;
      auto imp = onnx_import::import_file(model_path(name), io);
      REQUIRE(imp.ok());
      const onnx_import::ImportResult& r = *imp;
      const Workload w = loaded(r, name);
      Program p;
      const golden::CheckReport rep = golden_check(w, &p);
      INFO(rep.summary());
      CHECK(rep.ok());
      CHECK(rep.compared > 0);
      CHECK(p.commands.size() <= kRingCommands);
      // The quantised network follows the fp32 network of the ONNX weights.
      INFO("relative rms error " << r.error.relative());
      CHECK(r.error.elements > 0);
      CHECK(r.error.relative() < 0.2);
    }
  }
}

TEST_CASE("host layers are charged by the cost model", "[onnx][host]") {
  const Workload w = loaded(imported("transformer_tiny"), "transformer");
  Program p;
  golden_check(w, &p);
  uint64_t host = 0;
  for (size_t i = 0; i < w.layers.size(); ++i) {
    const bool is_host = w.layers[i].kind == LayerKind::Host;
    CHECK((p.layers[i].host_cycles > 0) == is_host);
    if (is_host) CHECK(p.layers[i].host_cycles == host_op_cycles(w.layers[i]));
    host += p.layers[i].host_cycles;
  }
  CHECK(p.host_cycles == host);
  // Softmax over 16x16: sync + (256 in + 256 out bytes) / 8 + 8 cycles per element.
  CHECK(host_op_cycles(w.layers[4]) == kHostSyncCycles + 512 / 8 + 8 * 256);
}

TEST_CASE("bad ONNX input gives one error naming the file, node, op and reason", "[onnx][errors]") {
  auto error_of = [](const std::string& file) {
    auto r = onnx_import::import_file(data_path(file));
    REQUIRE_FALSE(r.ok());
    return r.error();
  };
  const std::string dir = data_path("");
  CHECK(error_of("unknown_op.onnx") ==
        dir +
            "unknown_op.onnx: node 'mystery4' (#1, Sin): unsupported operator (docs/import.md "
            "lists what bud imports)");
  CHECK(error_of("bad_attribute.onnx") ==
        dir + "bad_attribute.onnx: node 'conv3' (#0, Conv): dilations [2, 2] unsupported (only 1)");
  CHECK(error_of("flatten_softmax.onnx") ==
        dir +
            "flatten_softmax.onnx: node 'probs5' (#2, Softmax): input 'flatten4' flattens the "
            "image 8x8x8 in NCHW order: only a Gemm or MatMul with constant weights can read it "
            "(bud permutes the weight rows), not Softmax");
  CHECK(error_of("heads_of_input.onnx") ==
        dir +
            "heads_of_input.onnx: node 'split2' (#0, Reshape): splitting 'x' into 4 attention "
            "heads needs a dense layer (a constant-weight MatMul/Gemm) read only by this Reshape");
  CHECK(error_of("merged_heads_added.onnx") ==
        dir +
            "merged_heads_added.onnx: node 'res11' (#6, Add): merged attention heads "
            "('merged10') must be read by a constant-weight MatMul or Gemm (the output "
            "projection), not Add");
  CHECK(error_of("dynamic_shape.onnx") ==
        dir +
            "dynamic_shape.onnx: graph input 'x': dynamic dimension 0 'N' (bud needs static "
            "shapes; export with fixed sizes)");
  // Truncated: every cut of a real model is rejected with one line (never a crash).
  std::ifstream in(model_path("mobilenet_tiny"), std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string bytes = ss.str();
  for (size_t cut : {size_t{0}, size_t{10}, bytes.size() / 3, bytes.size() / 2, bytes.size() - 7}) {
    INFO("cut at " << cut);
    auto r = onnx_import::import_bytes(std::string_view(bytes).substr(0, cut), "cut.onnx");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().rfind("cut.onnx: ", 0) == 0);
    CHECK(r.error().find('\n') == std::string::npos);
  }
  CHECK(error_of("missing.onnx").find("cannot open") != std::string::npos);
}

TEST_CASE("an imported workload round-trips through its textpb", "[onnx][roundtrip]") {
  const onnx_import::ImportResult r = imported("mobilenet_tiny");
  const Workload a = loaded(r, "a");
  // Printing the parsed workload's spec again is not available; instead re-import and compare
  // texts (deterministic), and check that the parsed data equals what the text holds.
  CHECK(imported("mobilenet_tiny").text == r.text);
  const Workload b = loaded(r, "b");
  REQUIRE(a.layers.size() == b.layers.size());
  CHECK(a.input_data == b.input_data);
  CHECK(a.input_data.size() == 24 * 24 * 3);
  for (size_t i = 0; i < a.layers.size(); ++i) {
    INFO(a.layers[i].name);
    CHECK(generate_layer_data(a, int(i)).weights == generate_layer_data(b, int(i)).weights);
    // Explicit data does not depend on the seed.
  }
  LoadOptions other_seed;
  other_seed.seed = 12345;
  const Workload c = parse_workload(r.text, "c", other_seed).value();
  CHECK(run_reference(c).layers.back().data == run_reference(a).layers.back().data);
}

TEST_CASE("per-layer quality against fp32 and the output's agreement over frozen inputs",
          "[onnx][quality]") {
  const auto r = imported("resnet_tiny");
  const Workload w = loaded(r, "resnet_tiny");
  REQUIRE(r.quality.size() == w.layers.size());
  for (size_t i = 0; i < r.quality.size(); ++i) {
    INFO(r.quality[i].layer);
    CHECK(r.quality[i].layer == w.layers[i].name);
    CHECK(r.quality[i].elements > 0);
    CHECK(r.quality[i].snr_db > 20);
    CHECK(r.quality[i].mean_abs_error <= r.quality[i].max_abs_error);
  }
  CHECK(r.agreement.inputs == onnx_import::kQualityInputs);
  CHECK(r.agreement.rows == onnx_import::kQualityInputs);  // one row of 10 classes per input
  CHECK(r.agreement.top1 >= 0.9);
  CHECK(r.agreement.top5 >= r.agreement.top1);
  // Frozen: the same figures again.
  const auto again = imported("resnet_tiny");
  CHECK(again.quality.back().snr_db == r.quality.back().snr_db);
  CHECK(again.agreement.top1 == r.agreement.top1);
}

TEST_CASE("a layer with outlier weights is the one that loses quality in int8", "[onnx][quality]") {
  // outlier_tiny: fc, relu, fc with a few weights 300x the rest, fc. The middle layer's
  // per-tensor scale flushes its ordinary weights; the layers around it stay accurate.
  const auto r = imported("outlier_tiny");
  auto snr = [&](const std::string& prefix) {
    for (const auto& q : r.quality)
      if (q.layer.rfind(prefix, 0) == 0) return q.snr_db;
    FAIL("no layer " << prefix);
    return 0.0;
  };
  CHECK(snr("fc3") > 30);
  CHECK(snr("fc7") < 22);
  CHECK(snr("fc3") - snr("fc7") > 15);
  CHECK(r.agreement.top1 < 0.9);
}

TEST_CASE("quality against the ONNX fp32 network at BF16: activations no longer round",
          "[onnx][quality][bf16]") {
  onnx_import::ImportOptions o;
  o.precision = "bf16";
  auto bf16 = onnx_import::import_file(model_path("outlier_tiny"), o);
  REQUIRE(bf16);
  const auto int8 = imported("outlier_tiny");
  // The workload written is the same int8 import.
  CHECK(bf16->text == int8.text);
  REQUIRE(bf16->quality.size() == int8.quality.size());
  for (const auto& [layer, p] : bf16->precisions)
    if (layer.rfind("fc", 0) == 0) CHECK(p == "bf16");
  // fc3's output is no longer rounded to int8: closer to fp32 than at int8.
  CHECK(bf16->quality[0].snr_db > int8.quality[0].snr_db + 1);
  // fc7's loss is its weights' per-tensor quantisation, which BF16 activations keep: still far
  // below fc3 against the ONNX model's own weights.
  double fc7 = 0;
  for (const auto& q : bf16->quality)
    if (q.layer.rfind("fc7", 0) == 0) fc7 = q.snr_db;
  CHECK(fc7 < 25);
  CHECK(bf16->agreement.inputs == onnx_import::kQualityInputs);
  // A precision file names its layers; a bad one is an error naming the file's line.
  o.precision = "fc3 bf16\nfc99 int8\n";
  o.precision_origin = "p.prec";
  const auto bad = onnx_import::import_file(model_path("outlier_tiny"), o);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().find("p.prec:2:1") != std::string::npos);
}

TEST_CASE("per-channel weight scales recover the quality an outlier channel costs per tensor",
          "[onnx][quality][per_channel]") {
  // outlier_tiny's fc7 has a few weights 300x the rest: one scale for the whole tensor flushes
  // the ordinary weights of every channel; one scale per output channel confines the loss to the
  // channels that hold an outlier.
  const auto tensor = imported("outlier_tiny");
  onnx_import::ImportOptions o;
  o.per_channel = true;
  const auto channel = onnx_import::import_file(model_path("outlier_tiny"), o);
  REQUIRE(channel.ok());
  auto snr = [](const onnx_import::ImportResult& r, const std::string& prefix) {
    for (const auto& q : r.quality)
      if (q.layer.rfind(prefix, 0) == 0) return q.snr_db;
    return 0.0;
  };
  CHECK(snr(*channel, "fc7") > snr(tensor, "fc7") + 4);  // 23.5 against 18.1 dB
  CHECK(channel->agreement.top1 > tensor.agreement.top1 + 0.05);  // 89.5% against 77.0%
  const Workload w = loaded(*channel, "outlier_tiny");
  for (const Layer& l : w.layers)
    if (l.kind == LayerKind::Dense || l.kind == LayerKind::Conv2d) CHECK(l.per_channel());
  const golden::CheckReport rep = golden_check(w);
  INFO(rep.summary());
  CHECK(rep.ok());
}
