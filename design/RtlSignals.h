// The signals of a design's RTL as Verilator elaborates it: `verilator --xml-only` with the
// design file's top, parameters, defines and include dirs, read with libxml2. Ports carry their
// direction; internal signals are named hierarchically below the top ("u_core.busy"), the names
// bud's debugger uses for them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "design/DesignFile.h"

namespace bud::design {

struct RtlSignal {
  std::string name;  ///< "s_axis_tdata" (a port) or "u_core.count"
  enum class Dir : uint8_t { Input, Output, Internal };
  Dir dir = Dir::Internal;
  uint32_t width = 0;     ///< bits (0: a type whose width bud does not read, e.g. a struct)
  uint32_t elements = 1;  ///< > 1 for an unpacked array (a memory)
  bool is_port() const { return dir != Dir::Internal; }
};

/// Every signal of the elaborated design, by name (ordered).
struct RtlSignals {
  std::string top;
  std::map<std::string, RtlSignal> signals;
  const RtlSignal* find(const std::string& name) const {
    auto it = signals.find(name);
    return it == signals.end() ? nullptr : &it->second;
  }
};

/// The Verilator command line that elaborates `spec` (the sources and flags, without the
/// output mode): the same flags `bud design build` Verilates with, so the revision hashes it.
std::vector<std::string> verilator_flags(const DesignSpec& spec);

/// Elaborates the design with Verilator and reads its signals. On failure: nullopt and an error
/// (kExitElaboration) carrying Verilator's first error lines.
std::optional<RtlSignals> read_rtl_signals(const DesignSpec& spec, DesignError& error);

/// Parses Verilator's XML (exposed for tests).
std::optional<RtlSignals> parse_verilator_xml(const std::string& xml, const std::string& top,
                                              std::string& error);

}  // namespace bud::design
