// Loading a workload: text-format parsing with file:line:col errors, semantic validation,
// default-quantisation calibration and seeded data generation.
#include "emu/workload/Workload.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cctype>
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

int64_t Pads::max() const { return std::max({top, left, bottom, right}); }

std::string Pads::to_string() const {
  if (symmetric()) return std::to_string(top);
  return "[" + std::to_string(top) + ", " + std::to_string(left) + ", " + std::to_string(bottom) +
         ", " + std::to_string(right) + "]";
}

std::string Shape::to_string() const {
  if (rank == 2) return std::to_string(h) + "x" + std::to_string(c);
  return std::to_string(h) + "x" + std::to_string(w) + "x" + std::to_string(c);
}

const char* precision_name(Precision p) { return p == Precision::Bf16 ? "bf16" : "int8"; }

std::optional<Precision> parse_precision(std::string_view s) {
  std::string v(s);
  for (char& ch : v) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (v == "int8") return Precision::Int8;
  if (v == "bf16") return Precision::Bf16;
  return std::nullopt;
}

bool has_bf16(const Workload& w) {
  return std::any_of(w.layers.begin(), w.layers.end(),
                     [](const Layer& l) { return l.precision == Precision::Bf16; });
}

void resolve_precisions(Workload& w) {
  const size_t n = w.layers.size();
  // Union-find over NPU layers: the readers of one tensor are one group.
  std::vector<size_t> parent(n);
  for (size_t i = 0; i < n; ++i) parent[i] = i;
  auto find = [&](size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  // first_reader[t]: a reader of tensor t (t = 0 the input, i + 1 layer i), or n if none yet.
  std::vector<size_t> first_reader(n + 1, n);
  auto reads = [&](size_t layer, int tensor) {
    const size_t t = tensor == kInputTensor ? 0 : static_cast<size_t>(tensor) + 1;
    if (first_reader[t] == n) first_reader[t] = layer;
    else parent[find(layer)] = find(first_reader[t]);
  };
  for (size_t i = 0; i < n; ++i) {
    const Layer& l = w.layers[i];
    if (l.kind == LayerKind::Host) continue;
    reads(i, l.input);
    if ((l.kind == LayerKind::Add || l.kind == LayerKind::MatMul) && l.other != kFreshTensor)
      reads(i, l.other);
  }
  // A group runs BF16 if any member asked for it; the first such member (in layer order) is
  // named as the reason for the others.
  std::vector<size_t> bf16_by(n, n);
  for (size_t i = 0; i < n; ++i)
    if (w.layers[i].kind != LayerKind::Host && w.layers[i].precision == Precision::Bf16 &&
        bf16_by[find(i)] == n)
      bf16_by[find(i)] = i;
  for (size_t i = 0; i < n; ++i) {
    Layer& l = w.layers[i];
    l.promoted_by.clear();
    if (l.kind == LayerKind::Host) {
      l.precision = Precision::Int8;
      continue;
    }
    const size_t by = bf16_by[find(i)];
    if (by != n && l.precision != Precision::Bf16) {
      l.precision = Precision::Bf16;
      l.promoted_by = w.layers[by].name;
    }
  }
  auto reader_type = [&](size_t t, Precision fallback) {
    return first_reader[t] == n ? fallback : w.layers[first_reader[t]].precision;
  };
  w.input_type = reader_type(0, Precision::Int8);
  for (size_t i = 0; i < n; ++i) w.layers[i].out_type = reader_type(i + 1, w.layers[i].precision);
  if (has_bf16(w)) w.reference.reset();
}

std::optional<Error> assign_precision(Workload& w, std::string_view spec, std::string_view origin) {
  auto set_all = [&](Precision p) {
    for (Layer& l : w.layers)
      if (l.kind != LayerKind::Host) l.precision = p;
  };
  if (auto p = parse_precision(spec)) {
    set_all(*p);
    resolve_precisions(w);
    return std::nullopt;
  }
  size_t line_no = 0, start = 0;
  while (start <= spec.size()) {
    const size_t end = std::min(spec.find('\n', start), spec.size());
    std::string_view line = spec.substr(start, end - start);
    ++line_no;
    start = end + 1;
    if (const size_t hash = line.find('#'); hash != std::string_view::npos)
      line = line.substr(0, hash);
    // Up to two words: the layer (or *) and the precision.
    std::vector<std::pair<size_t, std::string_view>> words;
    for (size_t i = 0; i < line.size();) {
      if (std::isspace(static_cast<unsigned char>(line[i]))) {
        ++i;
        continue;
      }
      size_t j = i;
      while (j < line.size() && !std::isspace(static_cast<unsigned char>(line[j]))) ++j;
      words.emplace_back(i, line.substr(i, j - i));
      i = j;
    }
    auto where = [&](size_t col) {
      return std::string(origin) + ":" + std::to_string(line_no) + ":" + std::to_string(col + 1) +
             ": ";
    };
    if (words.empty()) continue;
    if (words.size() != 2)
      return Error{where(words[0].first) + "expected `LAYER PRECISION` (e.g. `fc1 bf16`)"};
    const auto p = parse_precision(words[1].second);
    if (!p)
      return Error{where(words[1].first) + "unknown precision '" + std::string(words[1].second) +
                   "' (int8 or bf16)"};
    if (words[0].second == "*") {
      set_all(*p);
      continue;
    }
    const auto li = w.find_layer(words[0].second);
    if (!li)
      return Error{where(words[0].first) + "workload '" + w.name + "' has no layer '" +
                   std::string(words[0].second) + "'"};
    Layer& l = w.layers[static_cast<size_t>(*li)];
    if (l.kind == LayerKind::Host)
      return Error{where(words[0].first) + "layer '" + l.name +
                   "' runs on the host: it has no NPU precision"};
    l.precision = *p;
  }
  resolve_precisions(w);
  return std::nullopt;
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
    case LayerKind::Host:
      return "host";
    case LayerKind::MatMul:
      return "matmul";
  }
  return "?";
}

