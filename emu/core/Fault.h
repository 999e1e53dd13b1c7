// Fault injection: deliberate, deterministic corruptions of a run, to make failures on purpose
// and to prove that bud localizes them (docs/faults.md). Faults are part of a run's definition:
// they are recorded in replay packets and re-applied exactly on replay.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bud::emu {

enum class FaultKind : uint8_t {
  Flip,      ///< flip:SIGNAL[BIT]@CYCLE            invert one bit of a signal once
  Stuck,     ///< stuck:SIGNAL[BIT]=V@CYCLE[+N]     hold a bit at V from CYCLE for N cycles (or for ever)
  MemFlip,   ///< memflip:MEMORY:ADDR[BIT]@CYCLE    invert bit BIT (0..7) of the byte at ADDR
  DramDrop,  ///< dram-drop@CYCLE                   the first DRAM response presented at or after CYCLE is lost
  DramDup,   ///< dram-dup@CYCLE                    ... is delivered twice
  DramDelay, ///< dram-delay:N@CYCLE                ... is held back N more cycles
};
const char* fault_kind_name(FaultKind k);

/// One fault, as parsed from its text form. `to_string()` gives the canonical text back.
struct FaultSpec {
  FaultKind kind = FaultKind::Flip;
  std::string target;       ///< signal name (Flip, Stuck) or memory name (MemFlip)
  uint32_t element = 0;     ///< array element of the signal ("tokens[2][0]" = element 2, bit 0)
  bool has_element = false;
  uint32_t bit = 0;
  uint64_t addr = 0;        ///< MemFlip byte address
  bool value = false;       ///< Stuck value
  uint64_t cycle = 0;       ///< first cycle the fault acts (before that cycle's rising edge)
  uint64_t duration = 0;    ///< Stuck: cycles held; 0 = for ever. DramDelay: extra cycles.
  std::string to_string() const;
  bool operator==(const FaultSpec&) const = default;
};

/// Parses a fault's text form. On error returns nullopt and sets `error` to one line naming the
/// column (1-based) and what was expected.
std::optional<FaultSpec> parse_fault(std::string_view text, std::string& error);

}  // namespace bud::emu
