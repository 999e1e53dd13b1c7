#include "debugger/trigger/FrameLayout.h"

#include <array>
#include <cstring>

#include "emu/isa/Isa.h"

namespace bud::debugger {

void FrameLayout::gather(const emu::Emulator& emu, uint64_t* dst, uint64_t cycle, bool progress,
                         uint64_t dispatch_bits) const {
  dst[0] = cycle;
  dst[1] = (progress ? 1u : 0u) | (uint64_t{static_cast<uint8_t>(emu.state())} << 8);
  dst[2] = dispatch_bits;
  uint64_t* out = dst + kFrameFixed;
  for (const Ref& r : slots) *out++ = read_ref(emu, r);
}

uint64_t FrameLayout::dispatch_bits(const emu::StageTxn& txn) const {
  if (txn.stage != emu::Stage::Fetch || dispatch.empty()) return 0;
  std::array<uint64_t, 4> w{};
  std::memcpy(w.data(), txn.data.data(), 32);
  const auto cmd = isa::Command::decode(w);
  uint64_t bits = 0;
  for (size_t b = 0; b < dispatch.size(); ++b) {
    const Dispatch& ev = dispatch[b];
    if (ev.opcode && *ev.opcode != cmd.raw_opcode) continue;
    if (ev.cmd_id && *ev.cmd_id != cmd.cmd_id) continue;
    if (ev.layer && *ev.layer != cmd.layer) continue;
    bits |= uint64_t{1} << b;
  }
  return bits;
}

}  // namespace bud::debugger