const char* host_op_name(HostOp op) {
  switch (op) {
    case HostOp::Softmax:
      return "softmax";
    case HostOp::LayerNorm:
      return "layer_norm";
    case HostOp::Gelu:
      return "gelu";
    case HostOp::MaxPool:
      return "max_pool";
    case HostOp::MatMul:
      return "matmul";
    case HostOp::Sigmoid:
      return "sigmoid";
    case HostOp::Concat:
      return "concat";
  }
  return "?";
}

bool host_op_reads_other(HostOp op) { return op == HostOp::MatMul || op == HostOp::Concat; }

int64_t Layer::reduction() const {
  switch (kind) {
    case LayerKind::Dense:
    case LayerKind::MatMul:
      return k;
    case LayerKind::Conv2d:
      return kh * kw * (in_shape.c / groups);
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

Result<std::string> with_tile_limits(const std::string& text, const TileLimits& tiles,
                                     std::string_view file) {
  if (tiles == TileLimits{}) return text;
  WorkloadSpec pw;
  Tree tree;
  if (auto e = textproto::parse(text, std::string(file), pw, tree); !e.empty()) return Error{e};
  if (pw.max_tile_rows() == 0 && pw.max_tile_blocks() == 0) {
    // Appended, so the text keeps its comments and layout.
    std::string out = text;
    if (!out.empty() && out.back() != '\n') out += '\n';
    if (tiles.max_rows) out += "max_tile_rows: " + std::to_string(tiles.max_rows) + "\n";
    if (tiles.max_blocks) out += "max_tile_blocks: " + std::to_string(tiles.max_blocks) + "\n";
    return out;
  }
  // The file sets a cap already: a field may appear once, so the text is printed again.
  if (tiles.max_rows) pw.set_max_tile_rows(tiles.max_rows);
  if (tiles.max_blocks) pw.set_max_tile_blocks(tiles.max_blocks);
  std::string out;
  if (!google::protobuf::TextFormat::PrintToString(pw, &out))
    return Error{std::string(file) + ": cannot print the workload with its tile limits"};
  return out;
}

std::vector<int8_t> generate_input(const Workload& w) {
  if (!w.input_data.empty()) return w.input_data;
  return random_int8(stream_seed(w.seed, 0), w.input.elements(), -16, 16);
}

LayerData generate_layer_data(const Workload& w, int index) {
  const Layer& l = w.layers[static_cast<size_t>(index)];
  const uint64_t base = 1 + 3 * static_cast<uint64_t>(index);
  LayerData d;
  if (l.data) {
    d.weights = l.data->weights;
    d.bias = l.data->bias;
  } else if (l.kind == LayerKind::Dense || l.kind == LayerKind::Conv2d) {
    const int64_t kk = l.reduction();
    const int64_t nn = l.kind == LayerKind::Dense ? l.n : l.out_shape.c;  // transposed: n
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

// Resolves a layer reference ("input" or an earlier layer's name) to kInputTensor / an index.
std::optional<int> resolve(const Workload& w, const std::string& name) {
  if (name == "input") return kInputTensor;
  return w.find_layer(name);
}

std::optional<Error> validate_host(const Workload& w, const HostSpec& h, const Tree* ht,
                                   const Locator& loc, const std::string& lwhere,
                                   const std::string& lname, const std::string& in_desc, Layer& l) {
  auto where = [&](const char* f) { return loc.at(ht, h, f, -1, lwhere); };
  const Shape& in = l.in_shape;
  l.kind = LayerKind::Host;
  l.out_shape = in;
  HostParams& p = l.host;
  p.in_scale = h.in_scale();
  p.out_scale = h.out_scale();
  p.other_scale = h.other_scale();
  p.transpose_other = h.transpose_other();
  p.gamma.assign(h.gamma().begin(), h.gamma().end());
  p.beta.assign(h.beta().begin(), h.beta().end());
  p.epsilon = h.epsilon() > 0 ? h.epsilon() : 1e-5f;
  if (!(p.in_scale > 0) || !(p.out_scale > 0) || !std::isfinite(p.in_scale) ||
      !std::isfinite(p.out_scale))
    return fail(where(p.in_scale > 0 ? "out_scale" : "in_scale"),
                lname + ": host.in_scale and host.out_scale must be positive");
  switch (h.op()) {
    case HostSpec::SOFTMAX:
      p.op = HostOp::Softmax;
      break;
    case HostSpec::GELU:
      p.op = HostOp::Gelu;
      break;
    case HostSpec::SIGMOID:
      p.op = HostOp::Sigmoid;
      break;
    case HostSpec::CONCAT: {
      p.op = HostOp::Concat;
      auto j = resolve(w, h.other());
      if (!j)
        return fail(where("other"),
                    lname + ": host.other " + quoted(h.other()) + " names no earlier layer");
      l.other = *j;
      if (!(p.other_scale > 0))
        return fail(where("other_scale"), lname + ": host.other_scale must be positive");
      const Shape& o = *j == kInputTensor ? w.input : w.layers[static_cast<size_t>(*j)].out_shape;
      if (o.h != in.h || o.w != in.w)
        return fail(where("other"), lname + ": host concat needs the same H x W: " + in_desc +
                                        " but other is " + o.to_string());
      l.out_shape = Shape{in.h, in.w, in.c + o.c, in.rank};
      break;
    }
    case HostSpec::LAYER_NORM:
      p.op = HostOp::LayerNorm;
      if (static_cast<int64_t>(p.gamma.size()) != in.c ||
          static_cast<int64_t>(p.beta.size()) != in.c)
        return fail(where("gamma"), lname +
                                        ": host layer_norm needs one gamma and one beta per "
                                        "channel, but " +
                                        in_desc);
      break;
    case HostSpec::MAX_POOL: {
      p.op = HostOp::MaxPool;
      p.kh = h.kh();
      p.kw = h.kw();
      p.stride = h.stride() > 0 ? h.stride() : 1;
      p.pad = h.pad();
      for (auto [f, v] : {std::pair{"kh", p.kh}, std::pair{"kw", p.kw}})
        if (auto e = check_dim(where(f), lname + ": host." + f, v)) return e;
      if (p.pad < 0 || p.pad >= std::min(p.kh, p.kw) || in.h + 2 * p.pad < p.kh ||
          in.w + 2 * p.pad < p.kw)
        return fail(where("pad"), lname + ": host max_pool window does not fit: " + in_desc);
      l.out_shape = Shape{(in.h + 2 * p.pad - p.kh) / p.stride + 1,
                          (in.w + 2 * p.pad - p.kw) / p.stride + 1, in.c, 3};
      break;
    }
    case HostSpec::MATMUL: {
      p.op = HostOp::MatMul;
      auto j = resolve(w, h.other());
      if (!j)
        return fail(where("other"),
                    lname + ": host.other " + quoted(h.other()) + " names no earlier layer");
      l.other = *j;
      if (!(p.other_scale > 0))
        return fail(where("other_scale"), lname + ": host.other_scale must be positive");
      const Shape& o = *j == kInputTensor ? w.input : w.layers[static_cast<size_t>(*j)].out_shape;
      const int64_t ok = p.transpose_other ? o.c : o.pixels();
      const int64_t on = p.transpose_other ? o.pixels() : o.c;
      if (ok != in.c)
        return fail(where("other"), lname + ": host matmul reduction mismatch: " + in_desc +
                                        " but other is " + o.to_string());
      l.out_shape = Shape{in.pixels(), 1, on, 2};
      break;
    }
    default:
      return fail(where("op"), lname + ": host.op is missing or unknown");
  }
  return std::nullopt;
}

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
  w.double_buffer = !pw.single_buffer();
  if (pw.has_min_snr_db()) {
    if (!(pw.min_snr_db() > 0) || !std::isfinite(pw.min_snr_db()))
      return fail(loc.at(&tree, pw, "min_snr_db", -1, loc.start()),
                  "min_snr_db must be a positive number of dB (got " +
                      std::to_string(pw.min_snr_db()) + ")");
    w.min_snr_db = pw.min_snr_db();
  }
  w.tiles.max_rows = options.tiles.max_rows ? options.tiles.max_rows : pw.max_tile_rows();
  w.tiles.max_blocks = options.tiles.max_blocks ? options.tiles.max_blocks : pw.max_tile_blocks();

  // Passes over the layer list.
  const uint64_t repeat = pw.repeat();
  if (repeat > kMaxRepeat)
    return fail(loc.at(&tree, pw, "repeat", -1, loc.start()),
                "repeat must be at most " + std::to_string(kMaxRepeat) + " (got " +
                    std::to_string(repeat) + ")");
  w.repeat = static_cast<uint32_t>(std::max<uint64_t>(1, repeat));

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

  if (!pw.input_data().empty()) {
    if (static_cast<int64_t>(pw.input_data().size()) != w.input.elements())
      return fail(loc.at(&tree, pw, "input_data", -1, shape_where),
                  "input_data has " + std::to_string(pw.input_data().size()) +
                      " bytes but input_shape needs " + std::to_string(w.input.elements()));
    w.input_data.assign(pw.input_data().begin(), pw.input_data().end());
  }

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
    l.input = i == 0 ? kInputTensor : i - 1;
    if (!pl.input().empty()) {
      if (pl.input() == "input") {
        l.input = kInputTensor;
      } else if (auto j = w.find_layer(pl.input())) {
        l.input = *j;
      } else {
        return fail(fwhere(pl, lt, "input"),
                    lname + ": input " + quoted(pl.input()) + " names no earlier layer");
      }
    }
    l.in_shape =
        l.input == kInputTensor ? w.input : w.layers[static_cast<size_t>(l.input)].out_shape;
    const Shape& in = l.in_shape;
    const std::string in_desc = input_name(w, l.input + 1) + " is " + in.to_string();

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
        l.transpose_output = d.transpose_output();
        if (l.transpose_output) l.out_shape = Shape{l.n, 1, l.m, 2};
        break;
      }
      case LayerSpec::kMatmul: {
        const MatMulSpec& mm = pl.matmul();
        const Tree* mt = loc.nested(lt, pl, "matmul", -1);
        l.kind = LayerKind::MatMul;
        l.relu = mm.relu();
        Shape other_shape;
        if (mm.other() == "input") {
          l.other = kInputTensor;
          other_shape = w.input;
        } else if (auto j = w.find_layer(mm.other()); j && !mm.other().empty()) {
          l.other = *j;
          other_shape = w.layers[static_cast<size_t>(*j)].out_shape;
        } else {
          return fail(fwhere(mm, mt, "other"), lname + ": matmul.other " + quoted(mm.other()) +
                                                   " names no earlier layer");
        }
        if (other_shape.c != in.c)
          return fail(fwhere(mm, mt, "other"),
                      lname + ": shape mismatch: matmul multiplies x[M x K] by other[N x K]^T, "
                              "but matmul.other " + quoted(mm.other()) + " is " +
                          other_shape.to_string() + " (K = " + std::to_string(other_shape.c) +
                          ") and " + in_desc + " (K = " + std::to_string(in.c) + ")");
        l.m = in.pixels();
        l.k = in.c;
        l.n = other_shape.pixels();
        if (auto e = check_dim(fwhere(mm, mt, "other"), lname + ": matmul N", l.n)) return *e;
        l.out_shape = Shape{l.m, 1, l.n, 2};
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
        l.pads = Pads::all(c.has_pad() ? c.pad() : 0);
        if (c.pads_size() > 0) {
          if (c.has_pad() || c.pads_size() != 4)
            return fail(fwhere(c, ct, "pads"),
                        lname + ": conv2d.pads needs 4 values [top, left, bottom, right] and no pad");
          l.pads = Pads{c.pads(0), c.pads(1), c.pads(2), c.pads(3)};
        }
        l.relu = c.relu();
        for (auto [f, v] : {std::pair{"c_out", l.c_out}, std::pair{"kh", l.kh},
                            std::pair{"kw", l.kw}, std::pair{"stride", l.stride}})
          if (auto e = check_dim(fwhere(c, ct, f), lname + ": conv2d." + f, v)) return *e;
        if (std::min({l.pads.top, l.pads.left, l.pads.bottom, l.pads.right}) < 0 ||
            l.pads.max() > 255)
          return fail(fwhere(c, ct, c.pads_size() > 0 ? "pads" : "pad"),
                      lname + ": conv2d padding must be in [0, 255] (got " + l.pads.to_string() +
                          ")");
        l.groups = c.has_groups() ? c.groups() : 1;
        if (auto e = check_dim(fwhere(c, ct, "groups"), lname + ": conv2d.groups", l.groups))
          return *e;
        if (in.c % l.groups != 0 || l.c_out % l.groups != 0)
          return fail(fwhere(c, ct, "groups"),
                      lname + ": conv2d.groups = " + std::to_string(l.groups) +
                          " must divide c_out = " + std::to_string(l.c_out) + " and c_in, but " +
                          in_desc);
        if (c.has_c_in() && c.c_in() != in.c)
          return fail(fwhere(c, ct, "c_in"), lname + ": input shape mismatch: conv2d.c_in = " +
                                                 std::to_string(c.c_in()) + " but " + in_desc);
        const int64_t pad_h = l.pads.top + l.pads.bottom, pad_w = l.pads.left + l.pads.right;
        const int64_t oh = (in.h + pad_h - l.kh) / l.stride + 1;
        const int64_t ow = (in.w + pad_w - l.kw) / l.stride + 1;
        if (in.h + pad_h < l.kh || in.w + pad_w < l.kw)
          return fail(lwhere, lname + ": a " + std::to_string(l.kh) + "x" + std::to_string(l.kw) +
                                  " kernel with pad " + l.pads.to_string() +
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
      case LayerSpec::kHost: {
        const HostSpec& h = pl.host();
        const Tree* ht = loc.nested(lt, pl, "host", -1);
        if (auto e = validate_host(w, h, ht, loc, lwhere, lname, in_desc, l)) return *e;
        break;
      }
      case LayerSpec::KIND_NOT_SET:
        return fail(lwhere, lname + ": no layer kind (dense, conv2d, add, relu, matmul or host)");
    }

    if (pl.precision() == LayerSpec::BF16) {
      if (l.kind == LayerKind::Host)
        return fail(fwhere(pl, lt, "precision"),
                    lname + ": host layers have no NPU precision (they compute in double)");
      l.precision = Precision::Bf16;
    }

    if (pl.has_quant()) {
      const QuantSpec& q = pl.quant();
      const Tree* qt = loc.nested(lt, pl, "quant", -1);
      // A factor's range; `index` >= 0: element `index` of the repeated channel fields.
      auto check = [&](int64_t mult, int64_t shift, const char* mf, const char* sf,
                       int index) -> std::optional<Error> {
        const std::string at = index < 0 ? "" : "[" + std::to_string(index) + "]";
        if (mult < -32768 || mult > 32767)
          return fail(loc.at(qt, q, mf, index, lwhere),
                      lname + ": quant." + mf + at + " must fit int16 (got " +
                          std::to_string(mult) + ")");
        if (shift < 0 || shift > 31)
          return fail(loc.at(qt, q, sf, index, lwhere),
                      lname + ": quant." + sf + at + " must be in [0, 31] (got " +
                          std::to_string(shift) + ")");
        return std::nullopt;
      };
      const bool channels = q.channel_mult_size() > 0 || q.channel_shift_size() > 0;
      if (channels || q.per_channel()) {
        const char* field = channels ? "channel_mult" : "per_channel";
        if ((l.kind != LayerKind::Dense && l.kind != LayerKind::Conv2d) || l.transpose_output)
          return fail(fwhere(q, qt, field),
                      lname + ": per-channel requantisation is for dense (not transposed) and "
                              "conv2d layers");
        if (q.has_mult() || q.has_shift())
          return fail(fwhere(q, qt, q.has_mult() ? "mult" : "shift"),
                      lname + ": quant.mult/shift do not combine with per-channel factors");
      }
      if (channels) {
        const int64_t n = l.out_shape.c;
        if (q.channel_mult_size() != n || q.channel_shift_size() != n)
          return fail(loc.at(qt, q, q.channel_mult_size() != n ? "channel_mult" : "channel_shift",
                             0, lwhere),
                      lname + ": per-channel requantisation needs " + std::to_string(n) +
                          " channel_mult and channel_shift values, one per output channel (got " +
                          std::to_string(q.channel_mult_size()) + " and " +
                          std::to_string(q.channel_shift_size()) + ")");
        for (int64_t c = 0; c < n; ++c) {
          const int64_t m = q.channel_mult(static_cast<int>(c)),
                        sh = q.channel_shift(static_cast<int>(c));
          if (auto e = check(m, sh, "channel_mult", "channel_shift", static_cast<int>(c)))
            return *e;
          l.channel_quant.push_back(Quant{static_cast<int16_t>(m), static_cast<uint8_t>(sh)});
        }
      } else if (q.per_channel()) {
        // Calibrated per channel once the data is known (below); sized now for the tile plan.
        l.channel_quant.assign(static_cast<size_t>(l.out_shape.c), Quant{});
      } else {
        const int64_t mult = q.has_mult() ? q.mult() : 1;
        const int64_t shift = q.has_shift() ? q.shift() : 0;
        if (auto e = check(mult, shift, "mult", "shift", -1)) return *e;
        l.quant = Quant{static_cast<int16_t>(mult), static_cast<uint8_t>(shift)};
      }
    }

    if (!pl.weights().empty() || pl.bias_size() > 0) {
      if (l.kind != LayerKind::Dense && l.kind != LayerKind::Conv2d)
        return fail(fwhere(pl, lt, "weights"),
                    lname + ": only dense and conv2d layers take weights and bias");
      const int64_t nn = l.kind == LayerKind::Dense ? l.n : l.out_shape.c;
      const int64_t want_w = l.reduction() * nn;
      if (static_cast<int64_t>(pl.weights().size()) != want_w || pl.bias_size() != nn)
        return fail(fwhere(pl, lt, pl.weights().empty() ? "bias" : "weights"),
                    lname + ": explicit data needs " + std::to_string(want_w) +
                        " weight bytes and " + std::to_string(nn) + " biases (got " +
                        std::to_string(pl.weights().size()) + " and " +
                        std::to_string(pl.bias_size()) + ")");
      auto d = std::make_shared<LayerData>();
      d->weights.assign(pl.weights().begin(), pl.weights().end());
      d->bias.assign(pl.bias().begin(), pl.bias().end());
      l.data = std::move(d);
    }

    if (auto plan = plan_tiles(l, isa::default_array(), w.tiles); !plan)
      return fail(lwhere, lname + ": " + plan.error());
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
    if (l.kind == LayerKind::Host) {
      ref->layers.push_back(host_layer_output(w, i, ref->input, ref->layers));
      continue;
    }
    const std::vector<int32_t> acc = layer_accumulators(w, i, ref->input, ref->layers, data);
    if (l.is_gemm()) {
      if (!pw.layer(i).has_quant()) {
        l.quant = calibrate(acc);
      } else if (pw.layer(i).quant().per_channel() &&
                 pw.layer(i).quant().channel_mult_size() == 0) {
        // Per channel: each output channel's accumulators calibrated on their own.
        const size_t n = l.channel_quant.size();
        std::vector<int32_t> ch;
        for (size_t c = 0; c < n; ++c) {
          ch.clear();
          for (size_t j = c; j < acc.size(); j += n) ch.push_back(acc[j]);
          l.channel_quant[c] = calibrate(ch);
        }
      }
    }
    ref->layers.push_back(requantize_layer(l, acc, ref->saturations));
  }
  w.reference = std::move(ref);
  // Precisions: calibration above is the int8 chain (a BF16 layer keeps the int8 layer's
  // quantisation factor); the reference of a workload with BF16 layers is recomputed lazily.
  resolve_precisions(w);

  // The program must fit the DRAM (and command ids).
  if (auto p = lower(w); !p) return Error{p.error()};
  return w;
}

}  // namespace
}  // namespace bud::workload
