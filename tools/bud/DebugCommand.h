// `bud debug`: an interactive (or scripted) debugging session on a workload.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "debugger/bisect/GoldenCheck.h"
#include "debugger/session/Session.h"
#include "emu/run/RunJob.h"
#include "tools/bud/TriggerCommand.h"

namespace bud::cli {

struct DebugOptions {
  run::RunOptions run;
  std::vector<std::string> fault_texts;
  std::string packet;                ///< --packet P: debug the run a replay packet recorded
  std::string triggers;                       ///< --triggers FILE
  std::string capture_dir = "bud-captures";   ///< --capture-dir DIR
  bool inline_triggers = false;               ///< --inline-triggers
  TriggerLimitOptions trigger_limits;  ///< --max-trigger-history, --max-session-trigger-history
  std::vector<std::string> scripts;  ///< -x FILE, run in order before the prompt
  bool batch = false;                ///< run the scripts and exit
  bool json = false;                 ///< one JSON object per command
  uint64_t checkpoint_interval = 0;  ///< 0: automatic (TimelineConfig::interval)
  uint64_t checkpoint_budget_mb = 512;
  bool no_break_on_mismatch = false;  ///< --no-break-on-mismatch: check, but run through
  bool no_check = false;              ///< --no-check: no golden-model check at all
  /// --design FILE: debug a design file's model instead of a workload (docs/designs.md,
  /// "Debugging a design"), with its --define/--param overrides and model cache.
  std::string design;
  std::vector<std::string> defines, params;
  std::string design_cache;
};

void setup_debug(CLI::App& app, DebugOptions& options);
/// Exit code: 0 when every command succeeded, 1 when one failed (batch), 2 on bad input.
int run_debug(const DebugOptions& options);

/// Builds a debugging session on a prepared workload (shared with replay and remote serving).
std::unique_ptr<debugger::Session> make_session(const run::PreparedRun& prepared,
                                                const run::RunOptions& options,
                                                const debugger::SessionConfig& config,
                                                std::string& error);

/// Installs the golden-model stage check on `session` (`break on mismatch` when `break_on`).
/// Null with `error` set when the golden model rejects the program.
std::unique_ptr<debugger::GoldenCheck> attach_check(debugger::Session& session,
                                                    const run::PreparedRun& prepared,
                                                    bool break_on, std::string& error);

}  // namespace bud::cli
