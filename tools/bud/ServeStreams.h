// `bud serve-load --stream ...`: several request streams served by one NPU under a queue policy
// (docs/serving.md, "Several streams"). Each stream's workload has its batch costs measured on
// the RTL as for one stream; each load point serves every stream's seeded arrivals together
// (load/streams) and reports, per stream, p50/p95/p99/p99.9 latency, the rejected fraction, the
// completed count and its SLA verdict, as text, --json and --html.
#pragma once

#include "tools/bud/ServeLoadCommand.h"

namespace bud::cli {

/// Runs `options.streams` (at least one). Exit code: 0 served (and, with any stream SLA, some
/// load point met every stream's), 1 none did or a batch failed its bit-exact check on the RTL,
/// 2 bad input (a bad --stream names its field), 4 the HTML report failed.
int run_serve_streams(const ServeLoadOptions& options);

}  // namespace bud::cli
