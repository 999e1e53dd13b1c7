// `bud minimize`: shrink a failing packet to the smallest reproducer with the same symptom and
// the same first failing stage.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace bud::cli {

struct MinimizeCommandOptions {
  std::string packet;
  std::string output;
  uint32_t max_candidates = 300;
  bool allow_revision_mismatch = false;
  bool json = false;
  /// A design packet (docs/designs.md, "Minimizing a design packet"): its good side, as `bud
  /// bisect` takes it, and the design cache.
  std::string good;
  std::vector<std::string> good_defines, good_params;
  std::string design_cache;
};

void setup_minimize(CLI::App& app, MinimizeCommandOptions& options);
/// Exit: 0 minimized (and the result replays), 1 the run does not fail or the result does not
/// reproduce, 2 bad usage, 125 unusable packet; a design packet also 9 (its reference fails).
int run_minimize(const MinimizeCommandOptions& options);

}  // namespace bud::cli
