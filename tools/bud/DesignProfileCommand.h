// `bud profile --design FILE`: run a design file's model as `bud design run` does (checked
// against its reference) with the handshake profile observing every cycle, and report per
// handshake the busy / starved / back-pressured / idle share of cycles, the bottleneck verdict,
// the counters over time, and on request a Chrome trace and an HTML page (docs/designs.md,
// "Profiling a design").
#pragma once

#include "tools/bud/ProfileCommand.h"

namespace bud::cli {

/// Spans of equal state the trace keeps in all, shared equally among the handshakes
/// (docs/designs.md, "Profiling a design").
inline constexpr uint64_t kDesignTraceSpans = 1u << 18;

/// True for the options `bud profile --design` takes (the others do not apply to a design).
bool is_design_profile_option(const std::string& name);
/// Exit status: 0 the run passed (or had nothing to check), 1 it failed its check, 3 cycle
/// limit, 4 the trace or page cannot be written, and `bud design`'s statuses for the design
/// file (2 bad file or option, 6, 7, 8, 9, 10 firmware timeout, 11 AXI error). A run that ends
/// in an error after it started is still profiled: the profile comes with the error.
int run_profile_design(const ProfileCommandOptions& options);

}  // namespace bud::cli
