// `bud bisect`: localize a recorded failure to its first persistent failing stage.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace bud::cli {

struct BisectCommandOptions {
  std::string packet;
  std::string good, bad;  ///< --good G --bad B: compare two recordings
  std::string wave;
  uint64_t wave_radius = 32;
  double tolerance = 0.05;
  bool allow_revision_mismatch = false;
  bool json = false;
};

void setup_bisect(CLI::App& app, BisectCommandOptions& options);
/// Exit: 0 no persistent failure (pass or transient), 1 a failure was localized, 2 bad usage,
/// 125 unusable packet.
int run_bisect(const BisectCommandOptions& options);

}  // namespace bud::cli
