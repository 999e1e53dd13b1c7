// `bud run`: run a workload on the NPU and check it bit-exactly against the golden model.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "emu/run/RunJob.h"

namespace bud::cli {

struct RunCommandOptions {
  run::RunOptions run;
  bool json = false;
};

/// Adds the memory-model, throttle and watchdog options shared by every command that runs the NPU.
void add_emulation_options(CLI::App& app, run::RunOptions& o);
/// Validates what CLI11 cannot (e.g. the memory configuration). Empty string when valid.
std::string validate_emulation_options(const run::RunOptions& o);

void setup_run(CLI::App& app, RunCommandOptions& options);
/// Exit code: 0 passed, 1 failed check or hang, 2 bad input.
int run_run(const RunCommandOptions& options);

}  // namespace bud::cli
