// Parsing and formatting helpers shared by the command families.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "emu/core/Emulator.h"

namespace bud::debugger {

/// Parses 123, 0x7b, 0b1111011 (with optional '_' separators). nullopt if not a number.
std::optional<uint64_t> parse_number(const std::string& text);
/// Formats a value: fmt "x" hex, "d" decimal, "b" binary, "" both decimal and hex.
std::string format_value(const emu::SignalValue& v, const std::string& fmt);
/// "0x0000_1234"-style hex of a 64-bit value.
std::string hex64(uint64_t v);

/// A name resolved against the emulator for print/deposit/force/watch.
struct Target {
  enum class Kind { Signal, Counter, Csr, Cycle } kind = Kind::Signal;
  emu::SignalId id = 0;
  uint32_t element = 0;
  int counter = -1;
  uint32_t csr = 0;
  std::string name;  ///< canonical name
};
/// Resolves "load.state", "tokens[2]", "gemm.stall_mem" / "pmu.gemm.stall_mem", "STATUS" /
/// "csr.STATUS", "cycle". On failure returns nullopt and an error with "did you mean".
std::optional<Target> resolve_target(emu::Emulator& emu, const std::string& name,
                                     std::string& error);
/// Reads a target's current value.
emu::SignalValue read_target(emu::Emulator& emu, const Target& t);

}  // namespace bud::debugger
