#include "debugger/bisect/DivergenceElement.h"

#include <array>
#include <cstdio>
#include <cstring>

#include "emu/isa/Isa.h"
#include "emu/numeric/Float.h"

namespace bud::debugger {

namespace {

using workload::Precision;
using workload::TensorRole;

/// The tensor holding DRAM byte `addr` (nullptr: none).
const workload::TensorInfo* tensor_at(const workload::Program& p, uint32_t addr) {
  for (const auto& t : p.tensors)
    if (addr >= t.addr && addr < t.addr + t.bytes) return &t;
  return nullptr;
}

bool bf16_layer(const run::PreparedRun& p, int layer) {
  return layer >= 0 && static_cast<size_t>(layer) < p.program.layers.size() &&
         p.program.layers[layer].precision == Precision::Bf16;
}

/// The type of the data a LOAD brings from `t` (a tensor of the program).
ElementType loaded_type(const workload::TensorInfo& t, const run::PreparedRun& p, int cmd_layer) {
  const int layer = t.layer >= 0 ? t.layer : cmd_layer;
  switch (t.role) {
    case TensorRole::Bias: return bf16_layer(p, layer) ? ElementType::Fp32 : ElementType::Int32;
    case TensorRole::Scales: return ElementType::Raw32;
    case TensorRole::Weights: return bf16_layer(p, layer) ? ElementType::Bf16 : ElementType::Int8;
    case TensorRole::Identity:
      return t.name.size() >= 4 && t.name.compare(t.name.size() - 4, 4, "bf16") == 0
                 ? ElementType::Bf16
                 : ElementType::Int8;
    default: return t.elem_bytes == 2 ? ElementType::Bf16 : ElementType::Int8;
  }
}

/// "[1, -3, ...]": a transaction's data as elements of `type` (the first 64 bytes at most).
std::string lanes(const emu::StageTxn& t, ElementType type) {
  std::string s = "[";
  const uint32_t eb = element_bytes(type);
  for (uint32_t i = 0; i + eb <= t.size && i + eb <= t.data.size(); i += eb)
    s += (i ? ", " : "") + format_element(type, t.data.data() + i);
  return s + "]";
}

}  // namespace

uint32_t element_bytes(ElementType t) {
  switch (t) {
    case ElementType::Int8: return 1;
    case ElementType::Bf16: return 2;
    default: return 4;
  }
}

std::string format_element(ElementType t, const uint8_t* b) {
  char buf[64];
  switch (t) {
    case ElementType::Int8: return std::to_string(static_cast<int8_t>(b[0]));
    case ElementType::Int32: {
      int32_t v;
      std::memcpy(&v, b, 4);
      return std::to_string(v);
    }
    case ElementType::Bf16: {
      const uint16_t bits = static_cast<uint16_t>(b[0] | (b[1] << 8));
      const uint32_t f = numeric::bf16_to_fp32(bits);
      float v;
      std::memcpy(&v, &f, 4);
      std::snprintf(buf, sizeof buf, "%.9g (bf16 0x%04x)", static_cast<double>(v), bits);
      return buf;
    }
    case ElementType::Fp32: {
      uint32_t bits;
      std::memcpy(&bits, b, 4);
      float v;
      std::memcpy(&v, &bits, 4);
      std::snprintf(buf, sizeof buf, "%.9g (fp32 0x%08x)", static_cast<double>(v), bits);
      return buf;
    }
    case ElementType::Raw32: {
      uint32_t bits;
      std::memcpy(&bits, b, 4);
      std::snprintf(buf, sizeof buf, "0x%08x", bits);
      return buf;
    }
  }
  return "?";
}

ElementType element_type_of(const emu::StageTxn& t, const run::PreparedRun& p) {
  const isa::Command* cmd =
      t.cmd_id < p.program.commands.size() ? &p.program.commands[t.cmd_id] : nullptr;
  const auto layer = p.program.layer_of_command(t.cmd_id);
  const int li = layer ? *layer : -1;
  switch (t.stage) {
    case emu::Stage::Gemm:
      return cmd && cmd->bf16 ? ElementType::Fp32 : ElementType::Int32;
    case emu::Stage::Post:
      return cmd && cmd->dst_bf16 ? ElementType::Bf16 : ElementType::Int8;
    case emu::Stage::Load:
      if (cmd)
        if (const auto* src = tensor_at(p.program, cmd->dram_addr)) return loaded_type(*src, p, li);
      if (t.buffer == static_cast<uint8_t>(isa::Buffer::Acc))
        return bf16_layer(p, li) ? ElementType::Fp32 : ElementType::Int32;
      return bf16_layer(p, li) ? ElementType::Bf16 : ElementType::Int8;
    case emu::Stage::Store:
      return dram_element(p.program, t.addr).type;
    case emu::Stage::Fetch: break;
  }
  return ElementType::Int8;
}

DramElement dram_element(const workload::Program& p, uint32_t addr) {
  DramElement out;
  out.addr = addr;
  const auto* t = tensor_at(p, addr);
  if (!t) return out;
  const uint32_t eb = t->elem_bytes ? t->elem_bytes : 1;
  out.type = eb == 2 ? ElementType::Bf16 : ElementType::Int8;
  const uint32_t off = addr - t->addr;
  out.addr = addr - off % eb;
  if (t->row_pitch == 0 || t->pixel_pitch == 0) return out;
  const int64_t y = static_cast<int64_t>(off / t->row_pitch) - t->border;
  const int64_t x = static_cast<int64_t>((off % t->row_pitch) / t->pixel_pitch) - t->border;
  const int64_t c = static_cast<int64_t>((off % t->pixel_pitch) / eb);
  out.tensor = "tensor " + t->name + " [" + std::to_string(y) + "," + std::to_string(x) + "," +
               std::to_string(c) + "]";
  return out;
}

void describe_element(const Divergence& d, const run::PreparedRun& p, BisectReport& r) {
  const auto* e = d.expected ? &*d.expected : nullptr;
  const auto* a = d.actual ? &*d.actual : nullptr;
  if (!e && !a) {
    // A hang whose owner produced every transaction it should have but never retired its command
    // (a lost write acknowledgement, a token that never came).
    r.element = "command #" + std::to_string(d.cmd_id) + " never completed";
    r.expected = "command #" + std::to_string(d.cmd_id) + " retires";
    r.actual = "(never retired)";
    return;
  }
  const auto& any = a ? *a : *e;
  char buf[160];
  if (any.stage == emu::Stage::Fetch) {
    auto decode = [](const emu::StageTxn& t) {
      std::array<uint64_t, 4> w{};
      std::memcpy(w.data(), t.data.data(), 32);
      return isa::Command::decode(w).to_string();
    };
    r.element = "command #" + std::to_string(any.cmd_id);
    if (e) r.expected = decode(*e);
    if (a) r.actual = decode(*a);
    return;
  }
  const ElementType type = element_type_of(any, p);
  const uint32_t eb = element_bytes(type);
  const char* where = any.stage == emu::Stage::Post
                          ? "out"
                          : isa::buffer_name(static_cast<isa::Buffer>(any.buffer));
  if (any.stage == emu::Stage::Store) {
    if (a && e && a->addr == e->addr) {
      for (uint32_t i = 0; i < any.size; ++i) {
        if (e->data[i] == a->data[i]) continue;
        const DramElement el = dram_element(p.program, any.addr + i);
        const uint32_t at = el.addr - any.addr;  // the element's first byte in the write
        const uint32_t n = element_bytes(el.type);
        std::snprintf(buf, sizeof buf, "dram 0x%x", el.addr);
        r.element = std::string(buf) + (el.tensor.empty() ? "" : " (" + el.tensor + ")");
        if (el.addr >= any.addr && at + n <= any.size) {
          r.expected = format_element(el.type, e->data.data() + at);
          r.actual = format_element(el.type, a->data.data() + at);
        } else {
          r.expected = format_element(ElementType::Int8, e->data.data() + i);
          r.actual = format_element(ElementType::Int8, a->data.data() + i);
        }
        return;
      }
    }
    r.element = "DRAM write of command #" + std::to_string(any.cmd_id);
    auto span = [](const emu::StageTxn& t) {
      char h[48];
      std::snprintf(h, sizeof h, "0x%x (%u bytes)", t.addr, t.size);
      return std::string(h);
    };
    r.expected = e ? span(*e) : "(nothing)";
    r.actual = a ? span(*a) : "(never written)";
    return;
  }
  // An SRAM entry (LOAD, GEMM's ACC, POST's OUT): the first differing lane, in the entry's type.
  // A segment of a wider entry holds lanes from segment x 64 bytes on.
  const uint32_t lane0 = any.segment * 64u / eb;
  if (a && e) {
    for (uint32_t off = 0; off + eb <= any.size; off += eb) {
      if (std::memcmp(e->data.data() + off, a->data.data() + off, eb) == 0) continue;
      std::snprintf(buf, sizeof buf, "%s[%u] lane %u%s", where, any.addr, lane0 + off / eb,
                    type == ElementType::Raw32 ? " (scale)" : "");
      r.element = buf;
      r.expected = format_element(type, e->data.data() + off);
      r.actual = format_element(type, a->data.data() + off);
      return;
    }
  }
  std::snprintf(buf, sizeof buf, "%s[%u]", where, any.addr);
  r.element = buf;
  r.expected = e ? lanes(*e, type) : "(nothing)";
  r.actual = a ? lanes(*a, type) : "(never written)";
}

std::string render_divergence(const Divergence& d, const run::PreparedRun& prepared) {
  BisectReport r;
  describe_element(d, prepared, r);
  std::string s = std::string("stage ") + emu::stage_name(d.stage) + " diverged at cycle " +
                  std::to_string(d.cycle) + ": command #" + std::to_string(d.cmd_id);
  if (d.kind != Divergence::Kind::Wrong) s += " (" + std::string(d.kind_name()) + ")";
  if (!r.element.empty()) s += ", element " + r.element;
  if (!r.expected.empty() || !r.actual.empty())
    s += ", expected " + r.expected + ", actual " + r.actual;
  return s;
}

void describe_first(const Divergence& first, const run::PreparedRun& p, BisectReport& r) {
  r.command_index = first.cmd_id;
  r.divergence_kind = first.kind;
  if (first.cmd_id < p.program.commands.size()) {
    r.command = p.program.commands[first.cmd_id].to_string();
    if (auto l = p.program.layer_of_command(first.cmd_id);
        l && *l >= 0 && static_cast<size_t>(*l) < p.workload.layers.size())
      r.layer = p.workload.layers[*l].name;
  }
  describe_element(first, p, r);
}

void complete_result_verdict(
    BisectReport& r, const run::PreparedRun& p, const GoldenTrace& trace, uint32_t addr,
    const std::function<bool(uint32_t, uint8_t*, uint32_t)>& read,
    const std::function<std::optional<uint64_t>(uint32_t, uint8_t)>& date) {
  const uint8_t want = trace.dram[addr];
  DramElement el = dram_element(p.program, addr);
  uint32_t n = element_bytes(el.type);
  std::array<uint8_t, 4> actual{};
  if (el.addr + n > trace.dram.size() || !read(el.addr, actual.data(), n)) {
    // Not a whole element here: the byte itself.
    el.addr = addr;
    el.type = ElementType::Int8;
    n = 1;
    read(addr, actual.data(), 1);
  }
  char b[64];
  std::snprintf(b, sizeof b, "dram 0x%x", el.addr);
  r.element = std::string(b) + (el.tensor.empty() ? "" : " (" + el.tensor + ")");
  r.expected = format_element(el.type, trace.dram.data() + el.addr);
  r.actual = format_element(el.type, actual.data());
  r.divergence_kind = Divergence::Kind::Wrong;
  trace.replay([&](const emu::StageTxn& t, uint64_t) {
    if (t.stage == emu::Stage::Store && addr >= t.addr && addr < t.addr + t.size)
      r.command_index = t.cmd_id;  // the last write
  });
  if (r.command_index && *r.command_index < p.program.commands.size()) {
    r.command = p.program.commands[*r.command_index].to_string();
    if (auto l = p.program.layer_of_command(*r.command_index);
        l && *l >= 0 && static_cast<size_t>(*l) < p.workload.layers.size())
      r.layer = p.workload.layers[*l].name;
  }
  r.first_divergence_cycle = date(addr, want);
  r.message += "; first wrong element " + r.element + " expected " + r.expected + " actual " +
               r.actual + (r.first_divergence_cycle
                               ? " since cycle " + std::to_string(*r.first_divergence_cycle)
                               : "");
}

}  // namespace bud::debugger
