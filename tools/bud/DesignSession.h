// Sessions on a design file's model, shared by `bud debug --design` / `--packet` (a design
// packet) and `bud serve --design` / `--packet`: the target prepared from the file or the
// packet, the debugger session with its triggers on the simulation thread, and the backend of
// `record start|stop` and of the `record` trigger action, which writes design packets.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "debugger/commands/Interpreter.h"
#include "debugger/session/Session.h"
#include "debugger/trigger/TriggerEngine.h"
#include "design/DesignTarget.h"
#include "emu/core/EmulatorConfig.h"
#include "replay/PacketReader.h"
#include "tools/bud/PacketSession.h"

namespace bud::cli {

/// A design made ready for a session: its target, the options it was made with (what a packet
/// recorded from the session holds) and one line saying what it is.
struct DesignOpen {
  design::DesignTarget target;
  design::TargetOptions options;
  std::string banner;
};

/// `--design FILE` with `--define`, `--param`, `--design-cache` and `--seed`. nullopt and `error`
/// (with the exit status of `bud design`) when the file does not parse, check or build.
std::optional<DesignOpen> open_design_file(const std::string& path,
                                           const design::TargetOptions& options,
                                           design::DesignError& error);
/// A design packet (`packet` read from `path`): its files materialised in `cache_dir`'s packet
/// folder, its design prepared with the recorded overrides, seed and quiet cycles, and refused
/// when its embedded files no longer build the recorded revision.
std::optional<DesignOpen> open_design_packet(const replay::Packet& packet, const std::string& path,
                                             const std::string& cache_dir,
                                             design::DesignError& error);

// `record start|stop` and the `record` trigger action on a design's session. A design packet
// replays from cycle 0 out of its own files (design/DesignPacket.h), so what is recorded is the
// run from cycle 0 to the stop (or the hit): re-run in a fresh instance of the model, limited to
// that cycle unless the session's run had ended there, and checked against the session's own
// state at that cycle before it is written - a packet that would not replay to what the session
// shows is refused, never written. Deposits, forces and memory writes are refused for the same
// reason: a design packet does not hold interventions.
class DesignRecordBackend final : public debugger::RecordBackend,
                                  public debugger::TriggerRecordHook {
 public:
  DesignRecordBackend(const design::DesignTarget& target, design::TargetOptions options,
                      std::string origin)
      : target_(target), options_(std::move(options)), origin_(std::move(origin)) {}

  /// The session the trigger action records (not owned).
  void bind(debugger::Session& session) { session_ = &session; }
  std::string start(debugger::Session& session, const std::string& path) override;
  std::string stop(debugger::Session& session, std::string& summary) override;
  std::string record(const debugger::TriggerHit& hit, const std::string& file,
                     std::string& written) override;
  /// Where trigger packets may go (`bud serve`: inside its output directory).
  using Resolver = PacketPathResolver;
  void set_trigger_resolver(Resolver r) { resolve_ = std::move(r); }

 private:
  /// Writes the packet of cycles 0..end of `session`'s run to `path`.
  std::string record_to(const debugger::Session& session, uint64_t end, const std::string& path,
                        const std::string& note, std::string& summary);

  const design::DesignTarget& target_;
  design::TargetOptions options_;
  std::string origin_;
  Resolver resolve_;
  debugger::Session* session_ = nullptr;
  std::string path_;
  uint64_t start_cycle_ = 0;
  bool active_ = false;
};

/// How a design session is opened.
struct DesignSessionSetup {
  emu::EmulatorConfig emulator;  ///< the base config (its `design` is set to the target's)
  uint64_t checkpoint_interval = 0;
  uint64_t checkpoint_budget_mb = 512;
  std::string trigger_file;  ///< --triggers FILE (empty: none)
  /// Captures, limits and where files go; evaluated on the simulation thread (`async` is
  /// ignored), a capture re-executing its window on a replica of the design.
  debugger::TriggerEngineConfig triggers;
  std::string origin;  ///< who records, for the packets' annotation
  /// Where the `record` trigger action may write (null: the name as given).
  DesignRecordBackend::Resolver resolve_record;
};

/// The session, its trigger engine and its recorder, destroyed in that reverse order.
struct DesignSession {
  std::unique_ptr<debugger::Session> session;
  std::unique_ptr<debugger::TriggerEngine> triggers;
  std::unique_ptr<DesignRecordBackend> recorder;
};

/// Opens the session on `open` (which must outlive it). nullopt and `error`, with `errors`
/// holding a trigger file's own diagnostics (FILE:LINE:COL), when the model does not load or the
/// trigger file is invalid.
std::optional<DesignSession> open_design_session(const DesignOpen& open,
                                                 const DesignSessionSetup& setup,
                                                 std::string& error,
                                                 std::vector<std::string>& errors);

}  // namespace bud::cli
