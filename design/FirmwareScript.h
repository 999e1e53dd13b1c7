// A firmware script (docs/designs.md, "Firmware scripts"): the register accesses bud makes on a
// design's AXI4-Lite control port, one command a line:
//
//   write ADDR VALUE                        # one register write
//   read ADDR [expect VALUE [mask MASK]]    # a read; a mismatch under MASK fails the run
//   poll ADDR MASK VALUE timeout CYCLES     # read until (data & MASK) == VALUE
//   wait_irq timeout CYCLES                 # until the [control].interrupt output is high
//   wait CYCLES                             # idle cycles
//
// Numbers are decimal or 0x hex ('_' separators allowed); `@NAME` and `@NAME+OFFSET` stand for
// the base address of [[memory]] NAME (plus OFFSET). `#` starts a comment. Parse errors are one
// line, "FILE:LINE:COL: message", naming the token.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "design/DesignFile.h"

namespace bud::design {

/// What one line of a script does.
enum class FirmwareOp : uint8_t { Write, Read, Poll, WaitIrq, Wait };
/// "write", "read", "poll", "wait_irq", "wait".
const char* firmware_op_name(FirmwareOp op);

/// One command. `addr` is the register's byte address on the control port.
struct FirmwareStep {
  FirmwareOp op = FirmwareOp::Wait;
  uint64_t addr = 0;
  uint64_t value = 0;        ///< write: the data; read (with expect) and poll: the wanted value
  uint64_t mask = ~0ull;     ///< read and poll: bits compared
  bool expect = false;       ///< read: compare with `value`
  uint64_t cycles = 0;       ///< poll and wait_irq: the timeout; wait: the idle cycles
  uint32_t line = 0;         ///< 1-based line in the script
};

/// What a script may refer to, and the port's widths its numbers must fit.
struct FirmwareContext {
  std::map<std::string, uint64_t> regions;  ///< [[memory]] name -> base address
  uint32_t addr_bits = 32, data_bits = 32;
  bool has_interrupt = false;  ///< wait_irq needs [control].interrupt
};

struct FirmwareScript {
  std::string file;  ///< the script as named in messages
  std::vector<FirmwareStep> steps;
};

/// Parses `text` (named `file` in messages). nullopt and `error` (FILE:LINE:COL, exit 2) on the
/// first bad line.
std::optional<FirmwareScript> parse_firmware_script(const std::string& text, const std::string& file,
                                                    const FirmwareContext& context, DesignError& error);
/// Reads and parses a script file.
std::optional<FirmwareScript> read_firmware_script(const std::string& path,
                                                   const FirmwareContext& context, DesignError& error);

/// What `spec`'s [control] port lets its script name: the regions' bases, its widths, whether it
/// has an interrupt. `spec.control` must be set.
FirmwareContext firmware_context(const DesignSpec& spec);
/// Reads and parses `spec`'s [control].firmware script.
std::optional<FirmwareScript> read_control_firmware(const DesignSpec& spec, DesignError& error);

}  // namespace bud::design
