// The replay corpus in the matrix (docs/matrix.md, "Corpus cells"): every packet's recorded run
// (its embedded workload, seeds, memory configuration and faults) re-run under BASE's and NEW's
// options on the RTL and checked against the golden model, so that an escaped failure a change
// fixes, masks or alters shows beside the regressions it causes.
#pragma once

#include <functional>
#include <string>

#include "load/matrix/Decision.h"
#include "load/matrix/MatrixRun.h"

namespace bud::matrix {

/// Called before each run, and with each run's cycles after it.
struct CorpusProgress {
  std::function<void(const std::string& label)> before;
  std::function<void(uint64_t cycles)> after;
};

/// The cell of the packet at `path`. A packet that cannot be read or re-run comes back with
/// `unusable` set (never an error: the decision escalates it).
CorpusCell corpus_cell(const std::string& path, const Configuration& base,
                       const Configuration& next, const CorpusProgress& progress = {});

}  // namespace bud::matrix
