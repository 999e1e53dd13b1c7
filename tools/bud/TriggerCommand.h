// `bud trigger check FILE`: validate a trigger file without running it; and the trigger wiring
// of `bud run --triggers` and `bud debug --triggers` (docs/triggers.md).
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "debugger/session/Session.h"
#include "debugger/trigger/TriggerEngine.h"
#include "emu/run/RunJob.h"

namespace bud::cli {

struct RunCommandOptions;

/// The trigger memory bounds every command that loads triggers takes (docs/triggers.md, Limits).
struct TriggerLimitOptions {
  uint64_t history_mib = 256;           ///< --max-trigger-history: per file
  uint64_t session_history_mib = 1024;  ///< --max-session-trigger-history: all loaded together
};
/// Adds --max-trigger-history and --max-session-trigger-history to `sub`.
void add_trigger_limit_options(CLI::App& sub, TriggerLimitOptions& options);
/// The limits with those two bounds applied.
debugger::TriggerLimits trigger_limits(const TriggerLimitOptions& options);

struct TriggerCommandOptions {
  std::string file;
  std::string workload;  ///< optional: check `layer NAME` against this workload's layers
  TriggerLimitOptions limits;
  bool json = false;
};

void setup_trigger(CLI::App& app, TriggerCommandOptions& options);
/// Exit code: 0 valid, 2 invalid or unreadable.
int run_trigger(const TriggerCommandOptions& options);

/// `bud run --triggers FILE`: runs the prepared workload with the file's triggers armed from
/// cycle 0 and prints the run report with a trigger section (or JSON with a "triggers" member).
/// Exit code as `bud run`: 0 passed, 1 failed/hang/halted, 2 bad input (invalid trigger file).
int run_with_triggers(const RunCommandOptions& options, const run::RunOptions& ro,
                      const run::PreparedRun& prepared);

/// `bud debug --triggers FILE`: an engine attached to `session` (always created, so `trigger add`
/// works), loaded with the files' triggers. `config` gives the capture directory (or
/// open_output), the evaluation mode and the limits; the replica factory is filled in here. Null
/// with `error` (FILE:LINE:COL lines) on failure.
std::unique_ptr<debugger::TriggerEngine> attach_triggers(
    debugger::Session& session, const run::PreparedRun& prepared, const run::RunOptions& ro,
    const std::string& file, debugger::TriggerEngineConfig config, std::string& error);

}  // namespace bud::cli
