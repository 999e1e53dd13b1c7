#include "emu/npu/VlPrintf.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>

#include "emu/npu/DesignOutput.h"

namespace {
// The sink of the emulator evaluating on this thread (DesignOutputScope), or null. Only the
// pointer is per thread: the text belongs to the emulator that opened the scope.
thread_local std::string* g_sink = nullptr;
constexpr size_t kMaxOutput = 64 * 1024;
}  // namespace

extern "C" int bud_vl_printf(const char* format, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, format);
  const int n = std::vsnprintf(buf, sizeof buf, format, ap);
  va_end(ap);
  if (n > 0 && g_sink && g_sink->size() < kMaxOutput)
    g_sink->append(buf, std::min<size_t>(n, sizeof buf - 1));
  return n;
}

namespace bud::emu {

DesignOutputScope::DesignOutputScope(std::string& sink) : previous_(g_sink) { g_sink = &sink; }

DesignOutputScope::~DesignOutputScope() { g_sink = previous_; }

}  // namespace bud::emu
