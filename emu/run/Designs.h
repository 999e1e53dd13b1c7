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

}  // namespace bud::emu
