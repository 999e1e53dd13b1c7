// Encoding and naming for the NPU contract of docs/isa.md.
#include "emu/isa/Isa.h"

#include <cctype>
#include <cstdio>
#include <vector>

#include "emu/numeric/Float.h"

namespace bud::isa {
namespace {

// Extracts `width` bits of `w` starting at bit `lo`.
constexpr uint64_t bits(uint64_t w, int lo, int width) {
  return (w >> lo) & ((width == 64) ? ~0ull : ((1ull << width) - 1));
}
// Places the low `width` bits of `v` at bit `lo`.
constexpr uint64_t field(uint64_t v, int lo, int width) {
  return (v & ((width == 64) ? ~0ull : ((1ull << width) - 1))) << lo;
}

const std::vector<std::string>& counter_names() {
  static const std::vector<std::string> names(kCounterNames.begin(), kCounterNames.end());
  return names;
}

std::string hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", v);
  return buf;
}

}  // namespace

std::string opcode_name(uint8_t opcode) {
  for (int i = 0; i < kNumOpcodes; ++i)
    if (kOpcodeValues[i] == opcode) return std::string(kOpcodeNames[i]);
  return "ILLEGAL(" + std::to_string(opcode) + ")";
}

std::optional<Opcode> parse_opcode(std::string_view name) {
  for (int i = 0; i < kNumOpcodes; ++i) {
    std::string_view n = kOpcodeNames[i];
    if (n.size() != name.size()) continue;
    bool same = true;
    for (size_t j = 0; j < n.size() && same; ++j)
      same = std::toupper(static_cast<unsigned char>(name[j])) == n[j];
    if (same) return static_cast<Opcode>(kOpcodeValues[i]);
  }
  return std::nullopt;
}

// The generated name arrays hold string literals, so data() is NUL-terminated.
const char* buffer_name(Buffer b) {
  const auto i = static_cast<size_t>(b);
  return i < kBufferNames.size() ? kBufferNames[i].data() : "?";
}

const char* engine_name(Engine e) {
  const auto i = static_cast<size_t>(e);
  return i < kEngineNames.size() ? kEngineNames[i].data() : "?";
}

const char* class_name(CycleClass c) {
  const auto i = static_cast<size_t>(c);
  return i < kClassNames.size() ? kClassNames[i].data() : "?";
}

const std::string& counter_name(int index) {
  static const std::string unknown = "?";
  const auto& names = counter_names();
  if (index < 0 || index >= static_cast<int>(names.size())) return unknown;
  return names[index];
}

std::optional<int> find_counter(std::string_view name) {
  for (size_t i = 0; i < kCounterNames.size(); ++i)
    if (kCounterNames[i] == name) return static_cast<int>(i);
  return std::nullopt;
}

std::array<uint64_t, 4> Command::encode() const {
  std::array<uint64_t, 4> w{};
  // The opcode enum may hold an illegal value (decode keeps it), so encode it verbatim.
  w[0] = field(static_cast<uint8_t>(opcode), 0, 4) | field(pop_prev, 4, 1) | field(pop_next, 5, 1) |
         field(push_prev, 6, 1) | field(push_next, 7, 1) | field(layer, 16, 16) |
         field(cmd_id, 32, 32);
  switch (opcode) {
    case Opcode::Load:
    case Opcode::Store:
      w[1] = field(dram_addr, 0, 32) | field(sram_base, 32, 16) |
             field(static_cast<uint8_t>(buffer), 48, 2);
      w[2] = field(y_size, 0, 16) | field(x_size, 16, 16) | field(x_stride, 32, 32);
      break;
    case Opcode::Gemm:
      w[1] = field(inp_base, 0, 16) | field(wgt_base, 16, 16) | field(acc_base, 32, 16) |
             field(reset, 48, 1) | field(bf16, 49, 1);
      w[2] = field(m, 0, 16) | field(k, 16, 16) | field(n, 32, 16);
      break;
    case Opcode::Post:
      w[1] = field(acc_base, 0, 16) | field(out_base, 16, 16) | field(count, 32, 16) |
             field(src_fp32, 48, 1) | field(dst_bf16, 49, 1) | field(relu, 50, 1) |
             field(per_channel, 51, 1);
      w[2] = field(static_cast<uint16_t>(mult), 0, 16) | field(shift, 16, 5) |
             field(static_cast<uint8_t>(clamp_lo), 32, 8) |
             field(static_cast<uint8_t>(clamp_hi), 40, 8);
      w[3] = field(scale_base, 0, 16) | field(period, 16, 16);
      break;
    case Opcode::End:
      w[1] = field(end_code, 0, 32);
      break;
    default:
      break;
  }
  return w;
}

