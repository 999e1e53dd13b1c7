// One packet's replay, decided before anything is simulated: the run the packet describes, where
// the replay starts, how far it goes and what is checked at each pause (docs/packets.md,
// "Replaying"). The serial replay (Replayer.cpp) and the window-parallel one (WindowReplay.h)
// both run segments of it, so both check the same points the same way and reach their verdict
// through the same conclude().
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "emu/core/Emulator.h"
#include "emu/drive/Driver.h"
#include "emu/drive/Intervention.h"
#include "replay/PacketRun.h"
#include "replay/Replayer.h"

namespace bud::replay {

/// What the checks found over the cycles a segment of the replay ran.
struct Checks {
  uint64_t digests = 0;                  ///< recorded digest points reached
  uint64_t windows = 0;                  ///< recorded window ends reached
  std::optional<Divergence> divergence;  ///< the first one in this segment
};

/// A replay of one packet, planned. Immutable once made: segments of it may run on several
/// threads at once, each with its own emulator.
class ReplayPlan {
 public:
  /// Checks what can be checked without simulating (completeness, revision, the header's run,
  /// the stimulus) and plans the replay. nullopt when the packet cannot be replayed: `o` then
  /// holds the Incompatible verdict and its message. Warnings are added to `o.notes`.
  static std::optional<ReplayPlan> make(const Packet& packet, const ReplayOptions& options,
                                        ReplayOutcome& o);

  const Packet& packet() const { return *packet_; }
  /// The packet was recorded by this bud's model revision (its checkpoints restore).
  bool same_revision() const { return same_revision_; }
  /// The replay runs to the end of the run and checks it (else only the recorded prefix).
  bool full() const { return full_; }
  /// Cycle the replay runs to at most: the run's --max-cycles, or the prefix's last cycle.
  uint64_t limit() const { return limit_; }
  /// Cycles between recorded digest points: the replay pauses at each multiple.
  uint64_t digest_interval() const { return k_; }
  /// Cycle of the checkpoint the replay starts from (the first, or the latest before --at).
  uint64_t start() const { return start_; }

  /// A fresh emulator of the recorded design with the job loaded, not yet restored. nullptr and
  /// `error` (naming the packet) if it cannot be made or started.
  std::unique_ptr<emu::Emulator> make_emulator(std::string& error) const;
  /// Restores the checkpoint recorded at exactly `cycle`. Error (naming the packet) or empty.
  std::string restore(emu::Emulator& emu, uint64_t cycle) const;
  /// The recorded interventions at or after `from`, resolved against `emu`: nullopt and `error`
  /// when one cannot apply on this model.
  std::optional<std::vector<drive::Intervention>> interventions(uint64_t from,
                                                                const emu::Emulator& emu,
                                                                std::string& error) const;
  /// Compares the state at cycle `c` with what was recorded there (a digest point, a window
  /// end), counting into `checks`; the first difference becomes checks.divergence.
  void check(emu::Emulator& emu, uint64_t c, Checks& checks) const;
  /// After the drive stopped (`driven`): the run's results (full replays), the replay symptom
  /// and the verdict and message, into `o`. The message ends before the checks' summary:
  /// add_check_counts() adds it once `o` holds the whole replay's counts.
  /// With `checker` (a prefix replay watched by prefix_checker()): its symptom is the replay's.
  void conclude(emu::Emulator& emu, const drive::DriveStop& driven, ReplayOutcome& o,
                const PrefixChecker* checker = nullptr) const;
  /// A prefix replay with a PrefixCheck installed: the golden checker to add to its driver from
  /// `emu`'s current cycle (the replay's start). nullptr without error: nothing to add (a full
  /// replay, or no check installed); nullptr with `error`: the check cannot run.
  std::unique_ptr<PrefixChecker> prefix_checker(const emu::Emulator& emu,
                                                std::string& error) const;
  /// Whether a prefix check watches this replay (it then runs serially).
  bool prefix_checked() const { return !full_ && static_cast<bool>(prefix_check_); }

 private:
  ReplayPlan() = default;

  const Packet* packet_ = nullptr;
  RunSpec spec_;
  run::PreparedRun prepared_;  ///< the packet's host job; the workload is parsed by conclude()
  bool same_revision_ = false;
  bool full_ = false;
  uint64_t limit_ = 0;
  uint64_t k_ = 1;
  uint64_t start_ = 0;
  std::map<uint64_t, std::pair<uint64_t, uint32_t>> recorded_;  ///< cycle -> digest, window
  std::map<uint64_t, const pb::Window*> window_end_;
  PrefixCheck prefix_check_;
};

/// What a replay of `packet` knows before it plans: its name, recorded revision and symptom, and
/// its evidence (PacketEvidence). ReplayPlan::make() and the replay fill in the rest.
ReplayOutcome unreplayed_outcome(const Packet& packet);

/// Ends a concluded outcome's message with what the checks found: "(N digests bit-exact)", or
/// where the replay diverged.
void add_check_counts(ReplayOutcome& o);

/// The serial replay of `plan`: one emulator from the plan's start to its limit (Replayer.cpp).
/// `o` holds what the plan filled in (packet, revision, notes).
ReplayOutcome replay_serial(const ReplayPlan& plan, ReplayOutcome o);

/// The participant that pauses a replay at every digest point and checks it.
class ReplayVerifier final : public drive::Participant {
 public:
  ReplayVerifier(const ReplayPlan& plan, emu::Emulator& emu, Checks& checks)
      : plan_(plan), emu_(emu), checks_(checks) {}
  uint64_t next_pause(uint64_t now) const override {
    const uint64_t k = plan_.digest_interval();
    return (now / k + 1) * k;
  }
  drive::PauseAction on_pause(uint64_t c) override {
    plan_.check(emu_, c, checks_);
    return drive::PauseAction::Continue;
  }

 private:
  const ReplayPlan& plan_;
  emu::Emulator& emu_;
  Checks& checks_;
};

}  // namespace bud::replay
