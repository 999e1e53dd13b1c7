// `bud bisect`: locate a failure's first persistent failing stage. Walks the ladder ingress ->
// lowering -> fetch -> load -> gemm -> post -> store -> result, comparing each stage's
// transactions with the golden model's. With a replay packet, the recorded per-window stage
// totals are checked against the golden model's prefix digests without simulating; only the
// first divergent window is re-executed (from the last clean checkpoint) to pin the exact
// transaction, cycle, command and element.
#pragma once

#include <string>

#include "debugger/bisect/BisectReport.h"
#include "emu/run/RunJob.h"

namespace bud::replay {
struct Packet;
}

namespace bud::debugger {

struct BisectOptions {
  std::string wave_file;     ///< write an FST around the first divergence (empty: none)
  uint64_t wave_radius = 32; ///< cycles before and after the divergence in the waveform
  bool allow_revision_mismatch = false;
};

/// Bisects a recorded failure.
BisectReport bisect_packet(const replay::Packet& packet, const BisectOptions& options);
/// Bisects a run without a packet (re-simulates it once from reset, checking every transaction).
BisectReport bisect_run(const run::PreparedRun& prepared, const run::RunOptions& options,
                        const BisectOptions& bopts);

}  // namespace bud::debugger
