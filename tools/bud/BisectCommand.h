// `bud bisect`: localize a recorded failure to its first persistent failing stage.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

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
  /// A design packet (docs/designs.md, "Bisecting a design packet"): the good side's overrides
  /// instead of none (--good-define, --good-param), and the design cache.
  std::vector<std::string> good_defines, good_params;
  std::string design_cache;
};

void setup_bisect(CLI::App& app, BisectCommandOptions& options);
/// Exit: 0 no persistent failure (pass or transient) or no precision regression, 1 a failure
/// was localized (or the runs differ, or a layer breaks the guardrail), 2 bad usage, 125
/// unusable packet or workload. A design packet: 0 it passes or no stage differs, 1 a stage
/// differs or the runs end differently, 2 no good side or one of another design, 125 unusable.
int run_bisect(const BisectCommandOptions& options);

}  // namespace bud::cli
