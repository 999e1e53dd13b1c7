// `bud trigger check FILE`: validate a trigger file without running it; and the trigger wiring
// of `bud run --triggers` and `bud debug --triggers` (docs/triggers.md).
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

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
  /// optional: check signal and counter names against a design file's model (docs/designs.md)
  std::string design;
  std::vector<std::string> defines, params;
  std::string design_cache;
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

/// The file a `record` action without a file name writes in a batch run: trigger-NAME.bpk.
std::string batch_record_path(const std::string& trigger, const std::string& file);

/// `record` in a batch run: each hit's request is kept by the file it names; at the end of the
/// run a file is kept, annotated with the hits that asked for it, or discarded when no hit did.
class BatchRecordHook final : public debugger::TriggerRecordHook {
 public:
  std::string record(const debugger::TriggerHit& hit, const std::string& file,
                     std::string& written) override;
  /// The annotation a packet carries for a hit that asked for it.
  static std::string describe(const debugger::TriggerHit& h);
  std::map<std::string, std::vector<debugger::TriggerHit>> requests;  ///< path -> its hits
};

/// Every file a batch run may record into: `record` (--record) first, then each `record`
/// action's, once each.
std::vector<std::string> record_targets(const std::string& record,
                                        const debugger::TriggerProgram& program);

/// `bud debug --triggers FILE`: an engine attached to `session` (always created, so `trigger add`
/// works), loaded with the files' triggers. `config` gives the capture directory (or
/// open_output), the evaluation mode and the limits; the replica factory is filled in here. Null
/// with `error` (FILE:LINE:COL lines) on failure.
std::unique_ptr<debugger::TriggerEngine> attach_triggers(
    debugger::Session& session, const run::PreparedRun& prepared, const run::RunOptions& ro,
    const std::string& file, debugger::TriggerEngineConfig config, std::string& error);

}  // namespace bud::cli
