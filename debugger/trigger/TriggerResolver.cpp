#include "debugger/trigger/TriggerResolver.h"

#include "debugger/trigger/TriggerLexer.h"

namespace bud::debugger {

std::optional<Ref> TriggerResolver::resolve(std::string_view name, std::optional<uint32_t> index) {
  for (const auto* table : {&local_vars_, &file_vars_})
    for (const auto& [n, slot] : *table)
      if (n == name) {
        if (index) return std::nullopt;
        return Ref{RefKind::Other, slot, 0, 1, 64};
      }
  for (uint32_t i = 0; i < kNumBuiltinVars; ++i)
    if (name == lex::kBuiltinNames[i]) {
      if (index) return std::nullopt;
      return Ref{RefKind::Other, i, 0, 1, 64};
    }
  return base_.resolve(name, index);
}

std::vector<std::string> TriggerResolver::names() const {
  std::vector<std::string> out = base_.names();
  for (const auto* table : {&local_vars_, &file_vars_})
    for (const auto& [n, slot] : *table) out.push_back(n);
  for (uint32_t i = 0; i < kNumBuiltinVars; ++i) out.emplace_back(lex::kBuiltinNames[i]);
  return out;
}

}  // namespace bud::debugger
