// libFuzzer target: the workload parser (emu/workload, docs/workloads.md). Each input is the text
// of a .textpb workload. parse_workload() must never crash and must fail with a message, and a
// workload it accepts must lower (its documented promise: parse_workload reports everything that
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
  auto program = workload::lower(*w);
  if (!program) __builtin_trap();
  return 0;
}
