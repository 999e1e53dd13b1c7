// libFuzzer target: the trigger language (docs/triggers.md) end to end short of running the
// design. Each input is trigger-file text: parse_triggers() (parse, name resolution, condition
// compilation under the resource limits, with small history limits so an input cannot allocate
// much), then for every compiled condition: its printed form recompiles to the same text (for
// conditions over design names only; trigger variables are not visible outside the file), and a
// few cycles of arm()/eval() with varying samples. Any crash, sanitizer report or broken invariant
// (__builtin_trap) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "debugger/expr/Compiler.h"
#include "debugger/expr/EmulatorResolver.h"
#include "debugger/trigger/TriggerFile.h"
#include "emu/npu/NpuEmulator.h"

namespace {

using namespace bud;

// Varying samples: a mix of the cycle, the quantity's identity and extreme values.
class FuzzSampler final : public debugger::Sampler {
 public:
  uint64_t cycle = 0;
  uint64_t sample(const debugger::Ref& r) override {
    switch ((cycle + r.id) % 4) {
      case 0:
        return cycle;
      case 1:
        return UINT64_MAX - cycle;
      case 2:
        return uint64_t{1} << 63;
      default:
        return r.id * 0x9e3779b97f4a7c15ull;
    }
  }
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static emu::NpuEmulator emu(emu::NpuConfig{});
  static const std::vector<std::string> layers = {"conv1", "conv2", "fc"};
  debugger::TriggerEnv env;
  env.emu = &emu;
  env.layer_names = size % 2 ? &layers : nullptr;
  env.limits.max_file_history_bytes = 1 << 20;
  env.limits.max_session_history_bytes = 1 << 21;
  env.limits.max_expression_nodes = 1 << 14;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parse = debugger::parse_triggers(text, "fuzz.trig", env);
  if (!parse.ok()) {
    if (parse.errors.empty()) __builtin_trap();  // no program must mean at least one error
    for (const auto& e : parse.errors)
      if (e.message.empty() || e.to_string().size() > 4096) __builtin_trap();
    return 0;
  }
  if (parse.program->history_bytes() > env.limits.max_file_history_bytes) __builtin_trap();
  for (auto& t : parse.program->triggers) {
    for (auto& c : t.conds) {
      debugger::EmulatorResolver names(emu);
      auto again = debugger::compile(c.text, names);
      if (again && again.expr->to_string() != c.text) __builtin_trap();
      FuzzSampler s;
      c.expr.arm(s);
      for (; s.cycle < 5; ++s.cycle) (void)c.expr.eval(s);
    }
  }
  return 0;
}
