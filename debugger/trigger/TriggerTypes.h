// The results and settings of a trigger engine (TriggerEngine.h): hits with what their actions
// produced, capture files, per-trigger status and coverage, the engine's configuration and the
// hook that writes replay packets.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "debugger/trigger/TriggerFile.h"
#include "emu/core/Emulator.h"

namespace bud::debugger {

/// Makes a second emulator of the same design and program (state is restored into it from a
/// snapshot). Returns null and sets `error` when impossible.
using ReplicaFactory = std::function<std::unique_ptr<emu::Emulator>(std::string& error)>;

/// One capture window written to disk.
struct CaptureFile {
  std::string fst;  ///< waveform of cycles from..to (FST time unit = 1 cycle)
  std::string log;  ///< compact event log of the same window
  uint64_t requested_from = 0, requested_to = 0;  ///< hit - pre, hit + post
  uint64_t from = 0, to = 0;                      ///< what the files hold
  bool written = false;      ///< false while the post window has not passed yet
  bool truncated = false;    ///< the run ended (or history began) inside the window
  uint64_t resimulated = 0;  ///< cycles re-executed to produce it
  std::string error;         ///< why no file was written (empty on success)
};

/// One time a trigger fired.
struct TriggerHit {
  uint64_t cycle = 0;
  int trigger_id = 0;
  std::string trigger;
  uint64_t number = 0;     ///< 1-based count of this trigger's hits
  std::string state_path;  ///< "armed" (simple trigger) or "wait -> watch" (state machine)
  std::string condition;   ///< the branch condition that held ("else" for an else branch)
  std::vector<std::string> actions;  ///< normalized actions performed
  /// Every quantity the trigger's conditions read, at the hit cycle.
  std::vector<std::pair<std::string, uint64_t>> values;
  /// All PMU counters at the hit (the `snapshot` action).
  std::vector<std::pair<std::string, uint64_t>> counters;
  std::vector<std::string> messages;  ///< `log` texts and notes
  std::vector<CaptureFile> captures;
  std::string checkpoint;  ///< named checkpoint or state file written
  std::string record;      ///< replay packet written by the record hook
  bool halted = false;
};

/// Fills the `record` action (installed by the CLI over bud::replay).
class TriggerRecordHook {
 public:
  virtual ~TriggerRecordHook() = default;
  /// Records a replay packet for `hit` into `file` (a default name when empty). Returns an error
  /// message or empty; `written` names what was written.
  virtual std::string record(const TriggerHit& hit, const std::string& file,
                             std::string& written) = 0;
};

struct TriggerEngineConfig {
  std::string capture_dir = ".";  ///< where captures, logs and state files go
  ReplicaFactory make_replica;    ///< required for `capture`
  /// Cycles between history snapshots; 0 chooses max(524288, largest pre depth / 2).
  uint64_t history_interval = 0;
  uint64_t max_captures_per_trigger = 16;  ///< later hits are reported without files
  size_t max_hits = 10000;                 ///< hits kept in detail (the rest are counted)
  /// Bounds of what may be loaded; env() hands them to the parser with the history in use.
  TriggerLimits limits;
  /// When set, every file the engine writes (capture waveform and log, checkpoint state file) is
  /// prepared through it: it receives the file name (no directory) and returns the path to write,
  /// or nullopt with an error (a server confines them to its output directory this way). Unset:
  /// `capture_dir`/NAME.
  std::function<std::optional<std::string>(const std::string& name, std::string& error)>
      open_output;
  /// Evaluate conditions on a second thread from per-cycle frames (same results as inline
  /// evaluation, which `false` selects; docs/triggers.md, "Evaluation thread").
  bool async = true;
};

/// Coverage of one condition.
struct ConditionCoverage {
  std::string text;
  SourceLoc loc;
  uint64_t true_cycles = 0;  ///< cycles on which it held
  std::optional<uint64_t> first_true;
};

/// A loaded trigger and how it fared.
struct TriggerStatus {
  int id = 0;
  std::string name;
  std::string file;
  bool machine = false;
  bool enabled = true;
  bool exhausted = false;  ///< its k shots are used up
  std::optional<uint64_t> shots;
  uint64_t hits = 0;
  uint64_t armed_cycles = 0;  ///< cycles it was evaluated
  std::string state;          ///< current state
  std::vector<ConditionCoverage> conditions;
  std::vector<std::pair<std::string, uint64_t>> states_entered;  ///< state -> times entered
  std::vector<std::string> summary;  ///< normalized source, one line each
};

}  // namespace bud::debugger
