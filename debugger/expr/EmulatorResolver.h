// NameResolver and Sampler over the abstract emu::Emulator (never a Verilated header).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "debugger/expr/NameResolver.h"
#include "emu/core/Emulator.h"

namespace bud::debugger {

/// Resolves names against an Emulator, in this order:
///  1. `cycle` -> RefKind::Cycle (the emulator's cycle count);
///  2. a PMU counter name with or without the `pmu.` prefix (`gemm.stall_mem` and
///     `pmu.gemm.stall_mem` are the same Ref: RefKind::Counter, id = counter index);
///  3. a signal name known to Emulator::find_signal (RefKind::Signal, id = SignalId).
/// The emulator must outlive the resolver.
class EmulatorResolver : public NameResolver {
 public:
  explicit EmulatorResolver(const emu::Emulator& emu) : emu_(emu) {}
  std::optional<Ref> resolve(std::string_view name, std::optional<uint32_t> index) override;
  /// `cycle`, every counter name (without `pmu.`) and every signal that is not a counter alias.
  std::vector<std::string> names() const override;

 private:
  const emu::Emulator& emu_;
};

/// Samples Refs made by EmulatorResolver: signals through read_signal(id, element).low(),
/// counters through counter(index), `cycle` through cycle(). Refs of kind Other read as 0.
/// No allocation; the emulator must outlive the sampler.
class EmulatorSampler : public Sampler {
 public:
  explicit EmulatorSampler(const emu::Emulator& emu) : emu_(emu) {}
  uint64_t sample(const Ref& ref) override;

 private:
  const emu::Emulator& emu_;
};

}  // namespace bud::debugger
