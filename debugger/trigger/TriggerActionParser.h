// The action list of one trigger clause (`do ACTIONS`, `then ACTIONS`, `else ACTIONS`;
// docs/triggers.md, "Actions"): halt, capture pre/post, checkpoint, snapshot, record, log, rearm,
// and in state machines incr/reset/set/clear/goto. A goto's target is resolved when its trigger
// ends (TriggerParser), since states may be defined after it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "debugger/trigger/TriggerFile.h"
#include "debugger/trigger/TriggerLexer.h"

namespace bud::debugger {

/// A goto whose target state may be defined later in the trigger.
struct PendingGoto {
  size_t state, branch, action;  ///< where the Goto action is
  std::string name;
  SourceLoc loc;
};

class TriggerActionParser {
 public:
  /// Parses actions on line `line_no` of `file` for `trigger` (whose last state receives the
  /// branch); gotos are appended to `gotos`, problems to `errors`.
  TriggerActionParser(const std::string& file, uint32_t line_no, const TriggerDef& trigger,
                      std::vector<PendingGoto>& gotos, std::vector<TriggerDiagnostic>& errors)
      : file_(file), line_(line_no), trigger_(trigger), pending_gotos_(gotos), errors_(errors) {}

  /// Parses the comma-separated actions in line[begin, end) into `br` (`machine`: the state
  /// machine actions are allowed). Stops at the first error.
  void parse(std::string_view line, size_t begin, size_t end, TriggerBranch& br, bool machine);

 private:
  std::optional<uint32_t> local_var(const lex::Token& t, bool counter);
  SourceLoc loc(size_t pos) const {
    return SourceLoc{file_, line_, static_cast<uint32_t>(pos + 1)};
  }
  void error_at(size_t pos, std::string message, std::vector<std::string> suggestions = {}) {
    errors_.push_back({loc(pos), std::move(message), std::move(suggestions)});
  }

  const std::string& file_;
  uint32_t line_;
  const TriggerDef& trigger_;
  std::vector<PendingGoto>& pending_gotos_;
  std::vector<TriggerDiagnostic>& errors_;
};

}  // namespace bud::debugger
