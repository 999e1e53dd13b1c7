// Loading a workload: text-format parsing with file:line:col errors, semantic validation,
// default-quantisation calibration and seeded data generation.
#include "emu/workload/Workload.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <cmath>
#include <fstream>
#include <sstream>

// Rng.h uses unsigned __int128, which -Wpedantic flags; it is a GCC/Clang extension bud relies on.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#include "emu/core/Rng.h"
#pragma GCC diagnostic pop
#include "emu/workload/Lowering.h"
#include "emu/workload/Reference.h"
#include "emu/textproto/TextProto.h"
#include "workload.pb.h"

namespace bud::workload {
namespace {

namespace gp = google::protobuf;
// Schema types of workload.proto (package bud.workload, messages suffixed "Spec").
using Tree = textproto::Tree;

// Largest value accepted for any single dimension; keeps every product of three dimensions far
// from int64 overflow before the DRAM check rejects big tensors properly.
constexpr int64_t kMaxDim = 1 << 20;

using textproto::Locator;

Error fail(const std::string& where, const std::string& what) { return Error{where + ": " + what}; }

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// Seeds of independent data streams: one per tensor, so a layer's data does not depend on other
// layers' sizes.
uint64_t stream_seed(uint64_t seed, uint64_t stream) {
  uint64_t x = seed ^ (stream * 0xD1B54A32D192ED03ull);
  return emu::Rng::splitmix64(x);
}

std::vector<int8_t> random_int8(uint64_t seed, int64_t count, int lo, int hi) {
  emu::Rng rng(seed);
  std::vector<int8_t> v(static_cast<size_t>(count));
  for (auto& x : v) x = static_cast<int8_t>(rng.range(lo, hi));
  return v;
}

// Chooses mult/shift so that the RMS of the accumulators maps to about 40: outputs use the
// int8 range without saturating more than a fraction of a percent.
Quant calibrate(const std::vector<int32_t>& acc) {
  double sum = 0;
  for (int32_t a : acc) sum += static_cast<double>(a) * a;
  const double rms = acc.empty() ? 0 : std::sqrt(sum / static_cast<double>(acc.size()));
  Quant q;
  if (rms < 1) return q;
  const double scale = 40.0 / rms;
  for (int s = 31; s >= 0; --s) {
    const long long mult = std::llround(std::ldexp(scale, s));
    if (mult <= 255 || s == 0) {
      q.shift = static_cast<uint8_t>(s);
      q.mult = static_cast<int16_t>(std::max(1LL, std::min(mult, 32767LL)));
      return q;
    }
  }
  return q;
}

// Checks a user dimension: positive and not absurdly large.
std::optional<Error> check_dim(const std::string& where, const std::string& what, int64_t v) {
  if (v <= 0) return fail(where, what + " must be positive (got " + std::to_string(v) + ")");
  if (v > kMaxDim)
    return fail(where, what + " is too large (got " + std::to_string(v) + ", at most " +
                           std::to_string(kMaxDim) + ")");
  return std::nullopt;
}

std::string input_name(const Workload& w, int index) {
  return index == 0
             ? std::string("the workload input")
             : "the output of layer " + quoted(w.layers[static_cast<size_t>(index - 1)].name);
}

Result<Workload> validate(const WorkloadSpec& pw, const Tree& tree, const std::string& file,
                          const LoadOptions& options);

}  // namespace

std::string Shape::to_string() const {
  if (rank == 2) return std::to_string(h) + "x" + std::to_string(c);
  return std::to_string(h) + "x" + std::to_string(w) + "x" + std::to_string(c);
}

const char* layer_kind_name(LayerKind k) {
  switch (k) {
    case LayerKind::Dense:
      return "dense";
    case LayerKind::Conv2d:
      return "conv2d";
    case LayerKind::Add:
      return "add";
    case LayerKind::Relu:
      return "relu";
  }
  return "?";
}

int64_t Layer::reduction() const {
  switch (kind) {
    case LayerKind::Dense:
      return k;
    case LayerKind::Conv2d:
      return kh * kw * in_shape.c;
    default:
      return in_shape.c;
  }
}

std::optional<int> Workload::find_layer(std::string_view layer_name) const {
  for (size_t i = 0; i < layers.size(); ++i)
    if (layers[i].name == layer_name) return static_cast<int>(i);
  return std::nullopt;
}

Result<Workload> parse_workload(std::string_view text, std::string_view file,
                                const LoadOptions& options) {
  const std::string fname(file);
  WorkloadSpec pw;
  Tree tree;
  if (text.size() > (64u << 20)) return Error{fname + ":1:1: file too large"};
  if (auto e = textproto::parse(std::string(text), fname, pw, tree); !e.empty()) return Error{e};
  return validate(pw, tree, fname, options);
}

Result<Workload> load_workload_file(const std::string& path, const LoadOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot open workload file"};
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Error{path + ": cannot read workload file"};
  return parse_workload(ss.str(), path, options);
}

std::vector<int8_t> generate_input(const Workload& w) {
  return random_int8(stream_seed(w.seed, 0), w.input.elements(), -16, 16);
}

LayerData generate_layer_data(const Workload& w, int index) {
  const Layer& l = w.layers[static_cast<size_t>(index)];
  const uint64_t base = 1 + 3 * static_cast<uint64_t>(index);
  LayerData d;
  if (l.kind == LayerKind::Dense || l.kind == LayerKind::Conv2d) {
    const int64_t kk = l.reduction();
    const int64_t nn = l.out_shape.c;
    d.weights = random_int8(stream_seed(w.seed, base), kk * nn, -8, 8);
    // Biases comparable to the accumulators' spread (which grows with sqrt(K)).
    const int64_t r = 32 * static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(kk))));
    emu::Rng rng(stream_seed(w.seed, base + 1));
    d.bias.resize(static_cast<size_t>(nn));
    for (auto& b : d.bias) b = static_cast<int32_t>(rng.range(-r, r));
  }
  if (l.kind == LayerKind::Add && l.other == kFreshTensor)
    d.other = random_int8(stream_seed(w.seed, base + 2), l.out_shape.elements(), -32, 32);
  return d;
}

