// `bud bisect`: locate a failure's first persistent failing stage. Walks the ladder ingress ->
// lowering -> fetch -> load -> gemm -> post -> store -> result, comparing each stage's
// transactions with the golden model's. With a replay packet, the recorded per-window stage
// totals are checked against the golden model's prefix digests without simulating; only the
// first divergent window is re-executed (from the last clean checkpoint) to pin the exact
// transaction, cycle, command and element.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "debugger/bisect/TxnChecker.h"
#include "debugger/json/Json.h"
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

/// A divergence reported as transient (overwritten or masked; the results are right).
struct TransientInfo {
  std::string stage;
  uint64_t cycle = 0;
  std::string detail;
};

struct BisectReport {
  /// "fail" (a persistent failure was localized), "pass" (no divergence), "transient"
  /// (divergences that did not reach the results), "error" (the packet or run is unusable).
  std::string verdict = "error";
  std::string message;
  std::string first_failing_stage;             ///< ingress, lowering, fetch..store, result
  std::optional<uint64_t> first_divergence_cycle;
  bool persistent = false;
  std::optional<uint32_t> command_index;
  std::string command;                         ///< the command, decoded
  std::string layer;                           ///< workload layer name
  std::string element;                         ///< what exactly differs (entry, lane, tensor index)
  std::string expected, actual;
  std::string divergence_kind;                 ///< wrong, extra, missing
  std::vector<std::string> downstream_stages;  ///< stages that failed as a consequence
  std::vector<TransientInfo> transients;
  std::string symptom;                         ///< what the run itself reported
  uint64_t run_cycles = 0;
  uint64_t resimulated_cycles = 0;
  uint64_t windows_checked = 0;                ///< recorded windows checked without simulating
  std::string wave_file;
  std::vector<std::string> ladder;             ///< one line per rung, in order

  std::string text() const;
  json::Json to_json() const;
};

/// Fills `r.element`, `r.expected` and `r.actual`: what exactly differs in a divergence (the
/// entry, lane or tensor index, and both values). Shared with the debugger's stage check.
void describe_element(const Divergence& d, const run::PreparedRun& p, BisectReport& r);

/// Bisects a recorded failure.
BisectReport bisect_packet(const replay::Packet& packet, const BisectOptions& options);
/// Bisects a run without a packet (re-simulates it once from reset, checking every transaction).
BisectReport bisect_run(const run::PreparedRun& prepared, const run::RunOptions& options,
                        const BisectOptions& bopts);

}  // namespace bud::debugger
