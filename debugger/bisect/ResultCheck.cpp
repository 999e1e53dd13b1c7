#include "debugger/bisect/ResultCheck.h"

#include <cstdio>
#include <cstring>
#include <vector>

#include "emu/golden/Checker.h"

namespace bud::debugger {

bool final_state_failed(const run::PreparedRun& p, const GoldenTrace& trace, emu::Emulator& emu,
                        std::string& detail) {
  if (emu.state() != emu::RunState::Finished) {
    detail = std::string(emu::run_state_name(emu.state())) + " at cycle " +
             std::to_string(emu.cycle());
    return true;
  }
  const auto out = golden::check_outputs(p.program, p.reference, [&](uint32_t a, std::span<uint8_t> o) {
    return emu.read_memory("dram", a, o);
  });
  if (!out.ok()) {
    detail = out.summary();
    return true;
  }
  // Every layer's output in DRAM (inputs and weights are the run's inputs, not its results:
  // a fault injected there is not a difference in what the NPU computed).
  for (const auto& t : p.program.tensors) {
    if (t.role != workload::TensorRole::Activation || t.layer < 0) continue;
    std::vector<uint8_t> rtl(t.bytes);
    if (rtl.empty() || !emu.read_memory("dram", t.addr, rtl)) continue;
    if (t.addr + rtl.size() > trace.dram.size()) continue;
    if (std::memcmp(rtl.data(), trace.dram.data() + t.addr, rtl.size()) == 0) continue;
    for (size_t i = 0; i < rtl.size(); ++i)
      if (rtl[i] != trace.dram[t.addr + i]) {
        char b[96];
        std::snprintf(b, sizeof b, "DRAM 0x%zx (tensor %s) differs from the golden model",
                      t.addr + i, t.name.c_str());
        detail = b;
        break;
      }
    return true;
  }
  return false;
}

std::optional<uint32_t> first_wrong_output_byte(const run::PreparedRun& p, const GoldenTrace& trace,
                                                emu::Emulator& emu) {
  for (const auto& t : p.program.tensors) {
    if (t.role != workload::TensorRole::Activation || t.layer < 0) continue;
    if (t.bytes == 0 || t.addr + t.bytes > trace.dram.size()) continue;
    std::vector<uint8_t> rtl(t.bytes);
    if (!emu.read_memory("dram", t.addr, rtl)) continue;
    for (size_t i = 0; i < rtl.size(); ++i)
      if (rtl[i] != trace.dram[t.addr + i]) return static_cast<uint32_t>(t.addr + i);
  }
  return std::nullopt;
}

std::optional<uint64_t> date_wrong_byte(emu::Emulator& emu, uint32_t addr, uint8_t want, uint64_t end,
                                        drive::Participant* actor) {
  // A pause every cycle: the byte is read after each edge.
  struct ByteWatch final : drive::Participant {
    emu::Emulator* emu = nullptr;
    uint32_t addr = 0;
    uint8_t want = 0, prev = 0;
    bool seen_right = false;
    std::optional<uint64_t> wrong_from, last_change;
    uint64_t next_pause(uint64_t now) const override { return now + 1; }
    drive::PauseAction on_pause(uint64_t cycle) override {
      uint8_t b = 0;
      emu->read_memory("dram", addr, {&b, 1});
      if (b != prev) last_change = cycle;
      prev = b;
      if (b == want) {
        seen_right = true;
        wrong_from.reset();
      } else if (seen_right && !wrong_from) {
        wrong_from = cycle;
      }
      return drive::PauseAction::Continue;
    }
  } watch;
  uint8_t b = 0;
  if (!emu.read_memory("dram", addr, {&b, 1})) return std::nullopt;
  watch.emu = &emu;
  watch.addr = addr;
  watch.want = want;
  watch.prev = b;
  watch.seen_right = b == want;
  drive::advance(emu, end, {actor, &watch});
  return watch.seen_right ? watch.wrong_from : watch.last_change;
}

}  // namespace bud::debugger