namespace {

Result<Workload> validate(const WorkloadSpec& pw, const Tree& tree, const std::string& file,
                          const LoadOptions& options) {
  const Locator loc(file);
  Workload w;
  w.source = file;
  w.name = pw.name();
  w.description = pw.description();
  w.seed = options.seed ? *options.seed : pw.seed();
  if (w.name.empty()) w.name = file;

  // DRAM size.
  const std::string dram_where = loc.at(&tree, pw, "dram_bytes", -1, loc.start());
  if (pw.dram_bytes() != 0) {
    if (pw.dram_bytes() > (1ull << 32) || pw.dram_bytes() <= kDataBase)
      return fail(dram_where, "dram_bytes must be in (0x10000, 2^32] (got " +
                                  std::to_string(pw.dram_bytes()) + ")");
    w.dram_bytes = pw.dram_bytes();
  }

  // Input shape.
  const std::string shape_where = loc.at(&tree, pw, "input_shape", 0, loc.start());
  const int rank = pw.input_shape_size();
  if (rank != 2 && rank != 3)
    return fail(shape_where, "input_shape must be [M, K] or [H, W, C] (got " +
                                 std::to_string(rank) + " dimensions)");
  for (int i = 0; i < rank; ++i)
    if (auto e = check_dim(loc.at(&tree, pw, "input_shape", i, shape_where),
                           "input_shape[" + std::to_string(i) + "]", pw.input_shape(i)))
      return *e;
  w.input_where = shape_where;
  w.input.rank = rank;
  w.input.h = pw.input_shape(0);
  w.input.w = rank == 3 ? pw.input_shape(1) : 1;
  w.input.c = pw.input_shape(rank - 1);

  if (pw.layer_size() == 0) return fail(loc.start(), "workload has no layers");
  if (pw.layer_size() > 0xFFFF) return fail(loc.start(), "too many layers");

  std::vector<std::string> wheres;  // per layer, for later errors
  for (int i = 0; i < pw.layer_size(); ++i) {
    const LayerSpec& pl = pw.layer(i);
    const Tree* lt = loc.nested(&tree, pw, "layer", i);
    const std::string lwhere = loc.at(&tree, pw, "layer", i, loc.start());
    auto fwhere = [&](const gp::Message& m, const Tree* t, const char* f) {
      return loc.at(t, m, f, -1, lwhere);
    };
    Layer l;
    l.where = lwhere;
    l.name = pl.name().empty() ? "l" + std::to_string(i) : pl.name();
    const std::string lname = "layer " + quoted(l.name);
    if (l.name == "input")
      return fail(fwhere(pl, lt, "name"), "layer name 'input' is reserved for the workload input");
    if (w.find_layer(l.name))
      return fail(fwhere(pl, lt, "name"), "duplicate layer name " + quoted(l.name));
    l.in_shape = i == 0 ? w.input : w.layers.back().out_shape;
    const Shape& in = l.in_shape;
    const std::string in_desc = input_name(w, i) + " is " + in.to_string();

    switch (pl.kind_case()) {
      case LayerSpec::kDense: {
        const DenseSpec& d = pl.dense();
        const Tree* dt = loc.nested(lt, pl, "dense", -1);
        l.kind = LayerKind::Dense;
        l.m = d.m();
        l.k = d.k();
        l.n = d.n();
        l.relu = d.relu();
        for (auto [f, v] : {std::pair{"m", l.m}, std::pair{"k", l.k}, std::pair{"n", l.n}})
          if (auto e = check_dim(fwhere(d, dt, f), lname + ": dense." + f, v)) return *e;
        if (l.m != in.pixels() || l.k != in.c)
          return fail(fwhere(d, dt, l.k != in.c ? "k" : "m"),
                      lname + ": input shape mismatch: dense expects m x k = " +
                          std::to_string(l.m) + "x" + std::to_string(l.k) + " but " + in_desc);
        l.out_shape = in;
        l.out_shape.c = l.n;
        break;
      }
      case LayerSpec::kConv2D: {
        const Conv2dSpec& c = pl.conv2d();
        const Tree* ct = loc.nested(lt, pl, "conv2d", -1);
        l.kind = LayerKind::Conv2d;
        l.c_out = c.c_out();
        l.kh = c.kh();
        l.kw = c.kw();
        l.stride = c.has_stride() ? c.stride() : 1;
        l.pad = c.has_pad() ? c.pad() : 0;
        l.relu = c.relu();
        for (auto [f, v] : {std::pair{"c_out", l.c_out}, std::pair{"kh", l.kh},
                            std::pair{"kw", l.kw}, std::pair{"stride", l.stride}})
          if (auto e = check_dim(fwhere(c, ct, f), lname + ": conv2d." + f, v)) return *e;
        if (l.pad < 0 || l.pad > 255)
          return fail(fwhere(c, ct, "pad"), lname + ": conv2d.pad must be in [0, 255] (got " +
                                                std::to_string(l.pad) + ")");
        if (c.has_c_in() && c.c_in() != in.c)
          return fail(fwhere(c, ct, "c_in"), lname + ": input shape mismatch: conv2d.c_in = " +
                                                 std::to_string(c.c_in()) + " but " + in_desc);
        const int64_t oh = (in.h + 2 * l.pad - l.kh) / l.stride + 1;
        const int64_t ow = (in.w + 2 * l.pad - l.kw) / l.stride + 1;
        if (in.h + 2 * l.pad < l.kh || in.w + 2 * l.pad < l.kw)
          return fail(lwhere, lname + ": a " + std::to_string(l.kh) + "x" + std::to_string(l.kw) +
                                  " kernel with pad " + std::to_string(l.pad) +
                                  " does not fit: " + in_desc);
        l.out_shape = Shape{oh, ow, l.c_out, 3};
        break;
      }
      case LayerSpec::kAdd: {
        const AddSpec& a = pl.add();
        const Tree* at = loc.nested(lt, pl, "add", -1);
        l.kind = LayerKind::Add;
        l.relu = a.relu();
        l.out_shape = in;
        Shape other_shape = in;
        if (a.other().empty()) {
          l.other = kFreshTensor;
        } else if (a.other() == "input") {
          l.other = kInputTensor;
          other_shape = w.input;
        } else if (auto j = w.find_layer(a.other())) {
          l.other = *j;
          other_shape = w.layers[static_cast<size_t>(*j)].out_shape;
        } else {
          return fail(fwhere(a, at, "other"),
                      lname + ": add.other " + quoted(a.other()) + " names no earlier layer");
        }
        if (!(other_shape == in))
          return fail(fwhere(a, at, "other"), lname + ": shape mismatch: add.other " +
                                                  quoted(a.other()) + " is " +
                                                  other_shape.to_string() + " but " + in_desc);
        break;
      }
      case LayerSpec::kRelu:
        l.kind = LayerKind::Relu;
        l.relu = true;
        l.out_shape = in;
        break;
      case LayerSpec::KIND_NOT_SET:
        return fail(lwhere, lname + ": no layer kind (dense, conv2d, add or relu)");
    }

    if (pl.has_quant()) {
      const QuantSpec& q = pl.quant();
      const Tree* qt = loc.nested(lt, pl, "quant", -1);
      const int64_t mult = q.has_mult() ? q.mult() : 1;
      const int64_t shift = q.has_shift() ? q.shift() : 0;
      if (mult < -32768 || mult > 32767)
        return fail(fwhere(q, qt, "mult"),
                    lname + ": quant.mult must fit int16 (got " + std::to_string(mult) + ")");
      if (shift < 0 || shift > 31)
        return fail(fwhere(q, qt, "shift"),
                    lname + ": quant.shift must be in [0, 31] (got " + std::to_string(shift) + ")");
      l.quant = Quant{static_cast<int16_t>(mult), static_cast<uint8_t>(shift)};
    }

    if (auto plan = plan_tiles(l); !plan) return fail(lwhere, lname + ": " + plan.error());
    wheres.push_back(lwhere);
    w.layers.push_back(std::move(l));
  }

  // Tensor placement (no data yet): the DRAM image must fit.
  if (auto layout = plan_dram(w); !layout) return Error{layout.error()};

  // Calibrate the layers without explicit quantisation, in order (later layers see the
  // calibrated outputs of earlier ones). This is the direct reference's run, kept.
  auto ref = std::make_shared<ReferenceResult>();
  ref->input = Tensor{w.input, generate_input(w)};
  for (int i = 0; i < pw.layer_size(); ++i) {
    Layer& l = w.layers[static_cast<size_t>(i)];
    const LayerData data = generate_layer_data(w, i);
    const std::vector<int32_t> acc = layer_accumulators(w, i, ref->input, ref->layers, data);
    if (!pw.layer(i).has_quant() && (l.kind == LayerKind::Dense || l.kind == LayerKind::Conv2d))
      l.quant = calibrate(acc);
    ref->layers.push_back(requantize_layer(l, acc, ref->saturations));
  }
  w.reference = std::move(ref);

  // The program must fit the command ring.
  if (auto p = lower(w); !p) return Error{p.error()};
  return w;
}

}  // namespace
}  // namespace bud::workload
