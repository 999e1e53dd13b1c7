// The golden-model check of a debugging session: a hook that compares every stage transaction
// the design produces with the golden model's while the session runs, and the final results at
// the end, so `continue` stops at the first divergence (docs/debugger.md, "Checking").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "debugger/session/Session.h"

namespace bud::debugger {

/// Per-stage state of the check at the current cycle, for `info check`.
struct StageCheckStatus {
  std::optional<emu::Stage> stage;  ///< a dataflow stage; nullopt: the results
  /// "fetch" ... "store", or "result".
  const char* name() const { return stage ? emu::stage_name(*stage) : "result"; }
  uint64_t checked = 0;   ///< transactions checked so far (result: 0)
  bool diverged = false;  ///< a divergence was found before the current cycle
  bool final = false;     ///< result only: the run finished and the results were compared
  std::string first;      ///< the first divergence, rendered like the stop reason
};

/// A SessionHook that checks against a golden model. Stop reasons it adds have kind StopKind::Mismatch.
/// Its state always describes the cycles before the session's current cycle, also after time
/// travel (it re-synchronizes from the emulator's cumulative stage digests).
class StageCheck : public SessionHook {
 public:
  /// Whether a divergence stops the run (`break on|off mismatch`); checking goes on either way.
  virtual void set_break(bool on) = 0;
  virtual bool breaks() const = 0;
  /// One entry per stage in dataflow order, then "result".
  virtual std::vector<StageCheckStatus> status() = 0;
};

}  // namespace bud::debugger
