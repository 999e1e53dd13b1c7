// `bud fit`: the workload fit matrix (docs/serving.md "Platform fit"): models x array variants,
// per cell cycles, % of model FLOPs sustained, memory-stall fraction by layer type, energy per
// inference and requests/J at the p99 SLA under a bursty load; the synthetic GEMM's winner beside
// the production models'. A thin CLI over bud::fit (load/fit/FitMatrix.h).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "tools/bud/ServeLoadCommand.h"

namespace bud::cli {

struct FitOptions {
  std::vector<std::string> models;           ///< positional MODEL...
  std::vector<std::string> configs{"npu8"};  ///< --configs npu8,npu16,npu32
  std::string gemm = "compute_bound";        ///< --gemm: the synthetic reference ("none": off)
  uint32_t refine_steps = 5;                 ///< --refine-steps
  /// The serving options as `bud serve-load` takes them, with production-like defaults:
  /// bursty arrivals, 1000 requests per load point, batch 1.
  ServeLoadOptions serving = defaults();
  std::vector<std::string> given;  ///< options given on the command line
  std::string html;                ///< --html FILE
  bool json = false;

  static ServeLoadOptions defaults();
};

/// The load search's coarse grid (fractions of capacity): below capacity only, since a saturated
/// point never meets an SLA. `bud matrix` searches its perf/W cells on the same grid.
std::vector<double> fit_load_grid();

void setup_fit(CLI::App& app, FitOptions& options);
/// Exit code: 0 the matrix was measured and some array meets the SLA on a production model;
/// 1 a run failed its bit-exact check or no array meets the SLA; 2 bad input; 4 the HTML report
/// could not be written; 5 (kExitNotBuilt) a config this bud was not built with.
int run_fit(const FitOptions& options);

}  // namespace bud::cli
