// `bud bisect`: localize a recorded failure to its first persistent failing stage.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "emu/run/RunJob.h"

namespace bud::cli {

struct BisectCommandOptions {
  std::string packet;
  std::string good, bad;  ///< --good G --bad B: compare two recordings
  /// --workload W: --good and --bad are precision assignments of W (the precision bisect), with
  /// --seed, --config and the tile caps as `bud run` takes them.
  run::RunOptions run;
  std::optional<double> min_snr_db;  ///< --min-snr DB: the guardrail (default: the workload's)
  std::string repro;                 ///< --repro FILE: write the precision bisect's reproducer
  std::string wave;
  uint64_t wave_radius = 32;
  double tolerance = 0.05;
  bool allow_revision_mismatch = false;
  bool json = false;
};

void setup_bisect(CLI::App& app, BisectCommandOptions& options);
/// Exit: 0 no persistent failure (pass or transient) or no precision regression, 1 a failure
/// was localized (or the runs differ, or a layer breaks the guardrail), 2 bad usage, 125
/// unusable packet or workload.
int run_bisect(const BisectCommandOptions& options);

}  // namespace bud::cli
