// Lowering of validated workloads to NPU programs. The scheme (tiles, halves, tokens) is
// described in docs/workloads.md; the comments here say why the code does what it does.
#include "emu/workload/Lowering.h"

#include <algorithm>
#include <cstdio>

#include "emu/numeric/Float.h"
#include "emu/workload/Reference.h"

namespace bud::workload {
namespace {

using isa::Buffer;
using isa::Command;
using isa::Opcode;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// Every tensor of the program with its index by role.
struct Layout {
  std::vector<TensorInfo> tensors;
  int input = -1;
  int identity = -1, identity_bf16 = -1;
  std::vector<int> weights, bias, scales, operand, out;  // per layer, -1 if none
  // Block copies (weight-block layout) of the tensors later layers read as weights
  // (Layer::reads_blocks): the input's and, per layer, its output's; -1 if none.
  int input_blocks = -1;
  std::vector<int> blocks;
};

// Whether a layer reads the tensor of `producer` (-1: the workload input) as its GEMM's weights:
// a matmul's `other`, a transposed dense's input.
bool read_as_blocks(const Workload& w, int producer) {
  return std::any_of(w.layers.begin(), w.layers.end(), [producer](const Layer& l) {
    return l.reads_blocks() && (l.kind == LayerKind::MatMul ? l.other : l.input) == producer;
  });
}

// The block copy of activation `t`: ceil(pixels / B) x (entries per pixel) B x B blocks, pixel
// p's entry e the row p % B of block (p / B, e), as WGT entries (docs/workloads.md, "Attention").
TensorInfo blocks_of(const TensorInfo& t, int64_t lanes, uint64_t& bytes) {
  TensorInfo b;
  b.name = t.name + ".blocks";
  b.layer = t.layer;
  b.role = TensorRole::Blocks;
  b.shape = t.shape;
  b.c_padded = t.c_padded;
  b.elem_bytes = t.elem_bytes;
  const uint64_t per_pixel = uint64_t{t.c_padded} * t.elem_bytes / static_cast<uint64_t>(lanes);
  const auto groups = static_cast<uint64_t>((t.shape.pixels() + lanes - 1) / lanes);
  bytes = groups * per_pixel * static_cast<uint64_t>(lanes * lanes);
  return b;
}

// Zero border a tensor produced by layer `producer` (-1: the workload input) needs: the largest
// pad of the convolutions that read it, so the im2col loads can read the padding from DRAM.
int64_t border_for(const Workload& w, int producer) {
  int64_t border = 0;
  for (const Layer& l : w.layers)
    if (l.kind == LayerKind::Conv2d && l.input == producer) border = std::max(border, l.pads.max());
  return border;
}

class Allocator {
 public:
  Allocator(const Workload& w, Layout& layout) : w_(w), layout_(layout) {}

  // Places a tensor of `bytes` bytes; `where`/`who` name the layer for the error message.
  std::optional<Error> place(TensorInfo t, uint64_t bytes, const std::string& where,
                             const std::string& who) {
    const uint64_t start = align_up(next_, kTensorAlign);
    if (bytes > w_.dram_bytes || start + bytes > w_.dram_bytes)
      return Error{where + ": " + who + ": DRAM image too big: tensor '" + t.name + "' (" +
                   std::to_string(bytes) + " bytes at " + hex(start) +
                   ") does not fit in the DRAM of " + std::to_string(w_.dram_bytes) + " bytes"};
    t.addr = static_cast<uint32_t>(start);
    t.bytes = static_cast<uint32_t>(bytes);
    next_ = start + bytes;
    layout_.tensors.push_back(std::move(t));
    return std::nullopt;
  }
  int last() const { return static_cast<int>(layout_.tensors.size()) - 1; }
  uint64_t end() const { return next_; }