Command Command::decode(const std::array<uint64_t, 4>& w) {
  Command c;
  c.raw_opcode = static_cast<uint8_t>(bits(w[0], 0, 4));
  c.opcode = static_cast<Opcode>(c.raw_opcode);
  c.pop_prev = bits(w[0], 4, 1);
  c.pop_next = bits(w[0], 5, 1);
  c.push_prev = bits(w[0], 6, 1);
  c.push_next = bits(w[0], 7, 1);
  c.layer = static_cast<uint16_t>(bits(w[0], 16, 16));
  c.cmd_id = static_cast<uint32_t>(bits(w[0], 32, 32));
  switch (c.opcode) {
    case Opcode::Load:
    case Opcode::Store:
      c.dram_addr = static_cast<uint32_t>(bits(w[1], 0, 32));
      c.sram_base = static_cast<uint16_t>(bits(w[1], 32, 16));
      c.buffer = static_cast<Buffer>(bits(w[1], 48, 2));
      c.y_size = static_cast<uint16_t>(bits(w[2], 0, 16));
      c.x_size = static_cast<uint16_t>(bits(w[2], 16, 16));
      c.x_stride = static_cast<uint32_t>(bits(w[2], 32, 32));
      break;
    case Opcode::Gemm:
      c.inp_base = static_cast<uint16_t>(bits(w[1], 0, 16));
      c.wgt_base = static_cast<uint16_t>(bits(w[1], 16, 16));
      c.acc_base = static_cast<uint16_t>(bits(w[1], 32, 16));
      c.reset = bits(w[1], 48, 1);
      c.bf16 = bits(w[1], 49, 1);
      c.m = static_cast<uint16_t>(bits(w[2], 0, 16));
      c.k = static_cast<uint16_t>(bits(w[2], 16, 16));
      c.n = static_cast<uint16_t>(bits(w[2], 32, 16));
      break;
    case Opcode::Post:
      c.acc_base = static_cast<uint16_t>(bits(w[1], 0, 16));
      c.out_base = static_cast<uint16_t>(bits(w[1], 16, 16));
      c.count = static_cast<uint16_t>(bits(w[1], 32, 16));
      c.src_fp32 = bits(w[1], 48, 1);
      c.dst_bf16 = bits(w[1], 49, 1);
      c.relu = bits(w[1], 50, 1);
      c.per_channel = bits(w[1], 51, 1);
      c.scale_base = static_cast<uint16_t>(bits(w[3], 0, 16));
      c.period = static_cast<uint16_t>(bits(w[3], 16, 16));
      c.mult = static_cast<int16_t>(static_cast<uint16_t>(bits(w[2], 0, 16)));
      c.shift = static_cast<uint8_t>(bits(w[2], 16, 5));
      c.clamp_lo = static_cast<int8_t>(static_cast<uint8_t>(bits(w[2], 32, 8)));
      c.clamp_hi = static_cast<int8_t>(static_cast<uint8_t>(bits(w[2], 40, 8)));
      break;
    case Opcode::End:
      c.end_code = static_cast<uint32_t>(bits(w[1], 0, 32));
      break;
    default:
      break;
  }
  return c;
}

std::string Command::to_string() const {
  const uint8_t op = static_cast<uint8_t>(opcode);
  std::string s =
      "#" + std::to_string(cmd_id) + " L" + std::to_string(layer) + " " + opcode_name(op);
  auto num = [](auto v) { return std::to_string(v); };
  switch (opcode) {
    case Opcode::Load:
      s += std::string(" ") + buffer_name(buffer) + "[" + num(sram_base) + "] <- dram " +
           hex(dram_addr) + " y=" + num(y_size) + " x=" + num(x_size) + " stride=" + num(x_stride);
      break;
    case Opcode::Store:
      s += std::string(" ") + buffer_name(buffer) + "[" + num(sram_base) + "] -> dram " +
           hex(dram_addr) + " y=" + num(y_size) + " x=" + num(x_size) + " stride=" + num(x_stride);
      break;
    case Opcode::Gemm:
      s += " inp=" + num(inp_base) + " wgt=" + num(wgt_base) + " acc=" + num(acc_base) +
           " M=" + num(m) + " K=" + num(k) + " N=" + num(n);
      if (reset) s += " reset";
      if (bf16) s += " bf16";
      break;
    case Opcode::Post:
      s += " acc=" + num(acc_base) + " out=" + num(out_base) + " count=" + num(count);
      if (per_channel) {
        s += std::string(src_fp32 ? " fp32" : " int32") + (dst_bf16 ? "->bf16" : "->int8") +
             " per-channel scales=acc[" + num(scale_base) + "] period=" + num(period);
        if (dst_bf16 && relu) s += " relu";
        if (!dst_bf16) s += " clamp=[" + num(clamp_lo) + "," + num(clamp_hi) + "]";
      } else if (float_post()) {
        char scale[32];
        std::snprintf(scale, sizeof scale, "%g",
                      numeric::fp32_as_float(numeric::bf16_to_fp32(scale_bits())));
        s += std::string(src_fp32 ? " fp32" : " int32") + (dst_bf16 ? "->bf16" : "->int8") +
             " scale=" + scale;
        if (dst_bf16) {
          if (relu) s += " relu";
        } else {
          s += " clamp=[" + num(clamp_lo) + "," + num(clamp_hi) + "]";
        }
      } else {
        s += " mult=" + num(mult) + " shift=" + num(shift) + " clamp=[" + num(clamp_lo) + "," +
             num(clamp_hi) + "]";
      }
      break;
    case Opcode::End:
      s += " code=" + num(end_code);
      break;
    default:
      break;
  }
  if (pop_prev) s += " pop_prev";
  if (pop_next) s += " pop_next";
  if (push_prev) s += " push_prev";
  if (push_next) s += " push_next";
  return s;
}

const ArrayConfig* find_array_variant(std::string_view name) {
  for (const ArrayConfig& a : kArrayVariants)
    if (a.name == name) return &a;
  return nullptr;
}

std::string array_variant_names() {
  std::string s;
  for (const ArrayConfig& a : kArrayVariants) s += (s.empty() ? "" : ", ") + std::string(a.name);
  return s;
}

ArrayConfig array_from_csrs(uint32_t config, uint32_t spad_cfg) {
  ArrayConfig a;
  a.name = "custom";
  a.rows = config & 0xFF;
  a.cols = (config >> 8) & 0xFF;
  for (int b = 0; b < kNumBuffers; ++b)
    a.entries[static_cast<size_t>(b)] = 1u << ((spad_cfg >> (4 * b)) & 0xF);
  for (const ArrayConfig& v : kArrayVariants)
    if (v == a) a.name = v.name;
  return a;
}

}  // namespace bud::isa
