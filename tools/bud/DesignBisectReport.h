// How `bud design bisect` and `bud bisect P.bpk` (a design packet) show a design bisect
// (design/DesignBisect.h): one table and one JSON object, shared so both commands read alike.
#pragma once

#include <string>

#include "debugger/json/Json.h"
#include "design/DesignBisect.h"

namespace bud::cli {

/// design, seed, good and bad (revision, cycles, state), stages (name, good_transactions,
/// bad_transactions, differs, and for a differing stage first_difference, good_cycle, bad_cycle,
/// values: signal, good, bad), first_failing_stage (null: none), persistent, ending_differs,
/// simulated_cycles, message.
json::Json design_bisect_json(const design::BisectOutcome& r, const std::string& design,
                              uint64_t seed);
/// The good and bad runs, a line per stage (and its payload values where it differs), and the
/// result line; `good_name`, `bad_name` name the two designs.
std::string design_bisect_text(const design::BisectOutcome& r, const std::string& good_name,
                               const std::string& bad_name);

}  // namespace bud::cli
