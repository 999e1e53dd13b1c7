// The one place emulators are made: code above emu/ (the session, replay, the recorder, bisect,
// the CLI) asks for a design by name and gets the Emulator interface, never a concrete class.
// The NPU is built in; other designs (the test mock) register themselves.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "emu/core/Emulator.h"
#include "emu/core/EmulatorConfig.h"
#include "emu/isa/Isa.h"

namespace bud::emu {

/// Builds a fresh, unloaded emulator of one design from a config.
using DesignFactory = std::function<std::unique_ptr<Emulator>(const EmulatorConfig&)>;

/// A new emulator of `config.design`. nullptr and `error` ("unknown design 'x' (known: ...)")
/// when no design of that name is registered.
std::unique_ptr<Emulator> make_emulator(const EmulatorConfig& config, std::string& error);
/// The same, for code whose config names a design it knows exists; aborts (naming the design)
/// otherwise.
std::unique_ptr<Emulator> make_emulator(const EmulatorConfig& config);
/// Adds (or replaces) a design. Call before any emulator of it is made (e.g. at test start).
void register_design(const std::string& name, DesignFactory factory);
/// Registered design names, sorted.
std::vector<std::string> design_names();

/// The MAC array of a design, read from the design itself: its CONFIG and SPAD_CFG CSRs (docs/
/// isa.md, "Array sizes"), once per design name. A design without them (the mock) has the
/// default array. nullopt and `error` for an unknown design.
std::optional<isa::ArrayConfig> design_array(const std::string& design, std::string& error);
/// The model revision a design reports (DesignInfo::revision; this build's default revision for a
/// design without one, the mock), once per design name; "" for an unknown design.
std::string design_revision(const std::string& design);

/// The model revision this bud has for the design a packet names (empty: "npu"); "" and `error`
/// (for an array variant this bud lacks: how to build it) when it has no such design.
std::string packet_design_revision(const std::string& design, std::string& error);

/// Why `--config NAME` names no design.
enum class ConfigError : uint8_t { None, Unknown, NotBuilt };
/// The design that runs array variant `config` ("npu8" and "npu" are the default design "npu";
/// "npu16" is "npu16" when this bud was built with it). nullopt with `error` (one line naming the
/// variant and, when it is a table variant this bud lacks, the CMake option that builds it) and
/// `kind` otherwise.
std::optional<std::string> design_for_config(std::string_view config, std::string& error,
                                             ConfigError& kind);

}  // namespace bud::emu
