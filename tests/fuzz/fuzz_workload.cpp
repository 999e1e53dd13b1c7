// libFuzzer target: the workload parser (emu/workload, docs/workloads.md). Each input is the text
// of a .textpb workload. parse_workload() must never crash and must fail with a message, and a
// workload it accepts must plan its DRAM image and, when the image is small (at most 1 MiB, to
// keep each input cheap), lower (the documented promise: parse_workload reports everything that
// would not fit the DRAM or the command ring).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "emu/workload/Lowering.h"
#include "emu/workload/Workload.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace bud;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto w = workload::parse_workload(text, "fuzz.textpb");
  if (!w) {
    if (w.error().empty()) __builtin_trap();
    return 0;
  }
  auto plan = workload::plan_dram(*w);
  if (!plan) __builtin_trap();
  // Lowering generates every tensor: only for small images, so that each input stays cheap.
  uint64_t bytes = 0;
  for (const auto& t : *plan) bytes += t.bytes;
  if (bytes > (uint64_t{1} << 20)) return 0;
  auto program = workload::lower(*w);
  if (!program) __builtin_trap();
  return 0;
}
