#include "emu/npu/VlPrintf.h"

#include <cstdarg>
#include <cstdio>

namespace {
thread_local std::string g_output;
constexpr size_t kMaxOutput = 64 * 1024;
}  // namespace

extern "C" int bud_vl_printf(const char* format, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, format);
  const int n = std::vsnprintf(buf, sizeof buf, format, ap);
  va_end(ap);
  if (n > 0 && g_output.size() < kMaxOutput) g_output.append(buf, std::min<size_t>(n, sizeof buf - 1));
  return n;
}

namespace bud::emu {
std::string take_design_output() {
  std::string out;
  out.swap(g_output);
  return out;
}
}  // namespace bud::emu
