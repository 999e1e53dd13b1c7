// Name resolution for one trigger's conditions (docs/triggers.md, "Names"): its own counters,
// flags and `state_cycles` first, then the file's events, the built-in variables, then the design
// (EmulatorResolver: signals and counters).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "debugger/expr/EmulatorResolver.h"
#include "debugger/expr/NameResolver.h"
#include "emu/core/Emulator.h"

namespace bud::debugger {

class TriggerResolver final : public NameResolver {
 public:
  /// Variables are (name, slot) pairs; the tables are read at each lookup (not copied).
  TriggerResolver(const emu::Emulator& emu,
                  const std::vector<std::pair<std::string, uint32_t>>& file_vars,
                  const std::vector<std::pair<std::string, uint32_t>>& local_vars)
      : base_(emu), file_vars_(file_vars), local_vars_(local_vars) {}

  std::optional<Ref> resolve(std::string_view name, std::optional<uint32_t> index) override;
  std::vector<std::string> names() const override;

 private:
  EmulatorResolver base_;
  const std::vector<std::pair<std::string, uint32_t>>& file_vars_;
  const std::vector<std::pair<std::string, uint32_t>>& local_vars_;
};

}  // namespace bud::debugger