 private:
  const Workload& w_;
  Layout& layout_;
  uint64_t next_ = kDataBase;
};

// An activation tensor description (sizes computed in 64 bits; the allocator checks them).
std::pair<TensorInfo, uint64_t> activation(std::string name, int layer, TensorRole role,
                                           const Shape& s, int64_t border, int64_t lanes,
                                           Precision type) {
  TensorInfo t;
  t.name = std::move(name);
  t.layer = layer;
  t.role = role;
  t.shape = s;
  t.elem_bytes = type == Precision::Bf16 ? 2 : 1;
  const uint64_t cp = align_up(static_cast<uint64_t>(s.c), static_cast<uint64_t>(lanes));
  const uint64_t row = (static_cast<uint64_t>(s.w) + 2 * border) * cp * t.elem_bytes;
  const uint64_t bytes = (static_cast<uint64_t>(s.h) + 2 * border) * row;
  t.c_padded = static_cast<uint32_t>(cp);
  t.border = static_cast<uint32_t>(border);
  t.pixel_pitch = static_cast<uint32_t>(cp * t.elem_bytes);
  t.row_pitch = static_cast<uint32_t>(row);
  t.check = role == TensorRole::Activation;
  return {t, bytes};
}

Result<Layout> make_layout(const Workload& w, const isa::ArrayConfig& a) {
  const int64_t lanes = a.rows;
  Layout lay;
  Allocator alloc(w, lay);
  auto [in, in_bytes] =
      activation("input", -1, TensorRole::Input, w.input, border_for(w, -1), lanes, w.input_type);
  if (auto e = alloc.place(in, in_bytes, w.input_where, "input")) return *e;
  lay.input = alloc.last();
  if (read_as_blocks(w, -1)) {
    uint64_t bytes = 0;
    const TensorInfo b = blocks_of(lay.tensors[static_cast<size_t>(lay.input)], lanes, bytes);
    if (auto e = alloc.place(b, bytes, w.input_where, "input")) return *e;
    lay.input_blocks = alloc.last();
  }
  auto needs_identity = [&](Precision p) {
    return std::any_of(w.layers.begin(), w.layers.end(), [p](const Layer& l) {
      return (l.kind == LayerKind::Add || l.kind == LayerKind::Relu) && l.precision == p;
    });
  };
  if (needs_identity(Precision::Int8)) {
    TensorInfo t;
    t.name = "identity";
    t.role = TensorRole::Identity;
    t.shape = Shape{lanes, 1, lanes, 2};
    if (auto e = alloc.place(t, a.entry_bytes(Buffer::Wgt), w.input_where, "identity")) return *e;
    lay.identity = alloc.last();
  }
  if (needs_identity(Precision::Bf16)) {
    // A B x B bf16 identity is two WGT entries of B/2 x B (docs/workloads.md, "Precision").
    TensorInfo t;
    t.name = "identity.bf16";
    t.role = TensorRole::Identity;
    t.shape = Shape{lanes, 1, lanes, 2};
    t.elem_bytes = 2;
    if (auto e = alloc.place(t, 2 * a.entry_bytes(Buffer::Wgt), w.input_where, "identity"))
      return *e;
    lay.identity_bf16 = alloc.last();
  }
  for (size_t i = 0; i < w.layers.size(); ++i) {
    const Layer& l = w.layers[i];
    const int li = static_cast<int>(i);
    const std::string who = "layer '" + l.name + "'";
    lay.weights.push_back(-1);
    lay.bias.push_back(-1);
    lay.scales.push_back(-1);
    lay.operand.push_back(-1);
    if (l.is_gemm()) {
      const Result<TilePlan> plan = plan_tiles(l, a, w.tiles);
      if (!plan) return Error{l.where + ": " + who + ": " + plan.error()};
      if (l.kind == LayerKind::Dense && l.transpose_output) {
        // W^T as INP rows: n pixels of k channels, in the layer's precision.
        auto [wt, bytes] = activation(l.name + ".weights", li, TensorRole::Weights,
                                      Shape{l.n, 1, l.k, 2}, 0, lanes, l.precision);
        wt.check = false;
        if (auto e = alloc.place(wt, bytes, l.where, who)) return *e;
        lay.weights.back() = alloc.last();
      } else if (l.kind != LayerKind::MatMul) {  // a matmul's weights are `other`'s block copy
        TensorInfo wt;
        wt.name = l.name + ".weights";
        wt.layer = li;
        wt.role = TensorRole::Weights;
        wt.shape = Shape{l.reduction(), 1, l.out_shape.c, 2};
        if (auto e = alloc.place(
                wt, static_cast<uint64_t>(plan->nb * plan->kb) * a.entry_bytes(Buffer::Wgt),
                l.where, who))
          return *e;
        lay.weights.back() = alloc.last();
      }
      // The bias: one row broadcast to every pixel (a matmul's is zero), or one row per output
      // pixel for a transposed dense (its bias runs along the pixels).
      TensorInfo bt;
      bt.name = l.name + ".bias";
      bt.layer = li;
      bt.role = TensorRole::Bias;
      bt.shape = Shape{1, 1, l.out_shape.c, 2};
      bt.c_padded = static_cast<uint32_t>(plan->nb * lanes);
      const int64_t bias_rows = l.transpose_output ? plan->pixels : 1;
      if (auto e = alloc.place(
              bt, static_cast<uint64_t>(bias_rows * plan->nb) * a.entry_bytes(Buffer::Acc),
              l.where, who))
        return *e;
      lay.bias.back() = alloc.last();
      if (l.per_channel()) {
        TensorInfo st = bt;
        st.name = l.name + ".scales";
        st.role = TensorRole::Scales;
        if (auto e = alloc.place(st, static_cast<uint64_t>(plan->nb) * a.entry_bytes(Buffer::Acc),
                                 l.where, who))
          return *e;
        lay.scales.back() = alloc.last();
      }
    }
    if (l.kind == LayerKind::Add && l.other == kFreshTensor) {
      auto [t, bytes] = activation(l.name + ".other", li, TensorRole::Operand, l.out_shape, 0,
                                   lanes, l.precision);
      if (auto e = alloc.place(t, bytes, l.where, who)) return *e;
      lay.operand.back() = alloc.last();
    }
    // A host layer's output is written by the host, not the NPU: nothing to check on the NPU.
    auto [t, bytes] = activation(l.name, li, TensorRole::Activation, l.out_shape,
                                 border_for(w, li), lanes, l.out_type);
    t.check = l.kind != LayerKind::Host;
    if (auto e = alloc.place(t, bytes, l.where, who)) return *e;
    lay.out.push_back(alloc.last());
    lay.blocks.push_back(-1);
    if (read_as_blocks(w, li)) {
      uint64_t block_bytes = 0;
      const TensorInfo b = blocks_of(lay.tensors[static_cast<size_t>(lay.out.back())], lanes,
                                     block_bytes);
      if (auto e = alloc.place(b, block_bytes, l.where, who)) return *e;
      lay.blocks.back() = alloc.last();
    }
  }
  return lay;
}

// One LOAD/STORE worth of a pixel range.
struct Xfer {
  uint32_t dram;
  uint32_t sram;
  uint32_t y, x, stride;
};

// Splits the transfer of pixels [p0, p1) (row-major over the tensor's H x W), channel blocks
// [cb0, cb0 + e), to or from consecutive scratchpad entries starting at `sram`, into 2-D
// strided commands. Whole pixels of a border-free tensor are one contiguous run (one command
// with long rows = 64-byte requests); a border breaks runs at image-row ends.
// `lanes` is the entry size in bytes (the array's B); an entry holds B / elem_bytes elements.
std::vector<Xfer> pixel_xfers(const TensorInfo& t, int64_t p0, int64_t p1, int64_t cb0, int64_t e,
                              uint32_t sram, int64_t lanes) {
  std::vector<Xfer> v;
  const int64_t w = t.shape.w;
  const int64_t per = lanes / t.elem_bytes;  // elements per entry
  const bool whole = cb0 == 0 && e * per == t.c_padded;
  auto addr = [&](int64_t p) { return t.element_addr(p / w, p % w, cb0 * per); };
  auto u32 = [](int64_t x) { return static_cast<uint32_t>(x); };
  if (t.border == 0) {
    if (whole)
      v.push_back({addr(p0), sram, 1, u32((p1 - p0) * e), u32((p1 - p0) * e * lanes)});
    else
      v.push_back({addr(p0), sram, u32(p1 - p0), u32(e), t.pixel_pitch});
    return v;
  }
  int64_t p = p0;
  uint32_t s = sram;
  while (p < p1) {
    const int64_t x = p % w;
    if (whole && x == 0 && p1 - p >= w) {
      const int64_t rows = (p1 - p) / w;
      v.push_back({addr(p), s, u32(rows), u32(w * e), t.row_pitch});
      p += rows * w;
      s += u32(rows * w * e);
      continue;
    }
    const int64_t n = std::min(w - x, p1 - p);
    if (whole)
      v.push_back({addr(p), s, 1, u32(n * e), u32(n * e * lanes)});
    else
      v.push_back({addr(p), s, u32(n), u32(e), t.pixel_pitch});
    p += n;
    s += u32(n * e);
  }
  return v;
}

// Appends commands for one layer. Holds the token discipline in one place.
class Emitter {
 public:
  Emitter(Program& p, uint16_t layer) : p_(p), layer_(layer), lanes_(p.array.rows) {}

  Command& add(Command c) {
    c.raw_opcode = static_cast<uint8_t>(c.opcode);
    c.layer = layer_;
    c.cmd_id = static_cast<uint32_t>(p_.commands.size());
    p_.commands.push_back(c);
    return p_.commands.back();
  }
  size_t size() const { return p_.commands.size(); }
  const isa::ArrayConfig& array() const { return p_.array; }
  Command& at(size_t i) { return p_.commands[i]; }

  void xfer(Opcode op, Buffer b, const Xfer& x) {
    Command c;
    c.opcode = op;
    c.buffer = b;
    c.dram_addr = x.dram;
    c.sram_base = static_cast<uint16_t>(x.sram);
    c.y_size = static_cast<uint16_t>(x.y);
    c.x_size = static_cast<uint16_t>(x.x);
    c.x_stride = x.stride;
    add(c);
  }
  void gemm(uint32_t inp, uint32_t wgt, uint32_t acc, bool reset, int64_t m, int64_t k, int64_t n,
            bool bf16 = false) {
    Command c;
    c.opcode = Opcode::Gemm;
    c.bf16 = bf16;
    c.inp_base = static_cast<uint16_t>(inp);
    c.wgt_base = static_cast<uint16_t>(wgt);
    c.acc_base = static_cast<uint16_t>(acc);
    c.reset = reset;
    c.m = static_cast<uint16_t>(m);
    c.k = static_cast<uint16_t>(k);
    c.n = static_cast<uint16_t>(n);
    add(c);
    const int64_t kb = ceil_div(k, bf16 ? lanes_ / 2 : lanes_), nb = ceil_div(n, lanes_);
    iterations_ += static_cast<uint64_t>(m * kb * nb);
    useful_ += static_cast<uint64_t>(m * k * n);
  }
  // `scales` >= 0: a per-channel POST whose scale entries (one per output block of the tile,
  // `period` of them) start at ACC entry `scales`.
  void post(uint32_t acc, uint32_t out, int64_t count, const Layer& l, int64_t scales = -1,
            int64_t period = 0) {
    Command c;
    c.opcode = Opcode::Post;
    c.acc_base = static_cast<uint16_t>(acc);
    c.out_base = static_cast<uint16_t>(out);
    c.count = static_cast<uint16_t>(count);
    c.mult = l.quant.mult;
    c.shift = l.quant.shift;
    c.clamp_lo = l.relu ? 0 : -128;
    c.clamp_hi = 127;
    // A BF16 layer or a BF16 output takes the float path with the same factor mult x 2^-shift.
    c.src_fp32 = l.precision == Precision::Bf16;
    c.dst_bf16 = l.out_type == Precision::Bf16;
    if (c.float_post()) {
      c.mult = static_cast<int16_t>(post_scale_bf16(l.quant));
      c.shift = 0;
      c.relu = c.dst_bf16 && l.relu;
    }
    if (scales >= 0) {
      c.per_channel = true;
      c.scale_base = static_cast<uint16_t>(scales);
      c.period = static_cast<uint16_t>(period);
    }
    add(c);
  }

