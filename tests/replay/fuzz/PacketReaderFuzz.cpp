// libFuzzer target for the replay packet reader: any bytes must give a packet or one error line,
// never a crash, a hang or an unbounded allocation. Built with clang -fsanitize=fuzzer,address
// (tests/replay/CMakeLists.txt) and run for a bounded number of iterations by ctest.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "replay/PacketReader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string error;
  auto p = bud::replay::parse_packet(std::span<const uint8_t>(data, size), "fuzz", error);
  if (!p) {
    if (error.empty()) __builtin_trap();  // a failure must say why
    return 0;
  }
  // Reassemble what is small enough: chunk lookups, zstd frames and hashes are checked too.
  for (size_t i = 0; i < p->checkpoints.size() && i < 4; ++i)
    if (p->checkpoints[i].raw_size() <= (64u << 20)) (void)p->checkpoint_state(i, error);
  if (p->stimulus && p->stimulus->raw_size() <= (64u << 20)) (void)p->stimulus_bytes(error);
  (void)p->last_cycle();
  (void)p->checkpoint_at_or_before(1000);
  return 0;
}
