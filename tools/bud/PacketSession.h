// Sessions on replay packets, shared by `bud debug` and `bud serve`: a packet's checkpoints in
// a session's timeline, and the backend of the prompt's `record start|stop`.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "debugger/commands/Interpreter.h"
#include "debugger/session/Session.h"
#include "debugger/trigger/TriggerEngine.h"
#include "emu/run/RunJob.h"
#include "replay/PacketReader.h"
#include "replay/PacketRun.h"

namespace bud::cli {

/// Packet checkpoints attach_packet() loads at most (evenly spaced over a longer recording).
inline constexpr size_t kMaxPacketCheckpoints = 64;

/// Loads `packet`'s checkpoints into `session`'s timeline as named checkpoints "packet@CYCLE"
/// (so `goto` anywhere in the recording restores the nearest one) and leaves the session at the
/// first. A packet with more than kMaxPacketCheckpoints keeps that many, evenly spaced, the first
/// and the last included. Error text or empty.
std::string attach_packet(debugger::Session& session, const replay::Packet& packet);

/// Maps a file name to the path to write (`bud serve`: inside its output directory), or nullopt
/// with an error.
using PacketPathResolver =
    std::function<std::optional<std::string>(const std::string&, std::string&)>;
/// Where the `record` trigger action writes the packet of `hit`: `file`, or
/// trigger-NAME-HIT.bpk, through `resolve` when set. nullopt and `error` when it refuses.
std::optional<std::string> trigger_packet_path(const debugger::TriggerHit& hit,
                                               const std::string& file,
                                               const PacketPathResolver& resolve,
                                               std::string& error);

// `record start|stop` at the prompt, and the `record` trigger action in a session: the recorded
// range is the session's own execution - from the state saved at `record start`, or from the
// timeline's checkpoint at cycle 0 up to the hit for a trigger - re-executed in a second emulator
// (deterministic, so the session is not slowed) with the session's interventions (deposits,
// forces, memory writes) in the range, which the packet keeps so replay applies them too.
class PacketRecordBackend final : public debugger::RecordBackend,
                                  public debugger::TriggerRecordHook {
 public:
  PacketRecordBackend(replay::RunSpec spec, const run::PreparedRun& prepared, std::string origin)
      : spec_(std::move(spec)), prepared_(prepared), origin_(std::move(origin)) {}

  /// The session whose timeline and interventions the trigger action records (not owned).
  void bind(debugger::Session& session) { session_ = &session; }
  std::string start(debugger::Session& session, const std::string& path) override;
  std::string stop(debugger::Session& session, std::string& summary) override;
  /// The trigger action: a packet of cycles 0..hit (FILE, default trigger-NAME-HIT.bpk).
  std::string record(const debugger::TriggerHit& hit, const std::string& file,
                     std::string& written) override;
  /// Where trigger packets may go (`bud serve`: inside its output directory): maps a file name
  /// to the path to write, or nullopt with an error. Default: the name as given.
  using Resolver = PacketPathResolver;
  void set_trigger_resolver(Resolver r) { resolve_ = std::move(r); }

 private:
  /// Records cycles start_cycle..end to `path`, from `state` (null: a fresh start at cycle 0).
  /// The interventions of `session` in [start_cycle, end] are applied and recorded.
  std::string record_range(const std::vector<uint8_t>* state, uint64_t start_cycle, uint64_t end,
                           const debugger::Session* session, const std::string& path,
                           const std::vector<std::string>& notes, std::string& summary);

  replay::RunSpec spec_;
  const run::PreparedRun& prepared_;
  std::string origin_;  ///< who records, for the packet's annotation
  Resolver resolve_;
  debugger::Session* session_ = nullptr;
  std::vector<uint8_t> state_;
  uint64_t start_cycle_ = 0;
  std::string path_;
  bool active_ = false;
};

}  // namespace bud::cli