  uint64_t iterations() const { return iterations_; }
  uint64_t useful() const { return useful_; }

 private:
  Program& p_;
  uint16_t layer_;
  int64_t lanes_;
  uint64_t iterations_ = 0, useful_ = 0;
};

// Token flags of tile `t` of `tiles` with `buffers` scratchpad halves in turn (2: double
// buffering, 1: single; docs/workloads.md, "Tokens"). Commands of the tile are
// [first_load, gemm) loads, [gemm, post) GEMMs, post, (post, end) stores.
void set_tokens(Emitter& em, size_t first_load, size_t first_gemm, size_t post, size_t end,
                int64_t t, int64_t tiles, int64_t buffers) {
  const bool waits = t >= buffers;               // reuses the halves of tile t-buffers
  const bool releases = t + buffers < tiles;     // tile t+buffers will wait for its halves
  if (waits) em.at(first_load).pop_next = true;  // C->L: compute done with tile t-buffers
  em.at(first_gemm - 1).push_next = true;        // L->C: this tile's operands are loaded
  em.at(first_gemm).pop_prev = true;
  Command& p = em.at(post);
  p.push_next = true;                // C->S: OUT half ready
  if (releases) p.push_prev = true;  // C->L: INP/WGT/ACC half free
  if (waits) p.pop_next = true;      // S->C: store done with that tile's OUT half
  em.at(post + 1).pop_prev = true;
  if (releases) em.at(end - 1).push_prev = true;  // S->C: OUT half free
}

// An activation's DRAM image: int8 data as it is or, for a bf16 tensor, as exact bf16 values; a
// bf16 Tensor's own values (host outputs). Padding stays zero (+0 in bf16).
void pack_activation(const TensorInfo& t, const Tensor& data, Program& p) {
  DramRegion r{t.addr, std::vector<uint8_t>(t.bytes, 0)};
  const Shape& s = t.shape;
  for (int64_t y = 0; y < s.h; ++y)
    for (int64_t x = 0; x < s.w; ++x)
      for (int64_t c = 0; c < s.c; ++c) {
        const size_t at = t.element_addr(y, x, c) - t.addr;
        if (t.elem_bytes == 1) {
          r.bytes[at] = static_cast<uint8_t>(data.at(y, x, c));
          continue;
        }
        const uint16_t v = data.is_bf16()
                               ? data.bf16_at(y, x, c)
                               : numeric::bf16_from_float(static_cast<float>(data.at(y, x, c)));
        r.bytes[at] = static_cast<uint8_t>(v);
        r.bytes[at + 1] = static_cast<uint8_t>(v >> 8);
      }
  p.dram_init.push_back(std::move(r));
}

// Weights as B x B blocks (B the array's lanes; nb-major, kb-minor), byte o*B+i =
// W[kb*B+i][nb*B+o]. For conv2d the padded reduction index is (ky*kw + kx) * c_padded + ci,
// matching the im2col INP rows.
void pack_weights(const Layer& l, const TilePlan& plan, const TensorInfo& t,
                  const std::vector<int8_t>& wts, Program& p) {
  DramRegion r{t.addr, std::vector<uint8_t>(t.bytes, 0)};
  const int64_t B = p.array.rows;
  const bool bf16 = l.precision == Precision::Bf16;
  const int64_t K = bf16 ? B / 2 : B;  // reduction lanes of a block (BF16: B/2 x B blocks)
  const int64_t n = l.out_shape.c;
  const int64_t cin = l.in_shape.c;
  const int64_t cp = ceil_div(cin, B) * B;
  for (int64_t nb = 0; nb < plan.nb; ++nb)
    for (int64_t kb = 0; kb < plan.kb; ++kb)
      for (int64_t o = 0; o < B; ++o)
        for (int64_t i = 0; i < K; ++i) {
          const int64_t col = nb * B + o, row = kb * K + i;
          int64_t k = row;
          if (l.kind == LayerKind::Conv2d) {
            // Grouped: block-diagonal, zero where input and output groups differ.
            const int64_t tap = row / cp, ci = row % cp;
            const int64_t cg = cin / l.groups, ng = n / l.groups;
            k = ci < cin && col < n && ci / cg == col / ng ? tap * cg + ci % cg : -1;
          } else if (row >= l.k) {
            k = -1;
          }
          if (col >= n || k < 0) continue;
          const size_t at = static_cast<size_t>(((nb * plan.kb + kb) * B * B) + (o * K + i) * (bf16 ? 2 : 1));
          const int8_t v = wts[static_cast<size_t>(k * n + col)];
          if (!bf16) {
            r.bytes[at] = static_cast<uint8_t>(v);
            continue;
          }
          const uint16_t h = numeric::bf16_from_float(static_cast<float>(v));
          r.bytes[at] = static_cast<uint8_t>(h);
          r.bytes[at + 1] = static_cast<uint8_t>(h >> 8);
        }
  p.dram_init.push_back(std::move(r));
}

// The block copy `b` of activation `t` from `t`'s DRAM image `image` (what the NPU's block
// STOREs write for a tensor it produces; packed here for the input and host outputs).
void pack_blocks(const TensorInfo& t, const DramRegion& image, const TensorInfo& b, Program& p) {
  const int64_t B = p.array.rows;
  const int64_t per_pixel = int64_t{t.c_padded} * t.elem_bytes / B;
  const int64_t elems = B / t.elem_bytes;  // elements per entry
  DramRegion r{b.addr, std::vector<uint8_t>(b.bytes, 0)};
  for (int64_t px = 0; px < t.shape.pixels(); ++px)
    for (int64_t e = 0; e < per_pixel; ++e) {
      const size_t from = t.element_addr(px / t.shape.w, px % t.shape.w, e * elems) - t.addr;
      const auto to = static_cast<size_t>(((px / B) * per_pixel + e) * B * B + (px % B) * B);
      std::copy_n(image.bytes.begin() + static_cast<std::ptrdiff_t>(from), B,
                  r.bytes.begin() + static_cast<std::ptrdiff_t>(to));
    }
  p.dram_init.push_back(std::move(r));
}

// A transposed dense's bias: one ACC row per output pixel (channel j of y), its real lanes
// bias[j] (fp32 for a BF16 layer), padding lanes 0.
void pack_row_bias(const Layer& l, const TensorInfo& t, const std::vector<int32_t>& bias,
                   Program& p) {
  DramRegion r{t.addr, std::vector<uint8_t>(t.bytes, 0)};
  const int64_t per_row = t.c_padded;  // lanes per row
  for (int64_t j = 0; j < l.n; ++j)
    for (int64_t o = 0; o < l.m; ++o) {
      const int32_t b = bias[static_cast<size_t>(j)];
      const uint32_t v = l.precision == Precision::Bf16 ? numeric::int32_to_fp32(b)
                                                         : static_cast<uint32_t>(b);
      for (int k = 0; k < 4; ++k)
        r.bytes[static_cast<size_t>((j * per_row + o) * 4 + k)] = static_cast<uint8_t>(v >> (8 * k));
    }
  p.dram_init.push_back(std::move(r));
}

// int32 lanes, or for a BF16 layer the fp32 of each bias (its accumulators are fp32).
void pack_bias(const TensorInfo& t, const std::vector<int32_t>& bias, bool fp32, Program& p) {
  DramRegion r{t.addr, std::vector<uint8_t>(t.bytes, 0)};
  for (size_t j = 0; j < bias.size(); ++j) {
    const uint32_t v =
        fp32 ? numeric::int32_to_fp32(bias[j]) : static_cast<uint32_t>(bias[j]);
    for (int b = 0; b < 4; ++b) r.bytes[j * 4 + b] = static_cast<uint8_t>(v >> (8 * b));
  }
  p.dram_init.push_back(std::move(r));
}

// Per-channel factors as POST's scale entries, one int32 lane per padded output channel: the int
// path's (shift << 16) | uint16(mult), or the float path's bf16 scale (docs/isa.md).
void pack_scales(const Layer& l, const TensorInfo& t, Program& p) {
  DramRegion r{t.addr, std::vector<uint8_t>(t.bytes, 0)};
  const bool float_path = l.precision == Precision::Bf16 || l.out_type == Precision::Bf16;
  for (size_t j = 0; j < t.bytes / 4; ++j) {
    const Quant& q = l.quant_of(static_cast<int64_t>(j));
    const uint32_t v = float_path ? post_scale_bf16(q)
                                  : uint32_t{q.shift} << 16 | static_cast<uint16_t>(q.mult);
    for (int b = 0; b < 4; ++b) r.bytes[j * 4 + b] = static_cast<uint8_t>(v >> (8 * b));
  }
  p.dram_init.push_back(std::move(r));
}

// The LOAD of a per-channel tile's scale entries (output blocks [nb0, nb0 + nbt)) to the end of
// its ACC half, and that ACC entry; -1 for a per-tensor layer.
int64_t load_scales(Emitter& em, const TensorInfo* scales, int64_t nb0, int64_t nbt,
                    uint32_t acc_half_base) {
  if (!scales) return -1;
  const isa::ArrayConfig& a = em.array();
  const auto at = static_cast<uint32_t>(acc_half_base + a.entries[2] / 2 - nbt);
  em.xfer(Opcode::Load, Buffer::Acc,
          {static_cast<uint32_t>(scales->addr + nb0 * a.entry_bytes(Buffer::Acc)), at, 1,
           static_cast<uint32_t>(nbt), static_cast<uint32_t>(nbt * a.entry_bytes(Buffer::Acc))});
  return at;
}

// What a dense, conv2d or matmul layer's tiles read and write: INP rows from `in`; WGT blocks
// from `wt` (nb-major, `wt_row` entries per output block: the weights' Kb, or a block copy's
// entries per pixel); the bias broadcast to every row, or with `bias_per_row` one row of
// nb entries per output pixel (a transposed dense); per-channel scales; the output and, when a
// later layer reads it as weights, its block copy.
struct GemmTensors {
  const TensorInfo* in = nullptr;
  const TensorInfo* wt = nullptr;
  int64_t wt_row = 0;
  const TensorInfo* bias = nullptr;
  bool bias_per_row = false;
  const TensorInfo* scales = nullptr;
  const TensorInfo* out = nullptr;
  const TensorInfo* out_blocks = nullptr;
};

// The bias LOAD of a tile: pixels [p0, p0 + rows), output blocks [nb0, nb0 + nbt).
void load_bias(Emitter& em, const GemmTensors& g, const TilePlan& plan, int64_t p0, int64_t rows,
               int64_t nb0, int64_t nbt, uint32_t acc_base) {
  const int64_t acc_bytes = em.array().entry_bytes(Buffer::Acc);
  if (g.bias_per_row)
    em.xfer(Opcode::Load, Buffer::Acc,
            {static_cast<uint32_t>(g.bias->addr + (p0 * plan.nb + nb0) * acc_bytes), acc_base,
             static_cast<uint32_t>(rows), static_cast<uint32_t>(nbt),
             static_cast<uint32_t>(plan.nb * acc_bytes)});
  else  // one int32 row broadcast to every row of the tile (x_stride 0)
    em.xfer(Opcode::Load, Buffer::Acc,
            {static_cast<uint32_t>(g.bias->addr + nb0 * acc_bytes), acc_base,
             static_cast<uint32_t>(rows), static_cast<uint32_t>(nbt), 0});
}

// The WGT LOAD of reduction blocks [kb0, kb0 + kbc) of output blocks [nb0, nb0 + nbt).
void load_weights(Emitter& em, const GemmTensors& g, int64_t nb0, int64_t nbt, int64_t kb0,
                  int64_t kbc, uint32_t wgt_base) {
  const int64_t wgt_bytes = em.array().entry_bytes(Buffer::Wgt);
  const auto addr = static_cast<uint32_t>(g.wt->addr + (nb0 * g.wt_row + kb0) * wgt_bytes);
  if (kbc == g.wt_row)  // whole rows: one contiguous run
    em.xfer(Opcode::Load, Buffer::Wgt,
            {addr, wgt_base, 1, static_cast<uint32_t>(nbt * kbc),
             static_cast<uint32_t>(nbt * kbc * wgt_bytes)});
  else
    em.xfer(Opcode::Load, Buffer::Wgt,
            {addr, wgt_base, static_cast<uint32_t>(nbt), static_cast<uint32_t>(kbc),
             static_cast<uint32_t>(g.wt_row * wgt_bytes)});
}

// The STOREs of a tile's OUT entries (pixels [p0, p0 + rows), `n` entries per pixel from entry
// e0 of each pixel): to the output tensor and, if it has one, to its block copy, where pixel p's
// entry e is row p % B of block (p / B, e): one STORE per pixel, its entries B x B bytes apart
// (docs/workloads.md, "Attention").
void store_tile(Emitter& em, const GemmTensors& g, int64_t p0, int64_t rows, int64_t e0, int64_t n,
                uint32_t out_base) {
  const int64_t B = em.array().rows;
  for (const Xfer& x : pixel_xfers(*g.out, p0, p0 + rows, e0, n, out_base, B))
    em.xfer(Opcode::Store, Buffer::Out, x);
  if (!g.out_blocks) return;
  const int64_t per_pixel = g.out->c_padded * g.out->elem_bytes / B;
  for (int64_t q = 0; q < rows; ++q) {
    const int64_t p = p0 + q;
    em.xfer(Opcode::Store, Buffer::Out,
            {static_cast<uint32_t>(g.out_blocks->addr + ((p / B) * per_pixel + e0) * B * B +
                                   (p % B) * B),
             static_cast<uint32_t>(out_base + q * n), static_cast<uint32_t>(n), 1,
             static_cast<uint32_t>(B * B)});
  }
}

// Dense, conv2d and matmul: weight-stationary over N tiles (outer), M tiles (inner).
void lower_matmul_chunked(Emitter& em, const Layer& l, const TilePlan& plan, const GemmTensors& g,
                          int64_t buffers);

void lower_matmul(Emitter& em, const Layer& l, const TilePlan& plan, const GemmTensors& g,
                  int64_t buffers) {
  if (plan.k_chunks > 1) return lower_matmul_chunked(em, l, plan, g, buffers);
  const isa::ArrayConfig& a = em.array();
  const TensorInfo& in = *g.in;
  const int64_t B = a.rows;
  const uint32_t inp_half = a.entries[0] / 2, wgt_half = a.entries[1] / 2,
                 acc_half = a.entries[2] / 2, out_half = a.entries[3] / 2;
  const int64_t tiles = plan.m_tiles * plan.n_tiles;
  const bool conv = l.kind == LayerKind::Conv2d;
  const bool bf16 = l.precision == Precision::Bf16;
  const int64_t klanes = bf16 ? B / 2 : B;  // reduction elements per INP entry
  const int64_t cb_in = in.c_padded * in.elem_bytes / B;  // INP entries per input pixel
  const int64_t om = g.out->elem_bytes;  // OUT entries per ACC entry (2 for a bf16 output)
  int64_t t = 0;
  for (int64_t j = 0; j < plan.n_tiles; ++j) {
    const int64_t nb0 = j * plan.nb_tile;
    const int64_t nbt = std::min(plan.nb_tile, plan.nb - nb0);
    // Weights alternate WGT halves per N tile: the half N tile j overwrites was last read by N
    // tile j-2, whose tiles all precede tile t-1, so the tile-level token covers it (single
    // buffering: N tile j-1's last tile is tile t-1, which the token waits for).
    const uint32_t wgt_base = static_cast<uint32_t>(j % buffers) * wgt_half;
    for (int64_t mi = 0; mi < plan.m_tiles; ++mi, ++t) {
      const int64_t p0 = mi * plan.rows;
      const int64_t rows = std::min(plan.rows, plan.pixels - p0);
      const uint32_t half = static_cast<uint32_t>(t % buffers);
      const uint32_t inp_base = half * inp_half, acc_base = half * acc_half,
                     out_base = half * out_half;
      const size_t first_load = em.size();
      if (mi == 0) load_weights(em, g, nb0, nbt, 0, plan.kb, wgt_base);
      load_bias(em, g, plan, p0, rows, nb0, nbt, acc_base);
      const int64_t scale_at = load_scales(em, g.scales, nb0, nbt, acc_base);
      if (!conv) {
        for (const Xfer& x : pixel_xfers(in, p0, p0 + rows, 0, plan.kb, inp_base, B))
          em.xfer(Opcode::Load, Buffer::Inp, x);
      } else {
        // im2col: one LOAD per output pixel, KH rows of KW*C_in_padded bytes from the
        // zero-bordered input.
        const int64_t ow = l.out_shape.w;
        const int64_t off_y = static_cast<int64_t>(in.border) - l.pads.top,
                      off_x = static_cast<int64_t>(in.border) - l.pads.left;
        for (int64_t q = 0; q < rows; ++q) {
          const int64_t p = p0 + q, oy = p / ow, ox = p % ow;
          const int64_t addr = in.addr + (oy * l.stride + off_y) * in.row_pitch +
                               (ox * l.stride + off_x) * in.pixel_pitch;
          em.xfer(Opcode::Load, Buffer::Inp,
                  {static_cast<uint32_t>(addr), static_cast<uint32_t>(inp_base + q * plan.kb),
                   static_cast<uint32_t>(l.kh), static_cast<uint32_t>(l.kw * cb_in), in.row_pitch});
        }
      }
      const size_t first_gemm = em.size();
      em.gemm(inp_base, wgt_base, acc_base, false, rows, conv ? plan.kb * klanes : l.k,
              std::min(l.out_shape.c - nb0 * B, nbt * B), bf16);
      const size_t post = em.size();
      em.post(acc_base, out_base, rows * nbt, l, scale_at, nbt);
      store_tile(em, g, p0, rows, nb0 * om, nbt * om, out_base);
      set_tokens(em, first_load, first_gemm, post, em.size(), t, tiles, buffers);
    }
  }
}

// Dense, conv2d and matmul with the reduction split into chunks (plan.k_chunks > 1): every tile
// runs k_chunks steps, each loading its INP and WGT slice into the INP/WGT halves of the step and
// accumulating into the tile's ACC (the bias loaded once, by the first step); POST and the STOREs
// follow the last step. Tokens per step: L->C from each step's loads to its GEMM, C->L when a
// step's INP/WGT half is free (its GEMM, or for a tile's last step its POST, which also frees
// the ACC half); per tile as in set_tokens: C->S, S->C.
void lower_matmul_chunked(Emitter& em, const Layer& l, const TilePlan& plan, const GemmTensors& g,
                          int64_t buffers) {
  const isa::ArrayConfig& a = em.array();
  const TensorInfo& in = *g.in;
  const int64_t B = a.rows, inp_bytes = a.entry_bytes(Buffer::Inp);
  const uint32_t inp_half = a.entries[0] / 2, wgt_half = a.entries[1] / 2,
                 acc_half = a.entries[2] / 2, out_half = a.entries[3] / 2;
  const bool conv = l.kind == LayerKind::Conv2d;
  const bool bf16 = l.precision == Precision::Bf16;
  const int64_t klanes = bf16 ? B / 2 : B;
  const int64_t cb_in = in.c_padded * in.elem_bytes / B;
  const int64_t om = g.out->elem_bytes;
  const int64_t tiles = plan.m_tiles * plan.n_tiles;
  const int64_t steps = tiles * plan.k_chunks;
  int64_t t = 0, s = 0;
  for (int64_t j = 0; j < plan.n_tiles; ++j) {
    const int64_t nb0 = j * plan.nb_tile;
    const int64_t nbt = std::min(plan.nb_tile, plan.nb - nb0);
    for (int64_t mi = 0; mi < plan.m_tiles; ++mi, ++t) {
      const int64_t p0 = mi * plan.rows;
      const int64_t rows = std::min(plan.rows, plan.pixels - p0);
      const uint32_t tile_half = static_cast<uint32_t>(t % buffers);
      const uint32_t acc_base = tile_half * acc_half, out_base = tile_half * out_half;
      int64_t scale_at = -1;
      for (int64_t c = 0; c < plan.k_chunks; ++c, ++s) {
        const int64_t kb0 = c * plan.kb_chunk;
        const int64_t kbc = std::min(plan.kb_chunk, plan.kb - kb0);
        const uint32_t half = static_cast<uint32_t>(s % buffers);
        const uint32_t inp_base = half * inp_half, wgt_base = half * wgt_half;
        const size_t first_load = em.size();
        // WGT blocks are nb-major, kb-minor: this chunk is kbc blocks of each of nbt rows.
        load_weights(em, g, nb0, nbt, kb0, kbc, wgt_base);
        if (c == 0) {
          load_bias(em, g, plan, p0, rows, nb0, nbt, acc_base);
          scale_at = load_scales(em, g.scales, nb0, nbt, acc_base);
        }
        if (!conv) {
          for (const Xfer& x : pixel_xfers(in, p0, p0 + rows, kb0, kbc, inp_base, B))
            em.xfer(Opcode::Load, Buffer::Inp, x);
        } else {
          // im2col slice: reduction blocks [kb0, kb0 + kbc) of each output pixel, where block
          // f is input row ky = f / (KW * C_in blocks) at offset f % (KW * C_in blocks); each
          // row's entries are contiguous in the zero-bordered input.
          const int64_t ow = l.out_shape.w, row_entries = l.kw * cb_in;
          const int64_t off_y = static_cast<int64_t>(in.border) - l.pads.top,
                        off_x = static_cast<int64_t>(in.border) - l.pads.left;
          for (int64_t q = 0; q < rows; ++q) {
            const int64_t p = p0 + q, oy = p / ow, ox = p % ow;
            const int64_t base = in.addr + (oy * l.stride + off_y) * in.row_pitch +
                                 (ox * l.stride + off_x) * in.pixel_pitch;
            for (int64_t f = kb0; f < kb0 + kbc;) {
              const int64_t ky = f / row_entries, e0 = f % row_entries;
              const int64_t n = std::min(row_entries - e0, kb0 + kbc - f);
              em.xfer(Opcode::Load, Buffer::Inp,
                      {static_cast<uint32_t>(base + ky * in.row_pitch + e0 * inp_bytes),
                       static_cast<uint32_t>(inp_base + q * kbc + (f - kb0)), 1,
                       static_cast<uint32_t>(n), static_cast<uint32_t>(n * inp_bytes)});
              f += n;
            }
          }
        }
        const size_t gemm = em.size();
        const int64_t k = conv ? kbc * klanes : std::min(l.k - kb0 * klanes, kbc * klanes);
        em.gemm(inp_base, wgt_base, acc_base, false, rows, k,
                std::min(l.out_shape.c - nb0 * B, nbt * B), bf16);
        if (s >= buffers) em.at(first_load).pop_next = true;  // C->L: this step's halves free
        em.at(gemm - 1).push_next = true;                     // L->C: operands loaded
        em.at(gemm).pop_prev = true;
        const bool releases = s + buffers < steps;
        if (c + 1 < plan.k_chunks && releases) em.at(gemm).push_prev = true;
      }
      const size_t post = em.size();
      em.post(acc_base, out_base, rows * nbt, l, scale_at, nbt);
      store_tile(em, g, p0, rows, nb0 * om, nbt * om, out_base);
      Command& pc = em.at(post);
      pc.push_next = true;                                  // C->S: OUT half ready
      if (s - 1 + buffers < steps) pc.push_prev = true;     // C->L: last step's and ACC halves free
      if (t >= buffers) pc.pop_next = true;                 // S->C: OUT half stored
      em.at(post + 1).pop_prev = true;
      if (t + buffers < tiles) em.at(em.size() - 1).push_prev = true;  // S->C: OUT half free
    }
  }
}

// Add and relu: each B-channel block of a pixel is one GEMM row times a B x B identity block,
// so the MAC array moves (and for add, sums) the operands into ACC and POST requantises.
// BF16: a block's B channels are two INP entries, so each GEMM row has K = B (two reduction
// blocks) and the identity is two WGT entries (docs/workloads.md, "Precision").
void lower_elementwise(Emitter& em, const Layer& l, const TilePlan& plan, const TensorInfo& in,
                       const TensorInfo* other, const TensorInfo& identity, const TensorInfo& out,
                       const TensorInfo* out_blocks, int64_t buffers) {
  GemmTensors g;
  g.out = &out;
  g.out_blocks = out_blocks;
  const isa::ArrayConfig& a = em.array();
  const int64_t B = a.rows;
  const uint32_t inp_half = a.entries[0] / 2, acc_half = a.entries[2] / 2,
                 out_half = a.entries[3] / 2;
  const int64_t tiles = plan.m_tiles;
  const int64_t cb = plan.nb;  // B-channel blocks per pixel
  const bool bf16 = l.precision == Precision::Bf16;
  const int64_t ie = bf16 ? 2 : 1;      // INP entries per block
  const int64_t om = out.elem_bytes;  // OUT entries per block
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t p0 = t * plan.rows;
    const int64_t rows = std::min(plan.rows, plan.pixels - p0);
    const int64_t n_rows = rows * cb;
    const uint32_t half = static_cast<uint32_t>(t % buffers);
    const uint32_t inp_base = half * inp_half, acc_base = half * acc_half,
                   out_base = half * out_half;
    const size_t first_load = em.size();
    // The identity block stays in WGT entry 0 (BF16: entries 0 and 1) for the whole layer.
    if (t == 0)
      em.xfer(Opcode::Load, Buffer::Wgt,
              {identity.addr, 0, 1, static_cast<uint32_t>(ie),
               static_cast<uint32_t>(ie * a.entry_bytes(Buffer::Wgt))});
    const uint32_t other_base = inp_base + static_cast<uint32_t>(n_rows * ie);
    for (const Xfer& x : pixel_xfers(in, p0, p0 + rows, 0, cb * ie, inp_base, B))
      em.xfer(Opcode::Load, Buffer::Inp, x);
    if (other)
      for (const Xfer& x : pixel_xfers(*other, p0, p0 + rows, 0, cb * ie, other_base, B))
        em.xfer(Opcode::Load, Buffer::Inp, x);
    const size_t first_gemm = em.size();
    em.gemm(inp_base, 0, acc_base, true, n_rows, B, B, bf16);
    if (other) em.gemm(other_base, 0, acc_base, false, n_rows, B, B, bf16);
    const size_t post = em.size();
    em.post(acc_base, out_base, n_rows, l);
    store_tile(em, g, p0, rows, 0, cb * om, out_base);
    set_tokens(em, first_load, first_gemm, post, em.size(), t, tiles, buffers);
  }
}

}  // namespace

