// Where the text a Verilated design prints goes (VL_PRINTF, see VlPrintf.h): to the emulator
// whose model is evaluating on this thread, never to a buffer shared by every emulator of the
// thread. NpuEmulator opens a scope at each entry point that may evaluate its model.
#pragma once

#include <string>

namespace bud::emu {

/// While alive, text printed on this thread is appended to `sink` (at most 64 KiB of it is kept;
/// text printed with no scope open is dropped). Scopes nest: the innermost one receives the text;
/// closing it gives the thread back to the enclosing one.
class DesignOutputScope {
 public:
  explicit DesignOutputScope(std::string& sink);
  ~DesignOutputScope();
  DesignOutputScope(const DesignOutputScope&) = delete;
  DesignOutputScope& operator=(const DesignOutputScope&) = delete;

 private:
  std::string* previous_;
};

}  // namespace bud::emu
