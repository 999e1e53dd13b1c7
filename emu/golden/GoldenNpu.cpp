// Untimed execution of NPU commands, written from docs/isa.md alone.
#include "emu/golden/GoldenNpu.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "emu/numeric/Float.h"

namespace bud::golden {
namespace {

using isa::Buffer;
using isa::Command;
using isa::Opcode;

constexpr uint32_t kMaxTokens = 255;

int32_t get32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return static_cast<int32_t>(v);
}
void put32(uint8_t* p, int32_t x) {
  const uint32_t v = static_cast<uint32_t>(x);
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

std::string range_error(const char* what, uint64_t lo, uint64_t hi, uint64_t limit) {
  return std::string(what) + " range [" + std::to_string(lo) + ", " + std::to_string(hi) +
         ") exceeds " + std::to_string(limit);
}

}  // namespace

GoldenNpu::GoldenNpu(uint64_t dram_bytes, const isa::ArrayConfig& array)
    : array_(array), dram_(static_cast<size_t>(dram_bytes), 0) {
  for (int b = 0; b < isa::kNumBuffers; ++b) {
    const auto g = array_.geometry(static_cast<Buffer>(b));
    spad_[static_cast<size_t>(b)].assign(static_cast<size_t>(g.entries) * g.entry_bytes, 0);
  }
}

bool GoldenNpu::write_dram(uint32_t addr, std::span<const uint8_t> bytes) {
  if (uint64_t{addr} + bytes.size() > dram_.size()) return false;
  std::copy(bytes.begin(), bytes.end(), dram_.begin() + addr);
  dram_high_ = std::max<uint64_t>(dram_high_, uint64_t{addr} + bytes.size());
  return true;
}

bool GoldenNpu::read_dram(uint32_t addr, std::span<uint8_t> out) const {
  if (uint64_t{addr} + out.size() > dram_.size()) return false;
  std::copy_n(dram_.begin() + addr, out.size(), out.begin());
  return true;
}

void GoldenNpu::emit(const emu::StageTxn& t) {
  digests_[static_cast<size_t>(t.stage)].add(t);
  if (observer_) observer_(t);
}

std::string GoldenNpu::check_tokens(const Command& c) {
  // Which FIFO each bit names depends on the engine (docs/isa.md, "Commands").
  const bool prev_ok =
      c.opcode == Opcode::Gemm || c.opcode == Opcode::Post || c.opcode == Opcode::Store;
  const bool next_ok =
      c.opcode == Opcode::Load || c.opcode == Opcode::Gemm || c.opcode == Opcode::Post;
  if ((c.pop_prev || c.push_prev) && !prev_ok)
    return "illegal token bit: " + isa::opcode_name(c.raw_opcode) + " has no previous engine";
  if ((c.pop_next || c.push_next) && !next_ok)
    return "illegal token bit: " + isa::opcode_name(c.raw_opcode) + " has no next engine";
  const bool compute = c.opcode == Opcode::Gemm || c.opcode == Opcode::Post;
  if (c.pop_prev) {
    const int f = compute ? kLoadToCompute : kComputeToStore;
    if (tokens_[f] == 0)
      return std::string("deadlock: pop_prev with no token in the ") + (compute ? "L->C" : "C->S") +
             " FIFO (nothing pushed earlier in program order)";
  }
  if (c.pop_next) {
    const int f = compute ? kStoreToCompute : kComputeToLoad;
    if (tokens_[f] == 0)
      return std::string("deadlock: pop_next with no token in the ") + (compute ? "S->C" : "C->L") +
             " FIFO (nothing pushed earlier in program order)";
  }
  // An engine never pops and pushes the same FIFO, so pops do not make room for its pushes.
  if (c.push_prev) {
    const int f = compute ? kComputeToLoad : kStoreToCompute;
    if (tokens_[f] >= kMaxTokens)
      return std::string("token overflow: push_prev into a full (255) ") +
             (compute ? "C->L" : "S->C") + " FIFO";
  }
  if (c.push_next) {
    const int f = compute ? kComputeToStore : kLoadToCompute;
    if (tokens_[f] >= kMaxTokens)
      return std::string("token overflow: push_next into a full (255) ") +
             (compute ? "C->S" : "L->C") + " FIFO";
  }
  return "";
}

void GoldenNpu::push_tokens(const Command& c) {
  const bool compute = c.opcode == Opcode::Gemm || c.opcode == Opcode::Post;
  if (c.push_prev) ++tokens_[compute ? kComputeToLoad : kStoreToCompute];
  if (c.push_next) ++tokens_[compute ? kComputeToStore : kLoadToCompute];
}

std::string GoldenNpu::exec_load(const Command& c) {
  if (c.buffer == Buffer::Out) return "LOAD cannot write the OUT scratchpad (buffer 3)";
  const uint32_t e = entry_bytes(c.buffer);
  const uint64_t n = uint64_t{c.y_size} * c.x_size;
  if (c.sram_base + n > entries(c.buffer))
    return range_error((std::string("scratchpad ") + isa::buffer_name(c.buffer)).c_str(),
                       c.sram_base, c.sram_base + n, entries(c.buffer));
  if (n == 0) return "";
  if (c.dram_addr % 8 || c.x_stride % 8) return "DRAM address or stride not 8-byte aligned";
  for (uint32_t y = 0; y < c.y_size; ++y) {
    const uint64_t a = c.dram_addr + uint64_t{y} * c.x_stride;
    if (a + uint64_t{c.x_size} * e > dram_.size())
      return range_error("DRAM", a, a + uint64_t{c.x_size} * e, dram_.size());
  }
  auto& sp = spad_[static_cast<size_t>(c.buffer)];
  for (uint32_t y = 0; y < c.y_size; ++y)
    for (uint32_t x = 0; x < c.x_size; ++x) {
      const uint64_t a = c.dram_addr + uint64_t{y} * c.x_stride + uint64_t{x} * e;
      const uint32_t idx = c.sram_base + y * c.x_size + x;
      std::memcpy(&sp[size_t{idx} * e], &dram_[a], e);
      // An entry wider than a DRAM request is written in request-sized segments (docs/isa.md).
      const uint32_t seg = std::min(e, isa::kDramRequestBytes);
      for (uint32_t s = 0; s < e / seg; ++s) {
        emu::StageTxn t;
        t.stage = emu::Stage::Load;
        t.buffer = static_cast<uint8_t>(c.buffer);
        t.segment = static_cast<uint8_t>(s);
        t.size = static_cast<uint16_t>(seg);
        t.cmd_id = c.cmd_id;
        t.addr = idx;
        std::memcpy(t.data.data(), &dram_[a + s * seg], seg);
        emit(t);
      }
    }
  return "";
}

std::string GoldenNpu::exec_gemm(const Command& c, RunResult& r) {
  // R: reduction lanes per INP entry (int8: the array's rows; BF16: half of them, 2 bytes each).
  const uint32_t R = c.bf16 ? array_.rows / 2 : array_.rows, C = array_.cols;
  const uint32_t ae = entry_bytes(Buffer::Acc), ie = entry_bytes(Buffer::Inp),
                 we = entry_bytes(Buffer::Wgt);
  const uint32_t kb_n = (c.k + R - 1) / R, nb_n = (c.n + C - 1) / C;
  if (c.inp_base + uint64_t{c.m} * kb_n > entries(Buffer::Inp))
    return range_error("scratchpad inp", c.inp_base, c.inp_base + uint64_t{c.m} * kb_n,
                       entries(Buffer::Inp));
  if (c.wgt_base + uint64_t{nb_n} * kb_n > entries(Buffer::Wgt))
    return range_error("scratchpad wgt", c.wgt_base, c.wgt_base + uint64_t{nb_n} * kb_n,
                       entries(Buffer::Wgt));
  if (c.acc_base + uint64_t{c.m} * nb_n > entries(Buffer::Acc))
    return range_error("scratchpad acc", c.acc_base, c.acc_base + uint64_t{c.m} * nb_n,
                       entries(Buffer::Acc));
  const auto& inp = spad_[0];
  const auto& wgt = spad_[1];
  auto& acc = spad_[2];
  for (uint32_t m = 0; m < c.m; ++m)
    for (uint32_t nb = 0; nb < nb_n; ++nb) {
      uint8_t* entry = &acc[size_t{c.acc_base + m * nb_n + nb} * ae];
      for (uint32_t o = 0; o < C; ++o) {
        uint32_t sum = c.reset ? 0u : static_cast<uint32_t>(get32(entry + 4 * o));
        if (c.bf16) {
          // fp32 lanes: each iteration adds its balanced-tree dot of R products (docs/isa.md).
          std::array<uint16_t, 32> a{}, b{};
          for (uint32_t kb = 0; kb < kb_n; ++kb) {
            const uint8_t* in = &inp[size_t{c.inp_base + m * kb_n + kb} * ie];
            const uint8_t* w = &wgt[size_t{c.wgt_base + nb * kb_n + kb} * we];
            for (uint32_t i = 0; i < R; ++i) {
              a[i] = static_cast<uint16_t>(in[2 * i] | (in[2 * i + 1] << 8));
              b[i] = static_cast<uint16_t>(w[2 * (o * R + i)] | (w[2 * (o * R + i) + 1] << 8));
            }
            sum = numeric::add_fp32(sum, numeric::dot_bf16(a.data(), b.data(), static_cast<int>(R)));
          }
          put32(entry + 4 * o, static_cast<int32_t>(sum));
          continue;
        }
        for (uint32_t kb = 0; kb < kb_n; ++kb) {
          const uint8_t* in = &inp[size_t{c.inp_base + m * kb_n + kb} * ie];
          const uint8_t* w = &wgt[size_t{c.wgt_base + nb * kb_n + kb} * we];
          for (uint32_t i = 0; i < R; ++i)
            sum += static_cast<uint32_t>(static_cast<int32_t>(static_cast<int8_t>(in[i])) *
                                         static_cast<int8_t>(w[o * R + i]));
        }
        put32(entry + 4 * o, static_cast<int32_t>(sum));
      }
      // ACC entries wider than 64 bytes (npu32) are observed as 64-byte segments.
      const uint32_t seg = std::min(ae, isa::kDramRequestBytes);
      for (uint32_t s = 0; s < ae / seg; ++s) {
        emu::StageTxn t;
        t.stage = emu::Stage::Gemm;
        t.buffer = static_cast<uint8_t>(Buffer::Acc);
        t.segment = static_cast<uint8_t>(s);
        t.size = static_cast<uint16_t>(seg);
        t.cmd_id = c.cmd_id;
        t.addr = c.acc_base + m * nb_n + nb;
        std::memcpy(t.data.data(), entry + s * seg, seg);
        emit(t);
      }
    }
  r.gemm_iterations += uint64_t{c.m} * kb_n * nb_n;
  uint64_t useful = 0;
  for (uint32_t kb = 0; kb < kb_n; ++kb)
    for (uint32_t nb = 0; nb < nb_n; ++nb)
      useful += uint64_t{c.m} * std::min(R, c.k - kb * R) * std::min(C, c.n - nb * C);
  r.macs_useful += useful;
  if (c.bf16) r.macs_useful_bf16 += useful;
  return "";
}

std::string GoldenNpu::exec_post(const Command& c, RunResult& r) {
  if (c.acc_base + uint64_t{c.count} > entries(Buffer::Acc))
    return range_error("scratchpad acc", c.acc_base, c.acc_base + uint64_t{c.count},
                       entries(Buffer::Acc));
  if (c.out_base + uint64_t{c.out_entries()} > entries(Buffer::Out))
    return range_error("scratchpad out", c.out_base, c.out_base + uint64_t{c.out_entries()},
                       entries(Buffer::Out));
  const uint64_t scales = c.scale_entries();
  if (c.scale_base + scales > entries(Buffer::Acc))
    return range_error("scratchpad acc", c.scale_base, c.scale_base + scales,
                       entries(Buffer::Acc));
  // Per channel, entries go group by group: group g is j = g, g + period, ..., and lane l of
  // scale entry scale_base + g holds its factor (docs/isa.md, "Per-channel POST").
  const uint32_t period = c.per_channel ? std::max<uint32_t>(c.period, 1) : 1;
  const uint32_t groups = std::min(period, uint32_t{c.count});
  const uint32_t ae = entry_bytes(Buffer::Acc);
  for (uint32_t g = 0; g < groups; ++g) {
    const uint8_t* scale = c.per_channel ? &spad_[2][size_t{c.scale_base + g} * ae] : nullptr;
    for (uint32_t j = g; j < c.count; j += period) post_entry(c, j, scale, r);
  }
  return "";
}

// POST of ACC entry acc_base + j (docs/isa.md, "POST"), lane factors from `scale` (a scale
// entry) or, when null, the command. The int path: acc x mult, rounding shift, saturation,
// clamp. The float path: lane -> fp32 (int32 rounded) -> bf16, times the bf16 scale (exact in
// fp32), then -> int8 (saturating, clamp after) or -> bf16 (ReLU optional), a BF16 output as two
// OUT entries (2j, 2j + 1).
void GoldenNpu::post_entry(const Command& c, uint32_t j, const uint8_t* scale, RunResult& r) {
  const uint32_t ae = entry_bytes(Buffer::Acc), oe = entry_bytes(Buffer::Out);
  const uint32_t C = array_.cols, half = C / 2;
  const uint8_t* a = &spad_[2][size_t{c.acc_base + j} * ae];
  auto factor = [&](uint32_t lane) {
    return scale ? static_cast<uint16_t>(get32(scale + 4 * lane)) : c.scale_bits();
  };
  auto shift = [&](uint32_t lane) {
    return scale ? (static_cast<uint32_t>(get32(scale + 4 * lane)) >> 16) & 31u : uint32_t{c.shift};
  };
  auto product = [&](uint32_t lane) {
    const int32_t raw = get32(a + 4 * lane);
    const uint32_t v = c.src_fp32 ? static_cast<uint32_t>(raw) : numeric::int32_to_fp32(raw);
    return numeric::mul_bf16(numeric::fp32_to_bf16(v), factor(lane));
  };
  if (c.dst_bf16) {
    for (uint32_t part = 0; part < 2; ++part) {
      uint8_t* o = &spad_[3][size_t{c.out_base + 2 * j + part} * oe];
      for (uint32_t i = 0; i < half; ++i) {
        uint16_t h = numeric::fp32_to_bf16(product(part * half + i));
        if (c.relu && (h & 0x8000u) && h != numeric::kBf16CanonicalNan) h = 0;
        o[2 * i] = static_cast<uint8_t>(h);
        o[2 * i + 1] = static_cast<uint8_t>(h >> 8);
      }
      emit_out_entry(c, 2 * j + part, o);
    }
    return;
  }
  uint8_t* o = &spad_[3][size_t{c.out_base + j} * oe];
  for (uint32_t lane = 0; lane < C; ++lane) {
    int64_t s = 0;
    if (c.src_fp32) {
      bool sat = false;
      s = numeric::fp32_to_int8(product(lane), &sat);
      r.saturations += sat;
    } else {
      const int64_t p = int64_t{get32(a + 4 * lane)} * static_cast<int16_t>(factor(lane));
      const uint32_t sh = shift(lane);
      const int64_t rr = sh ? (p + (int64_t{1} << (sh - 1))) >> sh : p;
      s = std::clamp<int64_t>(rr, -128, 127);
      r.saturations += rr != s;
    }
    const int64_t v = std::min<int64_t>(std::max<int64_t>(s, c.clamp_lo), c.clamp_hi);
    o[lane] = static_cast<uint8_t>(static_cast<int8_t>(v));
  }
  emit_out_entry(c, j, o);
}

// The observation of POST's OUT entry out_base + j.
void GoldenNpu::emit_out_entry(const Command& c, uint32_t j, const uint8_t* o) {
  emu::StageTxn t;
  t.stage = emu::Stage::Post;
  t.buffer = static_cast<uint8_t>(Buffer::Out);
  t.size = static_cast<uint16_t>(entry_bytes(Buffer::Out));
  t.cmd_id = c.cmd_id;
  t.addr = c.out_base + j;
  std::memcpy(t.data.data(), o, t.size);
  emit(t);
}

std::string GoldenNpu::exec_store(const Command& c) {
  // The buffer field of a STORE is always OUT; the model ignores it (docs/workloads.md).
  const uint64_t n = uint64_t{c.y_size} * c.x_size;
  const uint32_t oe = entry_bytes(Buffer::Out), per = isa::kDramRequestBytes / oe;
  if (c.sram_base + n > entries(Buffer::Out))
    return range_error("scratchpad out", c.sram_base, c.sram_base + n, entries(Buffer::Out));
  if (n == 0) return "";
  if (c.dram_addr % 8 || c.x_stride % 8) return "DRAM address or stride not 8-byte aligned";
  for (uint32_t y = 0; y < c.y_size; ++y) {
    const uint64_t a = c.dram_addr + uint64_t{y} * c.x_stride;
    if (a + uint64_t{c.x_size} * oe > dram_.size())
      return range_error("DRAM", a, a + uint64_t{c.x_size} * oe, dram_.size());
  }
  for (uint32_t y = 0; y < c.y_size; ++y)
    for (uint32_t x0 = 0; x0 < c.x_size; x0 += per) {
      // One write request: up to 64 bytes of contiguous entries of the row (8 on npu8).
      const uint32_t cnt = std::min<uint32_t>(per, c.x_size - x0);
      const uint64_t a = c.dram_addr + uint64_t{y} * c.x_stride + uint64_t{x0} * oe;
      emu::StageTxn t;
      t.stage = emu::Stage::Store;
      t.buffer = static_cast<uint8_t>(Buffer::Out);
      t.size = static_cast<uint16_t>(cnt * oe);
      t.cmd_id = c.cmd_id;
      t.addr = static_cast<uint32_t>(a);
      std::memcpy(t.data.data(), &spad_[3][size_t{c.sram_base + y * c.x_size + x0} * oe], cnt * oe);
      std::memcpy(&dram_[a], t.data.data(), cnt * oe);
      dram_high_ = std::max<uint64_t>(dram_high_, a + uint64_t{cnt} * oe);
      emit(t);
    }
  return "";
}

uint64_t GoldenNpu::State::bytes() const {
  uint64_t n = dram.size();
  for (const auto& s : spad) n += s.size();
  return n;
}

void GoldenNpu::save(State& out) const {
  out.dram.assign(dram_.begin(), dram_.begin() + static_cast<long>(dram_high_));
  for (size_t b = 0; b < spad_.size(); ++b) out.spad[b] = spad_[b];
  out.tokens = tokens_;
  out.digests = digests_;
}

void GoldenNpu::restore(const State& s) {
  const size_t n = std::min(s.dram.size(), dram_.size());
  std::copy_n(s.dram.begin(), n, dram_.begin());
  dram_high_ = std::max<uint64_t>(dram_high_, n);
  for (size_t b = 0; b < spad_.size(); ++b) spad_[b] = s.spad[b];
  tokens_ = s.tokens;
  digests_ = s.digests;
}

void GoldenNpu::begin() { tokens_ = {}; }

GoldenNpu::Step GoldenNpu::step(const std::array<uint64_t, 4>& word, size_t i, RunResult& r) {
  const Command c = Command::decode(word);
  auto fail = [&](const std::string& detail) {
    r.error = "command #" + std::to_string(i) + " " + isa::opcode_name(c.raw_opcode) +
              (c.cmd_id != i ? " (cmd_id " + std::to_string(c.cmd_id) + ")" : "") + ": " + detail;
    r.tokens_left = tokens_;
    return Step::Error;
  };
  if (!isa::is_legal_opcode(c.raw_opcode))
    return fail("illegal opcode " + std::to_string(c.raw_opcode));
  const bool no_engine = c.opcode == Opcode::Sync || c.opcode == Opcode::End;
  if (no_engine && (c.pop_prev || c.pop_next || c.push_prev || c.push_next))
    return fail("illegal token bit: " + isa::opcode_name(c.raw_opcode) + " goes to no engine");
  if (std::string e = check_tokens(c); !e.empty()) return fail(e);

  emu::StageTxn f;
  f.stage = emu::Stage::Fetch;
  f.size = isa::kCommandBytes;
  f.cmd_id = c.cmd_id;
  for (int w = 0; w < 4; ++w)
    for (int b = 0; b < 8; ++b)
      f.data[static_cast<size_t>(w * 8 + b)] = static_cast<uint8_t>(word[w] >> (8 * b));
  emit(f);

  if (c.pop_prev) --tokens_[c.opcode == Opcode::Store ? kComputeToStore : kLoadToCompute];
  if (c.pop_next) --tokens_[c.opcode == Opcode::Load ? kComputeToLoad : kStoreToCompute];
  std::string err;
  switch (c.opcode) {
    case Opcode::Load:
      err = exec_load(c);
      break;
    case Opcode::Gemm:
      err = exec_gemm(c, r);
      break;
    case Opcode::Post:
      err = exec_post(c, r);
      break;
    case Opcode::Store:
      err = exec_store(c);
      break;
    case Opcode::Sync:
      break;
    case Opcode::End:
      r.ok = true;
      r.executed = static_cast<uint32_t>(i + 1);
      r.end_code = c.end_code;
      r.tokens_left = tokens_;
      return Step::End;
  }
  if (!err.empty()) return fail(err);
  push_tokens(c);
  if (c.opcode != Opcode::Sync) ++r.retired[static_cast<size_t>(c.raw_opcode - 1)];
  r.executed = static_cast<uint32_t>(i + 1);
  return Step::Next;
}

RunResult GoldenNpu::run(std::span<const std::array<uint64_t, 4>> commands) {
  RunResult r;
  begin();
  for (size_t i = 0; i < commands.size(); ++i)
    if (step(commands[i], i, r) != Step::Next) return r;
  r.error = "program ended after " + std::to_string(commands.size()) + " commands without END";
  r.tokens_left = tokens_;
  return r;
}

RunResult GoldenNpu::run(const std::vector<isa::Command>& commands) {
  std::vector<std::array<uint64_t, 4>> words;
  words.reserve(commands.size());
  for (const auto& c : commands) words.push_back(c.encode());
  return run(words);
}

RunResult GoldenNpu::run_ring(uint32_t ring_base, uint32_t count) {
  if (uint64_t{ring_base} + uint64_t{count} * isa::kCommandBytes > dram_.size()) {
    RunResult r;
    r.error = "command ring [" + std::to_string(ring_base) + ", +" + std::to_string(count) +
              " commands) is outside the DRAM";
    return r;
  }
  return run_encoded(std::span<const uint8_t>(dram_).subspan(
      ring_base, size_t{count} * isa::kCommandBytes));
}

RunResult GoldenNpu::run_encoded(std::span<const uint8_t> bytes) {
  const size_t count = bytes.size() / isa::kCommandBytes;
  std::vector<std::array<uint64_t, 4>> words(count);
  for (size_t i = 0; i < count; ++i)
    for (int w = 0; w < 4; ++w) {
      uint64_t v = 0;
      for (int b = 0; b < 8; ++b)
        v |= uint64_t{bytes[i * 32 + static_cast<size_t>(w * 8 + b)]} << (8 * b);
      words[i][static_cast<size_t>(w)] = v;
    }
  return run(words);
}

}  // namespace bud::golden