uint64_t host_op_cycles(const Layer& l) {
  const auto in = static_cast<uint64_t>(l.in_shape.elements());
  const auto out = static_cast<uint64_t>(l.out_shape.elements());
  uint64_t other = 0, compute = 0;
  switch (l.host.op) {
    case HostOp::Softmax:
      compute = kHostSoftmaxCycles * in;
      break;
    case HostOp::LayerNorm:
      compute = kHostLayerNormCycles * in;
      break;
    case HostOp::Gelu:
    case HostOp::Sigmoid:  // one exp and a division, as GELU's erf
      compute = kHostGeluCycles * in;
      break;
    case HostOp::Concat:  // a copy: the bytes only
      other = static_cast<uint64_t>(l.out_shape.elements()) - in;
      break;
    case HostOp::MaxPool:
      compute = out * static_cast<uint64_t>(l.host.kh * l.host.kw);
      break;
    case HostOp::MatMul: {
      other = static_cast<uint64_t>(l.in_shape.c) * static_cast<uint64_t>(l.out_shape.c);
      const uint64_t macs = static_cast<uint64_t>(l.in_shape.pixels()) * other;
      compute = (macs + kHostMacsPerCycle - 1) / kHostMacsPerCycle;
      break;
    }
  }
  const uint64_t bytes = in + other + out;
  return kHostSyncCycles + (bytes + kHostBytesPerCycle - 1) / kHostBytesPerCycle + compute;
}

