// Checks a parsed design file against its RTL (docs/designs.md, "Checks"): the clock and reset
// are 1-bit inputs; every AXI4, AXI4-Lite and AXI-Stream prefix names the whole port set with the
// declared widths and directions; counter signals and `when` expressions, stage handshakes and
// payloads name signals the design has. The first problem is the error: FILE:LINE:COL of the key,
// the signal, what was expected and what the RTL has.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "design/DesignFile.h"
#include "design/RtlSignals.h"

namespace bud::design {

/// One signal a port of the design file needs.
struct RequiredSignal {
  std::string name;  ///< full name, prefix included
  RtlSignal::Dir dir = RtlSignal::Dir::Input;  ///< as seen from the design
  uint32_t width = 1;
  bool optional = false;
};

/// The signals an AXI4 master, the AXI4-Lite slave or an AXI-Stream port needs (ARM IHI 0022,
/// IHI 0051), in a fixed order.
std::vector<RequiredSignal> axi4_master_signals(const Axi4Port& p);
std::vector<RequiredSignal> axi_lite_slave_signals(const ControlPort& c);
std::vector<RequiredSignal> stream_signals(const StreamPort& s);

/// What check_design found: the error, or the signals each port binds (for `bud design check`).
struct CheckResult {
  std::optional<DesignError> error;
  bool ok() const { return !error; }
};
CheckResult check_design(const DesignSpec& spec, const RtlSignals& rtl);

}  // namespace bud::design
