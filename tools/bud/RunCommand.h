// `bud run`: run a workload on the NPU and check it bit-exactly against the golden model.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "emu/run/RunJob.h"
#include "power/EnergyTable.h"
#include "replay/Recorder.h"
#include "tools/bud/TriggerCommand.h"

namespace bud::cli {

struct RunCommandOptions {
  run::RunOptions run;
  std::vector<std::string> fault_texts;
  bool json = false;
  std::string record;                    ///< --record FILE: write a replay packet
  replay::RecordConfig record_config;    ///< --checkpoint-interval, --digest-interval
  std::vector<std::string> annotations;  ///< --annotate TEXT (recorded in the packet)
  std::string triggers;                  ///< --triggers FILE (docs/triggers.md)
  std::string capture_dir = "bud-captures";  ///< --capture-dir DIR for trigger captures
  bool inline_triggers = false;  ///< --inline-triggers: evaluate on the simulation thread
  TriggerLimitOptions trigger_limits;  ///< --max-trigger-history, --max-session-trigger-history
  /// --design FILE: run a design file instead (as `bud design run`), with its overrides.
  std::string design;
  std::vector<std::string> defines, params;
  std::string design_cache;
};

/// Adds the memory-model, throttle and watchdog options shared by every command that runs the NPU.
void add_emulation_options(CLI::App& app, run::RunOptions& o);
/// Parses the --fault texts into o.faults. Empty string or "FAULT: error".
std::string parse_fault_options(const std::vector<std::string>& texts, run::RunOptions& o);
/// Validates what CLI11 cannot (e.g. the memory configuration). Empty string when valid.
std::string validate_emulation_options(const run::RunOptions& o);
/// Reads the energy table (--energy-table, or the built-in one) and applies --point (the DRAM
/// timing of the table at that clock; overrides --mem-latency/--mem-jitter/--mem-bw) and
/// --thermal (the harness's thermal model) to `o.emulator`. Returns the table at the run's
/// operating point, or the error (FILE:LINE:COL for a bad table).
power::Result<power::EnergyTable> resolve_power_options(run::RunOptions& o);
/// Turns `--config NAME` (stored in o.emulator.design) into the design that runs that array
/// variant. 0, or the exit status after reporting the error: 2 for an unknown configuration,
/// kExitNotBuilt (5) for a variant this bud was not built with (the message says how to build it).
int resolve_config(const std::string& command, bool json, run::RunOptions& o);

void setup_run(CLI::App& app, RunCommandOptions& options);
/// Exit code: 0 passed, 1 failed check or hang, 2 bad input.
int run_run(const RunCommandOptions& options);

}  // namespace bud::cli
