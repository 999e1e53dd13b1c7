// Comparison of DRAM outputs with the direct reference.
#include "emu/golden/Checker.h"

#include <algorithm>
#include <cstdio>

#include "emu/numeric/Float.h"

namespace bud::golden {
namespace {

std::string index_string(const workload::Shape& s, int64_t y, int64_t x, int64_t c) {
  if (s.rank == 2) return "[" + std::to_string(y) + ", " + std::to_string(c) + "]";
  return "[" + std::to_string(y) + ", " + std::to_string(x) + ", " + std::to_string(c) + "]";
}

std::string bf16_string(uint16_t v) {
  char b[48];
  std::snprintf(b, sizeof b, "0x%04x (%g)", v, numeric::fp32_as_float(numeric::bf16_to_fp32(v)));
  return b;
}

}  // namespace

std::string CheckReport::summary() const {
  if (!error.empty()) return error;
  if (mismatches == 0) return "all " + std::to_string(compared) + " output elements match";
  return first_mismatch + " (" + std::to_string(mismatches) + " of " + std::to_string(compared) +
         " elements differ)";
}

CheckReport check_outputs(const workload::Program& program, const workload::ReferenceResult& ref,
                          const DramReader& read) {
  CheckReport rep;
  for (const workload::TensorInfo& t : program.tensors) {
    if (!t.check) continue;
    if (t.layer < 0 || static_cast<size_t>(t.layer) >= ref.layers.size() ||
        !(ref.layers[static_cast<size_t>(t.layer)].shape == t.shape)) {
      rep.error = "tensor " + t.name + " has no matching reference output";
      return rep;
    }
    const workload::Tensor& want = ref.layers[static_cast<size_t>(t.layer)];
    std::vector<uint8_t> bytes(t.bytes);
    if (!read(t.addr, bytes)) {
      rep.error = "cannot read tensor " + t.name + " from DRAM";
      return rep;
    }
    uint64_t bad = 0;
    const workload::Shape& s = t.shape;
    if (want.is_bf16() != (t.elem_bytes == 2)) {
      rep.error = "tensor " + t.name + " is " + (t.elem_bytes == 2 ? "bf16" : "int8") +
                  " in the program but not in the reference";
      return rep;
    }
    // An element's bits as DRAM holds them (int8, or bf16 little endian) and as text.
    const bool bf16 = want.is_bf16();
    auto text = [bf16](uint16_t v) {
      return bf16 ? "bf16 " + bf16_string(v) : std::to_string(static_cast<int8_t>(v));
    };
    for (int64_t y = 0; y < s.h; ++y)
      for (int64_t x = 0; x < s.w; ++x)
        for (int64_t c = 0; c < s.c; ++c) {
          const size_t at = t.element_addr(y, x, c) - t.addr;
          const uint16_t expected = bf16 ? want.bf16_at(y, x, c)
                                         : static_cast<uint8_t>(want.at(y, x, c));
          const uint16_t actual =
              bf16 ? static_cast<uint16_t>(bytes[at] | (bytes[at + 1] << 8)) : bytes[at];
          ++rep.compared;
          if (expected == actual) continue;
          ++bad;
          if (rep.first_mismatch.empty())
            rep.first_mismatch = "tensor " + t.name + " index " + index_string(s, y, x, c) +
                                 " expected " + text(expected) + " actual " + text(actual);
        }
    rep.mismatches += bad;
    rep.per_tensor.emplace_back(t.name, bad);
  }
  return rep;
}

CheckReport check_outputs(const workload::Program& program, const workload::ReferenceResult& ref,
                          std::span<const uint8_t> dram) {
  return check_outputs(program, ref, [dram](uint32_t addr, std::span<uint8_t> out) {
    if (uint64_t{addr} + out.size() > dram.size()) return false;
    std::copy_n(dram.begin() + addr, out.size(), out.begin());
    return true;
  });
}

RunResult run_program(GoldenNpu& npu, const workload::Program& program) {
  for (const workload::DramRegion& r : program.dram_init)
    if (!npu.write_dram(r.addr, r.bytes)) {
      RunResult res;
      res.error = "DRAM image region at " + std::to_string(r.addr) + " does not fit the model";
      return res;
    }
  const workload::DramRegion ring = workload::ring_image(program);
  // A program longer than the ring streams through it (the host driver refills it); the untimed
  // model sees the same encoded commands in the same order.
  if (program.commands.size() > workload::kRingCommands) return npu.run_encoded(ring.bytes);
  if (!npu.write_dram(ring.addr, ring.bytes)) {
    RunResult res;
    res.error = "command ring does not fit the model's DRAM";
    return res;
  }
  return npu.run_ring(program.ring_base, static_cast<uint32_t>(program.commands.size()));
}

}  // namespace bud::golden
