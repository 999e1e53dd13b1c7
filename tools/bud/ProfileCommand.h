// `bud profile`: run a workload exactly as `bud run` does (checked bit-exactly) with the profiler
// observing, and report per layer and type, top-down, the bottleneck ranking and the roofline;
// or profile the run a replay packet recorded; or compare two profiles (docs/profiling.md).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "emu/run/RunJob.h"
#include "tools/bud/ServeLoadCommand.h"

namespace bud::cli {

struct ProfileCommandOptions {
  run::RunOptions run;
  std::vector<std::string> fault_texts;
  bool json = false;
  std::string trace;                 ///< --trace FILE: Chrome trace-event JSON of the run
  uint64_t trace_window = 1024;      ///< --trace-window N: cycles per counter sample
  std::vector<std::string> compare;  ///< --compare BASE.json NEW.json
  double tolerance_pct = 5;          ///< --tolerance PCT: with --compare
  std::string html;                  ///< --html FILE: self-contained HTML report (tools/plots)
  bool calibrate = false;    ///< --calibrate: microbenchmarks, counter fidelity, empirical roofline
  bool no_energy = false;    ///< --no-energy: leave the energy account out
  bool dvfs = false;         ///< --dvfs: the run at every operating point of the table
  /// --sweep: the intervention plan at the SLA (load/Plan.h), from `serving`'s options.
  bool sweep = false;
  ServeLoadOptions serving;          ///< --sla-p99-us, --max-batch, ... (its `run` is ours)
  /// --design FILE: profile a design file's handshakes instead of a workload (docs/designs.md,
  /// "Profiling a design"; DesignProfileCommand.h), with its --define/--param overrides, model
  /// cache and counter sampling --interval (cycles).
  std::string design;
  std::vector<std::string> defines, params;
  std::string design_cache;
  uint64_t interval = 1024;
  std::vector<std::string> given;    ///< the options given on the command line (their names)
};

void setup_profile(CLI::App& app, ProfileCommandOptions& options);
/// Exit code: 0 passed, 1 the run failed a check or hung, 2 bad input, 3 cycle limit,
/// 4 the design cannot be profiled or the trace cannot be written. With --compare: 0 no
/// persistent divergence beyond the tolerance, 1 one, 2 bad input. --calibrate alone: 0 every
/// counter within its tolerance, 1 not (or a microbenchmark failed), 2 bad input. With --design:
/// run_profile_design() (DesignProfileCommand.h).
int run_profile(const ProfileCommandOptions& options);

}  // namespace bud::cli
