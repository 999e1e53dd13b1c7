// Sessions on replay packets, shared by `bud debug` and `bud serve`: a packet's checkpoints in
// a session's timeline, and the backend of the prompt's `record start|stop`.
#pragma once

#include <string>
#include <vector>

#include "debugger/commands/Interpreter.h"
#include "debugger/session/Session.h"
#include "emu/run/RunJob.h"
#include "replay/PacketReader.h"
#include "replay/PacketRun.h"

namespace bud::cli {

/// Loads `packet`'s checkpoints into `session`'s timeline as named checkpoints "packet@CYCLE"
/// (so `goto` anywhere in the recording restores the nearest one) and leaves the session at the
/// first. Error text or empty.
std::string attach_packet(debugger::Session& session, const replay::Packet& packet);

// `record start|stop` at the prompt: on stop, the recorded range is re-simulated from the
// state saved at start in a second emulator (deterministic), so the session is not slowed.
class PacketRecordBackend final : public debugger::RecordBackend {
 public:
  PacketRecordBackend(replay::RunSpec spec, const run::PreparedRun& prepared, std::string origin)
      : spec_(std::move(spec)), prepared_(prepared), origin_(std::move(origin)) {}

  std::string start(debugger::Session& session, const std::string& path) override;
  std::string stop(debugger::Session& session, std::string& summary) override;

 private:
  replay::RunSpec spec_;
  const run::PreparedRun& prepared_;
  std::string origin_;  ///< who records, for the packet's annotation
  std::vector<uint8_t> state_;
  uint64_t start_cycle_ = 0;
  std::string path_;
  bool active_ = false;
};

}  // namespace bud::cli
