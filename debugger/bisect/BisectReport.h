// What `bud bisect` concludes about a run: the verdict, the first failing rung of the ladder, the
// command, layer and element that first went wrong, and what the search cost. Rendered as text
// and as the JSON of `bud bisect --json` (docs/cli.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "debugger/bisect/TxnChecker.h"
#include "debugger/json/Json.h"

namespace bud::debugger {

/// What bisect concluded about a run.
enum class BisectVerdict : uint8_t {
  Fail,       ///< a persistent failure was localized
  Pass,       ///< no divergence
  Transient,  ///< divergences that did not reach the results
  Error,      ///< the packet or run is unusable
};
/// "fail", "pass", "transient", "error" (the `verdict` of `bud bisect --json`).
const char* bisect_verdict_name(BisectVerdict v);

/// The rungs of the bisect ladder, in order: what happens before the design (ingress: the packet
/// and workload, lowering: the command stream), the dataflow stages (emu::Stage, same order and
/// names, from rtl/npu_facts.toml `engines`), and the results in DRAM.
enum class Rung : uint8_t { Ingress, Lowering, Fetch, Load, Gemm, Post, Store, Result };
inline constexpr int kNumRungs = 8;
/// "ingress", "lowering", the stage names, "result".
const char* rung_name(Rung r);
/// The rung of a dataflow stage.
Rung rung_of(emu::Stage s);

/// What kind of failure a run showed (the symptom `bud minimize` keeps).
enum class FailureKind : uint8_t {
  None,       ///< the run passed
  Mismatch,   ///< it finished (or hit the cycle limit) with results unlike the golden model's
  Assertion,  ///< a design assertion fired
  Hang,       ///< the watchdog saw no progress
  Error,      ///< the design or the memory model reported an error
};
/// "none", "mismatch", "assertion", "hang", "error".
const char* failure_kind_name(FailureKind k);
/// The failure kind of a run that stopped in `state` (Finished: Mismatch).
FailureKind failure_kind_of(emu::RunState state);

/// A divergence reported as transient (overwritten or masked; the results are right).
struct TransientInfo {
  emu::Stage stage = emu::Stage::Fetch;
  uint64_t cycle = 0;
  std::string detail;
};

struct BisectReport {
  BisectVerdict verdict = BisectVerdict::Error;
  std::string message;
  std::optional<Rung> first_failing_stage;     ///< set for a Fail verdict
  std::optional<uint64_t> first_divergence_cycle;
  bool persistent = false;
  std::optional<uint32_t> command_index;
  std::string command;                         ///< the command, decoded
  std::string layer;                           ///< workload layer name
  std::string element;                         ///< what exactly differs (entry, lane, tensor index)
  std::string expected, actual;
  std::optional<Divergence::Kind> divergence_kind;  ///< wrong, extra, missing
  std::vector<Rung> downstream_stages;         ///< stages that failed as a consequence
  std::vector<TransientInfo> transients;
  std::string symptom;                         ///< what the run itself reported
  FailureKind failure = FailureKind::None;     ///< the kind of that symptom
  uint64_t run_cycles = 0;
  uint64_t resimulated_cycles = 0;
  uint64_t windows_checked = 0;                ///< recorded windows checked without simulating
  std::string wave_file;
  std::vector<std::string> ladder;             ///< one line per rung, in order

  std::string text() const;
  json::Json to_json() const;
};

}  // namespace bud::debugger
