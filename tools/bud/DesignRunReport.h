// The report of one design run (design/DesignRun.h), as `bud design run`, `bud run --design` and
// `bud run --design --triggers` print it: a table of streams, counters, stages, memories and the
// verdict, or the same as one JSON object.
#pragma once

#include <cstdint>
#include <string>

#include "design/DesignRun.h"
#include "tools/bud/Output.h"

namespace bud::cli {

/// The exit status of a run: its error's (10 firmware timeout, 11 AXI error), 3 the cycle limit,
/// 1 a failed check, else 0.
int design_run_exit_code(const design::RunOutcome& r);
/// The run as JSON: design, revision, seed, cycles, state, the check, streams, counters, stages
/// (with their digests), memories and firmware accesses. A run that ended in an error is also
/// `command`'s error object (error, message, exit_code: tools/bud/Output.h).
Json design_run_json(const design::RunOutcome& r, uint64_t seed, const std::string& command);
/// The same as a table, ending with the `result` line.
std::string design_run_text(const design::RunOutcome& r, uint64_t seed);

}  // namespace bud::cli
