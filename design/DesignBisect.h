// `bud design bisect GOOD --bad-define NAME` (docs/designs.md, "Bisecting a design"): where a
// changed design (another define, parameter, RTL revision or design file) first parts from the
// good one, on the design's own stage ladder. Both run to the end from the same stimulus and
// seed; every accepted transaction of every [[stage]] is hashed from its payload alone (not its
// cycle), so a change that only moves timing is not a divergence. The first failing stage is the
// earliest stage in pipeline order whose transaction stream differs; it is persistent when a
// later stage differs too. The report names its first differing transaction (index, the cycle
// in each run, the payload signals' values in each) and the output check of both runs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "design/DesignFile.h"
#include "design/DesignTarget.h"

namespace bud::design {

struct StageComparison {
  std::string name;
  uint64_t good_txns = 0, bad_txns = 0;
  /// Index of the first transaction whose payload differs (or the first one only one run has).
  std::optional<uint64_t> first_difference;
  uint64_t good_cycle = 0, bad_cycle = 0;  ///< cycle of that transaction in each run (0: none)
  /// The payload signals at that transaction: name, good value, bad value (hex; "-" if absent).
  struct Value {
    std::string signal, good, bad;
  };
  std::vector<Value> values;
};

struct BisectOutcome {
  std::string good_revision, bad_revision;
  uint64_t good_cycles = 0, bad_cycles = 0;
  std::string good_state, bad_state;  ///< "finished", "hang", "error: ...", "cycle_limit"
  std::vector<StageComparison> stages;
  std::optional<size_t> first_failing;  ///< index into stages
  bool persistent = false;
  /// No stage differs, but the runs end differently (one finished, the other a hang, an AXI
  /// error, a firmware timeout or the cycle limit): a control-path failure, not a data one.
  bool ending_differs = false;
  uint64_t simulated_cycles = 0;  ///< over both passes of both runs
  std::string message;            ///< one line: the verdict
};

struct BisectOptions {
  uint64_t seed = 1;
  uint64_t max_cycles = 10'000'000;
  uint64_t quiet_cycles = 1000;
};

/// Compares `bad` with `good` (both prepared; they must have the same [[stage]] names in the
/// same order). nullopt and `error` when they do not compare or a model does not load.
std::optional<BisectOutcome> bisect_designs(const DesignTarget& good, const DesignTarget& bad,
                                            const BisectOptions& options, DesignError& error);

}  // namespace bud::design