const char* tensor_role_name(TensorRole r) {
  switch (r) {
    case TensorRole::Input:
      return "input";
    case TensorRole::Weights:
      return "weights";
    case TensorRole::Bias:
      return "bias";
    case TensorRole::Operand:
      return "operand";
    case TensorRole::Identity:
      return "identity";
    case TensorRole::Activation:
      return "activation";
    case TensorRole::Scales:
      return "scales";
    case TensorRole::Blocks:
      return "blocks";
  }
  return "?";
}

const TensorInfo* Program::find_tensor(std::string_view name) const {
  for (const TensorInfo& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

std::optional<int> Program::layer_of_command(uint32_t cmd) const {
  if (pass_commands > 0 && cmd < uint64_t{pass_commands} * passes) cmd %= pass_commands;
  for (size_t i = 0; i < layers.size(); ++i)
    if (cmd >= layers[i].first_cmd && cmd <= layers[i].last_cmd) return static_cast<int>(i);
  return std::nullopt;
}

Result<TilePlan> plan_tiles(const Layer& l, const isa::ArrayConfig& a, const TileLimits& limits) {
  const int64_t B = a.rows;
  const int64_t inp_half = a.entries[0] / 2, wgt_half = a.entries[1] / 2,
                acc_half = a.entries[2] / 2, out_half = a.entries[3] / 2;
  // BF16: B/2 reduction elements per INP entry; a bf16 output takes two OUT entries per block.
  const bool bf16 = l.precision == Precision::Bf16;
  const int64_t klanes = bf16 ? B / 2 : B;
  const int64_t om = l.out_type == Precision::Bf16 ? 2 : 1;
  TilePlan p;
  p.pixels = l.out_shape.pixels();
  if (l.kind == LayerKind::Host) {
    p.rows = std::max<int64_t>(p.pixels, 1);
    p.m_tiles = p.n_tiles = 0;
    return p;
  }
  if (l.is_gemm()) {
    p.kb = l.kind != LayerKind::Conv2d ? ceil_div(l.k, klanes)
                                       : l.kh * l.kw * ceil_div(l.in_shape.c, B) * (B / klanes);
    p.nb = ceil_div(l.out_shape.c, B);
    // A reduction longer than half the WGT scratchpad runs in equal chunks that each fit.
    p.k_chunks = ceil_div(p.kb, std::min(wgt_half, inp_half));
    p.kb_chunk = ceil_div(p.kb, p.k_chunks);
    p.nb_tile = std::min<int64_t>(p.nb, wgt_half / p.kb_chunk);
    if (limits.max_blocks > 0) p.nb_tile = std::min<int64_t>(p.nb_tile, limits.max_blocks);
    // Per channel: the tile's scale entries take nb_tile ACC entries at the end of the half.
    if (l.per_channel()) {
      p.nb_tile = std::min<int64_t>(p.nb_tile, acc_half / 2);
      p.scale_entries = p.nb_tile;
    }
    p.rows = std::min({p.pixels, inp_half / p.kb_chunk, (acc_half - p.scale_entries) / p.nb_tile,
                       out_half / (p.nb_tile * om)});
  } else {
    const int64_t cb = ceil_div(l.in_shape.c, B);
    const int64_t ops = l.kind == LayerKind::Add ? 2 : 1;
    const int64_t ie = bf16 ? 2 : 1;  // INP entries per block
    p.kb = cb * ie;
    p.nb = p.nb_tile = cb;
    if (cb * ie * ops > inp_half || cb * om > out_half)
      return Error{"cannot be tiled: even a 1-pixel tile of " + std::to_string(l.in_shape.c) +
                   " channels needs " + std::to_string(cb * ie * ops) +
                   " INP entries but half the INP scratchpad holds " + std::to_string(inp_half)};
    p.rows = std::min({p.pixels, inp_half / (cb * ie * ops), acc_half / cb, out_half / (cb * om)});
  }
  if (limits.max_rows > 0) p.rows = std::min<int64_t>(p.rows, limits.max_rows);
  p.m_tiles = ceil_div(p.pixels, p.rows);
  p.n_tiles = ceil_div(p.nb, p.nb_tile);
  return p;
}

Result<std::vector<TensorInfo>> plan_dram(const Workload& w, const isa::ArrayConfig& a) {
  Result<Layout> lay = make_layout(w, a);
  if (!lay) return Error{lay.error()};
  return std::move(lay.value().tensors);
}

Result<Program> lower(const Workload& w, const isa::ArrayConfig& a) {
  if (a.rows != a.cols || a.rows == 0)
    return Error{"array " + std::string(a.name) + " is " + std::to_string(a.rows) + " x " +
                 std::to_string(a.cols) + ": the lowering needs a square array"};
  Result<Layout> lay_r = make_layout(w, a);
  if (!lay_r) return Error{lay_r.error()};
  const Layout& lay = lay_r.value();
  Program p;
  p.array = a;
  p.workload = w.name;
  p.dram_bytes = w.dram_bytes;
  p.tensors = lay.tensors;
  for (const TensorInfo& t : p.tensors) p.data_end = std::max(p.data_end, t.addr + t.bytes);

  // Initial DRAM image.
  pack_activation(p.tensors[static_cast<size_t>(lay.input)], Tensor{w.input, generate_input(w), {}, 0},
                  p);
  if (lay.input_blocks >= 0)
    pack_blocks(p.tensors[static_cast<size_t>(lay.input)], p.dram_init.back(),
                p.tensors[static_cast<size_t>(lay.input_blocks)], p);
  if (lay.identity >= 0) {
    const size_t B = a.rows;
    DramRegion r{p.tensors[static_cast<size_t>(lay.identity)].addr, std::vector<uint8_t>(B * B, 0)};
    for (size_t i = 0; i < B; ++i) r.bytes[i * B + i] = 1;
    p.dram_init.push_back(std::move(r));
  }
  if (lay.identity_bf16 >= 0) {
    // Two B/2 x B blocks: entry kb holds 1.0 at (o, i) where o == kb * B/2 + i.
    const size_t B = a.rows, L = B / 2;
    DramRegion r{p.tensors[static_cast<size_t>(lay.identity_bf16)].addr,
                 std::vector<uint8_t>(2 * B * B, 0)};
    const uint16_t one = numeric::bf16_from_float(1.0f);
    for (size_t kb = 0; kb < 2; ++kb)
      for (size_t i = 0; i < L; ++i) {
        const size_t at = kb * B * B + ((kb * L + i) * L + i) * 2;
        r.bytes[at] = static_cast<uint8_t>(one);
        r.bytes[at + 1] = static_cast<uint8_t>(one >> 8);
      }
    p.dram_init.push_back(std::move(r));
  }
  std::vector<TilePlan> plans;
  std::shared_ptr<const ReferenceResult> host_ref;
  for (size_t i = 0; i < w.layers.size(); ++i) {
    const Layer& l = w.layers[i];
    Result<TilePlan> plan = plan_tiles(l, a, w.tiles);
    if (!plan) return Error{l.where + ": layer '" + l.name + "': " + plan.error()};
    plans.push_back(plan.value());
    const LayerData data = generate_layer_data(w, static_cast<int>(i));
    if (l.kind == LayerKind::Dense && l.transpose_output) {
      // W^T as n rows of k channels; the bias along the output pixels.
      std::vector<int8_t> wt(data.weights.size());
      for (int64_t kk = 0; kk < l.k; ++kk)
        for (int64_t j = 0; j < l.n; ++j)
          wt[static_cast<size_t>(j * l.k + kk)] = data.weights[static_cast<size_t>(kk * l.n + j)];
      pack_activation(p.tensors[static_cast<size_t>(lay.weights[i])],
                      Tensor{Shape{l.n, 1, l.k, 2}, std::move(wt), {}, 0}, p);
      pack_row_bias(l, p.tensors[static_cast<size_t>(lay.bias[i])], data.bias, p);
    } else if (lay.weights[i] >= 0) {
      pack_weights(l, plans.back(), p.tensors[static_cast<size_t>(lay.weights[i])], data.weights,
                   p);
      pack_bias(p.tensors[static_cast<size_t>(lay.bias[i])], data.bias,
                l.precision == Precision::Bf16, p);
      if (lay.scales[i] >= 0) pack_scales(l, p.tensors[static_cast<size_t>(lay.scales[i])], p);
    }
    if (lay.operand[i] >= 0)
      pack_activation(p.tensors[static_cast<size_t>(lay.operand[i])],
                      Tensor{l.out_shape, data.other, {}, 0}, p);
    // Host layers: the golden side computes the output, placed before the run (docs/import.md).
    if (l.kind == LayerKind::Host) {
      if (!host_ref) host_ref = std::make_shared<ReferenceResult>(reference_of(w, a));
      pack_activation(p.tensors[static_cast<size_t>(lay.out[i])], host_ref->layers[i], p);
      if (lay.blocks[i] >= 0)
        pack_blocks(p.tensors[static_cast<size_t>(lay.out[i])], p.dram_init.back(),
                    p.tensors[static_cast<size_t>(lay.blocks[i])], p);
      continue;
    }
    // Bordered outputs: make the zero border explicit in the image.
    const TensorInfo& o = p.tensors[static_cast<size_t>(lay.out[i])];
    if (o.border > 0) p.dram_init.push_back(DramRegion{o.addr, std::vector<uint8_t>(o.bytes, 0)});
  }

  // Commands.
  const int64_t buffers = w.double_buffer ? 2 : 1;
  for (size_t i = 0; i < w.layers.size(); ++i) {
    const Layer& l = w.layers[i];
    const TilePlan& plan = plans[i];
    Emitter em(p, static_cast<uint16_t>(i));
    LayerInfo info;
    info.name = l.name;
    info.kind = l.kind;
    info.precision = l.kind == LayerKind::Host ? Precision::Int8 : l.precision;
    info.first_cmd = static_cast<uint32_t>(p.commands.size());
    const TensorInfo& in = p.tensors[static_cast<size_t>(
        l.input == kInputTensor ? lay.input : lay.out[static_cast<size_t>(l.input)])];
    const TensorInfo& out = p.tensors[static_cast<size_t>(lay.out[i])];
    if (l.kind == LayerKind::Host) {
      info.host_cycles = host_op_cycles(l);
      p.host_cycles += info.host_cycles;
    } else if (l.is_gemm()) {
      auto at = [&](int index) { return &p.tensors[static_cast<size_t>(index)]; };
      // The block copy of a layer's tensor (kInputTensor: the input's).
      auto blocks = [&](int tensor) {
        return at(tensor == kInputTensor ? lay.input_blocks : lay.blocks[static_cast<size_t>(tensor)]);
      };
      GemmTensors g;
      g.in = &in;
      g.bias = at(lay.bias[i]);
      g.scales = lay.scales[i] >= 0 ? at(lay.scales[i]) : nullptr;
      g.out = &out;
      g.out_blocks = lay.blocks[i] >= 0 ? at(lay.blocks[i]) : nullptr;
      if (l.reads_blocks()) {
        // matmul: x . other^T with other's block copy as WGT; a transposed dense: W^T (its INP
        // rows) . x^T with x's block copy as WGT and the bias along the rows.
        const bool mm = l.kind == LayerKind::MatMul;
        g.wt = blocks(mm ? l.other : l.input);
        g.wt_row = int64_t{g.wt->c_padded} * g.wt->elem_bytes / a.rows;
        if (!mm) {
          g.in = at(lay.weights[i]);
          g.bias_per_row = true;
        }
      } else {
        g.wt = at(lay.weights[i]);
        g.wt_row = plan.kb;
      }
      lower_matmul(em, l, plan, g, buffers);
      info.tiles = static_cast<uint32_t>(plan.m_tiles * plan.n_tiles);
    } else {
      const TensorInfo* other = nullptr;
      if (l.kind == LayerKind::Add) {
        const int idx = l.other == kFreshTensor   ? lay.operand[i]
                        : l.other == kInputTensor ? lay.input
                                                  : lay.out[static_cast<size_t>(l.other)];
        other = &p.tensors[static_cast<size_t>(idx)];
      }
      const int id = l.precision == Precision::Bf16 ? lay.identity_bf16 : lay.identity;
      lower_elementwise(em, l, plan, in, other, p.tensors[static_cast<size_t>(id)], out,
                        lay.blocks[i] >= 0 ? &p.tensors[static_cast<size_t>(lay.blocks[i])] : nullptr,
                        buffers);
      info.tiles = static_cast<uint32_t>(plan.m_tiles);
    }
    // A layer reads what the previous one stored: wait for everything between layers.
    Command end;
    end.opcode = i + 1 < w.layers.size() || w.repeat > 1 ? Opcode::Sync : Opcode::End;
    end.end_code = 0;
    em.add(end);
    info.last_cmd = static_cast<uint32_t>(p.commands.size() - 1);
    info.gemm_iterations = em.iterations();
    info.useful_macs = em.useful();
    p.gemm_iterations += info.gemm_iterations;
    p.useful_macs += info.useful_macs;
    p.layers.push_back(std::move(info));
  }
  // Repeated passes run the same commands on the same tensors (workload.proto, `repeat`): a SYNC
  // ends every pass but the last, as between layers. The host driver refills the ring as the NPU
  // retires commands, so the program may be any length.
  p.passes = std::max<uint32_t>(1, w.repeat);
  p.pass_commands = static_cast<uint32_t>(p.commands.size());
  if (p.passes > 1) {
    if (uint64_t{p.pass_commands} * p.passes > UINT32_MAX)
      return Error{w.input_where + ": repeat " + std::to_string(p.passes) + " needs " +
                   std::to_string(uint64_t{p.pass_commands} * p.passes) +
                   " commands, more than command ids count (2^32 - 1)"};
    p.commands.reserve(size_t{p.pass_commands} * p.passes);
    for (uint32_t pass = 1; pass < p.passes; ++pass)
      for (uint32_t c = 0; c < p.pass_commands; ++c) {
        Command k = p.commands[c];
        k.cmd_id = static_cast<uint32_t>(p.commands.size());
        p.commands.push_back(k);
      }
    p.commands.back().opcode = Opcode::End;
    p.commands.back().raw_opcode = static_cast<uint8_t>(Opcode::End);
    for (LayerInfo& info : p.layers) {
      info.gemm_iterations *= p.passes;
      info.useful_macs *= p.passes;
      info.host_cycles *= p.passes;
    }
    p.gemm_iterations *= p.passes;
    p.useful_macs *= p.passes;
    p.host_cycles *= p.passes;
  }
  return p;
}

DramRegion ring_image(const Program& p) {
  DramRegion r{p.ring_base, std::vector<uint8_t>(p.commands.size() * isa::kCommandBytes)};
  for (size_t i = 0; i < p.commands.size(); ++i) {
    const auto words = p.commands[i].encode();
    for (int wi = 0; wi < 4; ++wi)
      for (int b = 0; b < 8; ++b)
        r.bytes[i * 32 + static_cast<size_t>(wi * 8 + b)] =
            static_cast<uint8_t>(words[wi] >> (8 * b));
  }
  return r;
}

}  // namespace bud::workload
