// The layout of a trigger frame: the words the simulation thread copies from the emulator each
// cycle for the triggers to read (CompiledTriggers binds each quantity its conditions read to a
// slot), and the filters of the dispatch events whose bits a frame carries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "debugger/expr/Expr.h"
#include "emu/core/Emulator.h"

namespace bud::debugger {

/// Frames: [0] cycle, [1] progress bit | run state << 8, [2] dispatch event bits, then one slot
/// per distinct quantity read (FrameLayout::slots).
inline constexpr size_t kFrameFixed = 3;
inline constexpr size_t kMaxFrameSlots = 1024;

/// What the simulation thread copies into a frame each cycle. Made by CompiledTriggers::layout()
/// and owned by the simulation side; it does not change while frames are being evaluated.
struct FrameLayout {
  /// One dispatch event's filter (bit i of frame word 2 is dispatch[i]).
  struct Dispatch {
    std::optional<uint8_t> opcode;
    std::optional<uint32_t> cmd_id;
    std::optional<uint32_t> layer;
  };
  std::vector<Ref> slots;  ///< where each slot's quantity lives in the emulator
  std::vector<Dispatch> dispatch;
  size_t stride = kFrameFixed;  ///< words per frame
  /// False when a quantity or a dispatch event has no room in a frame: evaluation stays inline.
  bool fits = true;

  /// Fills `dst` (stride words) from the emulator's current state.
  void gather(const emu::Emulator& emu, uint64_t* dst, uint64_t cycle, bool progress,
              uint64_t dispatch_bits) const;
  /// The dispatch bits a stage transaction sets (0 for anything but a matching fetch dispatch).
  uint64_t dispatch_bits(const emu::StageTxn& txn) const;
};

/// Reads a quantity where the resolver said it lives (Ref::direct), else through the emulator.
inline uint64_t read_ref(const emu::Emulator& emu, const Ref& r) {
  if (r.direct) return read_direct(r);
  switch (r.kind) {
    case RefKind::Counter:
      return emu.counter(static_cast<int>(r.id));
    case RefKind::Signal:
      return emu.read_signal(r.id, r.element).low();
    case RefKind::Cycle:
      return emu.cycle();
    case RefKind::Other:
      return 0;
  }
  return 0;
}

}  // namespace bud::debugger
