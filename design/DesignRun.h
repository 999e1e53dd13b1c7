// One checked run of a design (docs/designs.md, "Running"): build (or find) the model, load it,
// run the harness until every source is drained and the design is quiet, write the sinks' files,
// and check the output against the design file's reference command.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "design/DesignFile.h"
#include "design/DesignHarness.h"
#include "design/HandshakeProfile.h"
#include "design/ModelBuild.h"

namespace bud::design {

/// Exit status when the design file's reference command fails or writes nothing usable.
inline constexpr int kExitReference = 9;
/// Exit status when a firmware poll or wait_irq times out (or the control port never answers).
inline constexpr int kExitFirmwareTimeout = 10;
/// Exit status of an AXI run error: an AXI4 access outside its region or a protocol violation,
/// or an error response on the control port.
inline constexpr int kExitAxiError = 11;

struct RunOptions {
  uint64_t seed = 1;                   ///< seed of the streams' back-pressure
  uint64_t max_cycles = 10'000'000;    ///< give up (cycle limit) after this many cycles
  uint64_t quiet_cycles = 1000;        ///< done once drained and idle for this long
  std::string cache_dir;               ///< model cache (ModelBuild.h)
  std::string out_dir;                 ///< where sink files go (default: the design's dir)
  bool write_sinks = true;             ///< false (a replay, a profile): checked, not written
  /// false: the run was stopped before its end (a trigger's halt): the outcome is neither
  /// checked nor are sink files written; `stopped_because` is its message.
  bool check = true;
  std::string stopped_because;
  emu::DramConfig dram;                ///< AXI4 memory timing before each port's overrides
  /// The reference's output when it is already known (a replay packet holds it): the
  /// [check].reference command is then not run.
  std::optional<std::string> expected;
  /// When set, every cycle after reset is profiled (HandshakeProfile.h) with `profile_options`
  /// into it; it holds the profile however the run ends, an error included, once the model ran.
  std::optional<HandshakeProfile>* profile = nullptr;
  ProfileOptions profile_options;
  /// The model, already built for `spec` (design/DesignTarget.h): the run then neither
  /// elaborates the RTL nor looks the model up (`bud minimize` runs many candidates of one model).
  std::optional<BuiltModel> model;
};

/// What one AXI4 port's memory did.
struct MemoryOutcome {
  std::string port, region;
  Axi4Stats stats;
};

struct RunOutcome {
  std::string design, revision;
  uint64_t cycles = 0;
  bool cycle_limit = false;
  std::vector<DesignHarness::Stream> streams;  ///< sources: bytes sent; sinks: bytes received
  std::vector<std::pair<std::string, uint64_t>> counters;
  std::vector<DesignHarness::StageState> stages;
  std::vector<MemoryOutcome> memories;
  bool has_firmware = false;
  uint64_t firmware_accesses = 0;  ///< control-port reads and writes made
  bool checked = false, passed = false;
  uint64_t expected_bytes = 0, got_bytes = 0;
  std::optional<uint64_t> first_mismatch;  ///< byte offset of the first difference
  std::string message;                     ///< one line: the verdict
  /// What the reference wrote (or RunOptions::expected); nullopt when it did not run (no
  /// [check], a cycle limit, a firmware mismatch).
  std::optional<std::string> expected;
  uint64_t checked_hash = 0;    ///< XXH3-64 of the checked bytes (sink or memory range)
  uint64_t state_digest = 0;    ///< DesignHarness::digest() at the end of the run
  /// The run ended in an error of the design's own making: an AXI run error (kExitAxiError,
  /// named at the port's [[axi4]] table) or a firmware timeout or failed step
  /// (kExitFirmwareTimeout / kExitAxiError). The outcome still holds where the run got to
  /// (cycles, streams, counters, stages, digest), so it can be recorded and replayed; no output
  /// was checked and no sink file written.
  std::optional<DesignError> error;
};

/// nullopt and `error` for a run that could not happen (build, load, bind, reference failure);
/// a run that happened and ended in an error is an outcome with RunOutcome::error set.
std::optional<RunOutcome> run_design(const DesignSpec& spec, const RunOptions& options,
                                     DesignError& error);

/// The outcome of a run of `harness` (of model revision `revision`) once it stopped stepping:
/// drained, stopped by an error, or out of cycles. What run_design() does after its loop, for a
/// run another loop stepped (the design's emulator under the run driver, with triggers armed):
/// writes the sinks' files (options.write_sinks) and checks the output (running the reference
/// unless options.expected). nullopt and `error` only when the reference fails.
std::optional<RunOutcome> finish_run(const DesignSpec& spec, const DesignHarness& harness,
                                     const RunOptions& options, const std::string& revision,
                                     DesignError& error);

}  // namespace bud::design
