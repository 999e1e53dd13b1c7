// `bud minimize P.bpk -o M.bpk` on a design packet (docs/designs.md, "Minimizing a design
// packet"): the smallest reproducer that still fails the same way, found by generic reductions
// of the packet's inputs, none specific to a design:
//
//   streams   each source stream's stimulus cut to its shortest failing prefix, in whole beats
//   firmware  the script's commands delta-debugged (ddmin): only those the failure needs stay
//   memories  each region's initial contents cut to its shortest failing prefix, in whole words
//             of the AXI4 port that reaches it (the region reads zero beyond)
//   quiet     the quiet period that ends a drained run, shortest that still fails the same way
//             (only with a good side: its run must still pass, i.e. still finish its work)
//   cycles    --max-cycles: a run that hangs, the smallest limit that still fails; any other, the
//             longer of the two runs plus one quiet period
//
// "The same way" (FailureSignature): the bad run ends alike (output mismatch, firmware mismatch,
// cycle limit, firmware timeout, AXI error), the good run (design/GoodSide.h) ends as it did on
// the whole packet, and the first stage whose transactions differ between them is the same.
// Each candidate reruns the design's [check].reference command on the reduced inputs in a
// private copy of the packet's files (a candidate whose reference fails is not taken), then the
// good and the bad design; the searches only keep accepted candidates (design/DeltaDebug.h).
// The reference sees its inputs through its argv ({input:NAME}): a candidate that changes none
// of those (a firmware or quiet-period candidate) reuses the output it wrote for them.
// The result is recorded as a new self-contained design packet and replayed before it is
// reported.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "design/DesignPacket.h"
#include "design/DesignRun.h"
#include "design/GoodSide.h"
#include "replay/PacketReader.h"
#include "replay/Replayer.h"

namespace bud::design {

/// How a run of a design ended, as minimize compares failures.
enum class Ending : uint8_t {
  Pass,              ///< the output matched the reference (or the design has no [check])
  OutputMismatch,    ///< the checked sink or memory range differs from the reference
  FirmwareMismatch,  ///< a firmware `read ... expect` failed
  CycleLimit,        ///< --max-cycles ran out before the design drained
  FirmwareTimeout,   ///< a firmware poll or wait_irq timed out (exit 10)
  AxiError,          ///< an AXI run error (exit 11)
  ReferenceFailed,   ///< the reference command failed (exit 9): a candidate not taken
  Error,             ///< the run could not happen (a model that does not load or bind)
};
/// "pass", "output-mismatch", "firmware-mismatch", "cycle-limit", "firmware-timeout",
/// "axi-error", "reference-failed", "error".
const char* ending_name(Ending e);
/// How a run_design() call ended: its outcome, or (nullopt) the error it returned.
Ending ending_of(const std::optional<RunOutcome>& outcome, const DesignError& error);
/// The first stage whose transactions differ between two runs of designs with the same
/// [[stage]] list: the earliest with another count or digest (nullopt: none differs).
std::optional<size_t> first_differing_stage(const RunOutcome& good, const RunOutcome& bad);

/// What a failure looks like; two candidates fail the same way when these are equal.
struct FailureSignature {
  Ending bad = Ending::Pass;
  std::optional<Ending> good;         ///< nullopt: there is no good side
  std::optional<size_t> first_stage;  ///< index of the first differing stage
  bool operator==(const FailureSignature&) const = default;
};

/// A firmware script's command lines (not blank, not only a comment), by 0-based line index.
std::vector<size_t> firmware_command_lines(const std::string& text);
/// `text` without the command lines `drop` names (indices as firmware_command_lines gives;
/// every other line, comments included, stays as it is).
std::string drop_lines(const std::string& text, const std::vector<size_t>& drop);

/// One reduction: what, in what unit, before and after.
struct Reduction {
  std::string what;  ///< "stream samples", "firmware firmware.fw", "memory ddr", "quiet cycles",
                     ///< "max cycles", "run cycles"
  std::string unit;  ///< "beats", "commands", "words", "cycles"
  uint64_t before = 0, after = 0;
};

struct MinimizeOptions {
  std::string cache_dir;  ///< models, materialised files and the search's private copy
  bool allow_revision_mismatch = false;
  GoodSideRequest good;
  uint32_t max_candidates = 300;  ///< candidate evaluations at most (each: reference + 2 runs)
  /// Called after every candidate evaluation: (candidates tried, candidates kept).
  std::function<void(uint32_t, uint32_t)> progress;
};

struct MinimizeResult {
  int exit_code = 125;  ///< 0 minimized and reproduced, 1 nothing to minimize or not
                        ///< reproduced, 2 bad usage, 125 unusable packet, 9 the reference fails
  std::string message;  ///< one line: the outcome, or what is wrong
  std::string packet, output, design;
  std::string overrides;  ///< the packet's recorded --define/--param
  std::optional<GoodSide> good;  ///< none: the failure kept is the bad run's ending alone
  FailureSignature signature;
  std::string first_stage;  ///< the name of signature.first_stage ("" without)
  std::string symptom;      ///< the minimized run's verdict line
  std::vector<Reduction> reductions;
  uint32_t candidates = 0, kept = 0;
  bool budget_exhausted = false;  ///< the search stopped at max_candidates
  /// Every cycle simulated: the reproduction check, the candidates (good and bad), the
  /// recording of the result and its replay.
  uint64_t simulated_cycles = 0;
  std::optional<WrittenPacket> written;
  replay::Verdict replay = replay::Verdict::Incompatible;  ///< of the written packet
  std::string replay_message;
};

/// Minimizes `packet` (a design packet) and writes the result to `output`.
MinimizeResult minimize_design_packet(const replay::Packet& packet, const std::string& output,
                                      const MinimizeOptions& options);

}  // namespace bud::design
