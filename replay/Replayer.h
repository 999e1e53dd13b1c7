// Re-executes a replay packet and checks it bit for bit: the state digest at every recorded
// digest point, the per-stage totals at every window end, and whether the recorded symptom comes
// back. Verdicts and exit codes follow `git bisect run` (docs/packets.md, "Replaying").
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "emu/run/RunJob.h"
#include "replay/PacketEvidence.h"
#include "replay/PacketReader.h"
#include "replay/PacketRun.h"

namespace bud::replay {

/// The golden-model check of a prefix (a recording stopped before its run ended, `record stop`):
/// a participant of the run that watches every stage transaction from the cycle it is made at,
/// as the debugger's stage check watched them while the prefix was recorded.
class PrefixChecker : public drive::Participant {
 public:
  /// The first divergence seen so far, as a STAGE_MISMATCH symptom (nullopt: none).
  virtual std::optional<pb::Symptom> symptom() const = 0;
};
/// Makes the checker of `spec`'s run for `emu` at its current cycle; nullptr and `error` when
/// the golden model cannot check it. Replay sits below the golden stage checker
/// (debugger/bisect), so the command line installs it (debugger::golden_prefix_check); without
/// one a prefix is checked against its recorded digests only.
using PrefixCheck = std::function<std::unique_ptr<PrefixChecker>(
    const RunSpec& spec, const emu::Emulator& emu, std::string& error)>;


enum class Verdict : uint8_t {
  Reproduced,    ///< the recorded symptom came back (exit 1)
  Fixed,         ///< a symptom was recorded; the replay has none and matches the golden model (0)
  Passed,        ///< no symptom recorded and none in the replay (0)
  NewSymptom,    ///< the replay fails in a way the recording did not (exit 1)
  Diverged,      ///< digests differ on the recorded model revision: nondeterminism (exit 125)
  Incompatible,  ///< unreadable, incomplete, other revision or unusable packet (exit 125)
  Crashed,       ///< corpus mode: the isolated replay crashed or hit a resource limit (125)
};
inline constexpr int kNumVerdicts = 7;
/// "reproduced", "fixed", "passed", "new-symptom", "diverged", "incompatible", "crashed".
const char* verdict_name(Verdict v);
/// 0, 1 or 125 as documented on Verdict.
int verdict_exit_code(Verdict v);

/// The first window whose recorded and replayed digests differ.
struct Divergence {
  uint32_t window = 0;
  uint64_t window_start = 0, window_end = 0;  ///< cycles [start, end)
  uint64_t cycle = 0;                         ///< first digest point that differs
  uint64_t expected = 0, actual = 0;          ///< state digests at `cycle`
  std::vector<std::string> stages;  ///< stages whose window totals differ (empty: none/unknown)
  std::string describe() const;
};

struct ReplayOutcome {
  std::string packet;
  Verdict verdict = Verdict::Incompatible;
  std::string message;             ///< one line: what happened
  std::vector<std::string> notes;  ///< warnings (revision mismatch allowed, incomplete packet)
  std::string recorded_revision;
  uint64_t start_cycle = 0;  ///< cycle replay started from (a checkpoint)
  uint64_t end_cycle = 0;    ///< cycle replay reached
  uint64_t digests_checked = 0;
  uint64_t windows_checked = 0;
  std::optional<Divergence> divergence;
  std::optional<pb::Symptom> recorded_symptom;
  std::optional<pb::Symptom> replay_symptom;
  bool full_run = false;  ///< ran to the end of the run (else only a recorded prefix)
  /// A prefix replay whose stages were checked against the golden model (PrefixCheck).
  bool prefix_checked = false;
  run::RunReport report;  ///< valid when full_run
  PacketEvidence evidence;  ///< armed and hit triggers, recorded counters (any readable packet)
  int exit_code() const { return verdict_exit_code(verdict); }
};

struct ReplayOptions {
  /// Start from the latest checkpoint at or before this cycle instead of the packet's start.
  std::optional<uint64_t> at;
  /// Replay a packet recorded with another model revision (digests are then informational).
  bool allow_revision_mismatch = false;
  /// Replay the recorded prefix of a packet without footer (a killed recording).
  bool allow_incomplete = false;
  /// Checkpoint windows verified in parallel, each from its recorded checkpoint on an emulator
  /// of its own (replay/WindowReplay.h). The outcome is the same for every value.
  unsigned window_jobs = 1;
  /// Checks a prefix's stages against the golden model (see PrefixCheck); empty: none.
  PrefixCheck prefix_check;
  /// Replays a design packet (Header.design_run, format 2.4): replay sits below the design
  /// library (design/DesignReplay.h), so the command line installs it; empty: such a packet is
  /// Incompatible.
  std::function<ReplayOutcome(const Packet&, const ReplayOptions&)> design_replay;
};

/// What replay() verifies of a packet before it simulates, beyond completeness and revision:
/// the header's run parses, it holds a checkpoint and a window, its stimulus reassembles, decodes
/// and matches the recorded fingerprint, and (`check_first_checkpoint`) its first checkpoint
/// reassembles to its recorded hash. The host job, or nullopt and `error` (the message of an
/// Incompatible verdict, exit 125). Every command that executes a packet (replay, bisect) refuses
/// what this refuses.
std::optional<emu::HostJob> replayable_job(const Packet& packet, std::string& error,
                                           bool check_first_checkpoint = true);
/// Replays a decoded packet.
ReplayOutcome replay(const Packet& packet, const ReplayOptions& options);
/// Reads and replays the packet at `path` (an unreadable packet is Incompatible).
ReplayOutcome replay_file(const std::string& path, const ReplayOptions& options);

}  // namespace bud::replay
