// libFuzzer target for the emulator's state restore (NpuEmulator::restore, with the DRAM model's
// and the host driver's): a saved state of a real run, edited by the input and sealed again with
// a valid checksum (NpuEmulator::seal_state), as a hostile packet can. restore() must refuse it
// with a message or accept it, and an accepted state must step without a crash or a sanitizer
// report. Needs the whole emulator instrumented: built only in a clang tree configured with
// -DBUD_FUZZ=ON (docs/packets.md, "Fuzzing").
//
// Input: a list of edits, 5 bytes each: u32 byte offset (modulo the state size; offsets with
// the top bit set land in the head, where every field decides something) and the new byte.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "emu/npu/NpuEmulator.h"
#include "emu/run/RunJob.h"

namespace {

struct Fixture {
  bud::run::RunOptions options;
  bud::run::PreparedRun prepared;
  std::unique_ptr<bud::emu::NpuEmulator> emu;
  std::vector<uint8_t> state;

  Fixture() {
    options.workload = "gemm_small";
    auto p = bud::run::prepare(options);
    if (!p) __builtin_trap();
    prepared = std::move(*p);
    emu = std::make_unique<bud::emu::NpuEmulator>(options.emulator);
    if (!bud::run::start(prepared, options, *emu).empty()) __builtin_trap();
    emu->step(300);
    // A force and a deposit so the force list is not empty.
    for (bud::emu::SignalId i = 0; i < emu->signals().size(); ++i)
      if (emu->signals()[i].elements > 1 && emu->signals()[i].writable) {
        emu->force_signal(i, 1, {});
        break;
      }
    emu->save(state);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture f;
  std::vector<uint8_t> s = f.state;
  const size_t head = std::min<size_t>(s.size(), 8192);
  for (size_t i = 0; i + 5 <= size; i += 5) {
    uint32_t at = 0;
    std::memcpy(&at, data + i, 4);
    const size_t pos = (at & 0x80000000u) ? (at & 0x7FFFFFFFu) % head : at % s.size();
    s[pos] = data[i + 4];
  }
  if (!bud::emu::NpuEmulator::seal_state(s)) return 0;
  std::string error;
  if (f.emu->restore(s, error)) {
    f.emu->step(50);
    (void)f.emu->digest();
  } else if (error.empty()) {
    __builtin_trap();  // a refusal must say why
  }
  // Back to the pristine state for the next input.
  if (!f.emu->restore(f.state, error)) __builtin_trap();
  return 0;
}
