// A debugging session over one emulation: run control with breakpoints, checkpoints and time
// travel, the user's changes to state, and the program being run. Commands (debugger/commands)
// act on a Session; the same Session serves an interactive prompt, a script, a replayed packet
// or a remote client.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "debugger/session/Breakpoints.h"
#include "debugger/session/Timeline.h"
#include "emu/core/Emulator.h"
#include "emu/drive/Driver.h"
#include "emu/isa/Isa.h"

namespace bud::debugger {

/// What the design is running, for `where`, `info program` and command breakpoints.
struct ProgramInfo {
  std::string workload;
  std::vector<isa::Command> commands;   ///< index = cmd_id
  std::vector<std::string> layer_names; ///< index = layer
  /// Layer name of a command index, or "" if unknown.
  std::string layer_of(uint32_t cmd_id) const;
};

/// Why a run stopped: a closed set, rendered once (stop_kind_name), in the prompt, JSON and the
/// remote protocol alike.
enum class StopKind : uint8_t {
  Breakpoint,   ///< a breakpoint's condition held (id: the breakpoint)
  Watchpoint,   ///< a watched signal or memory changed (id: the watchpoint)
  Trigger,      ///< a counter trigger halted (id: the trigger)
  Mismatch,     ///< the stage check found a divergence from the golden model
  Step,         ///< `step N` used up its cycles
  Until,        ///< `until CYCLE` reached it
  Limit,        ///< a run's cycle budget was used up
  Finish,       ///< `finish`: the command retired
  Goto,         ///< `goto` landed
  ReverseStep,  ///< `reverse-step` landed
  Restore,      ///< `restore NAME` landed
  Finished,     ///< the program ran to its END
  Hang,         ///< the no-progress watchdog fired
  Assertion,    ///< the design's assertion fired
  Error,        ///< the design or the memory model stopped with an error, or travel failed
  CycleLimit,   ///< the run used up --max-cycles
  Interrupted,  ///< Ctrl-C or a remote interrupt
};
/// "breakpoint", "watchpoint", "trigger", "mismatch", "step", "until", "limit", "finish", "goto",
/// "reverse-step", "restore", "finished", "hang", "assertion", "error", "cycle_limit",
/// "interrupted".
const char* stop_kind_name(StopKind k);
/// The stop kind of a run state that ends a run (every state but Ready).
StopKind stop_kind_of(emu::RunState s);

/// One reason a run stopped (several may apply at once).
struct StopReason {
  StopKind kind = StopKind::Step;
  int id = 0;          ///< breakpoint / watchpoint / trigger id
  std::string detail;
};

/// Where and why execution stopped.
struct StopInfo {
  uint64_t cycle = 0;
  std::vector<StopReason> reasons;
  bool has(StopKind kind) const;
  /// "stopped at cycle 1234: breakpoint 2 (gemm.stall_mem > 1000); watchpoint 3 (...)".
  std::string describe() const;
};

/// Something evaluated after every cycle while the session runs (counter triggers, recorders):
/// it may ask to stop and then says why. Hooks are not evaluated during time travel
/// (re-execution of cycles already seen).
class SessionHook : public emu::CycleHook, public emu::TxnObserver {
 public:
  /// Whether it must run now; a session with no active hook and no enabled breakpoint runs at
  /// full speed.
  virtual bool active() const = 0;
  /// Called before each run, from the current state.
  virtual void arm() {}
  /// After a run stopped: appends the reasons this hook asked to stop (if it did).
  virtual void stop_reasons(std::vector<StopReason>& out) { (void)out; }
  /// Called whenever the emulator pauses during a run. A hook that evaluates cycles
  /// asynchronously finishes every cycle run so far, and returns the cycle at which it must stop
  /// when that is earlier than the emulator's; the session then travels back there (hooks
  /// uninstalled), drops the other stop reasons and asks stop_reasons().
  virtual std::optional<uint64_t> settle() { return std::nullopt; }
  void on_txn(const emu::StageTxn& txn) override { (void)txn; }
};

struct SessionConfig {
  TimelineConfig timeline;
  uint64_t chunk = 1u << 16;  ///< cycles between checks of Ctrl-C while running
};

class Session {
 public:
  Session(std::unique_ptr<emu::Emulator> emu, ProgramInfo program, SessionConfig config = {});

  emu::Emulator& emu() { return *emu_; }
  const emu::Emulator& emu() const { return *emu_; }
  Timeline& timeline() { return timeline_; }
  Breakpoints& breakpoints() { return breakpoints_; }
  const ProgramInfo& program() const { return program_; }

  /// Runs up to `cycles` cycles (UINT64_MAX: until something stops it), with breakpoints when
  /// `use_breakpoints`. `limit_kind` names the reason reported when the count is used up.
  StopInfo run(uint64_t cycles, bool use_breakpoints, StopKind limit_kind);
  /// Travels to `cycle` (either direction); breakpoints are not evaluated on the way.
  /// Returns an error message (state unchanged) or empty.
  std::string goto_cycle(uint64_t cycle);
  /// Runs forward to `cycle` without breakpoints and without restoring any checkpoint (so a
  /// waveform being written sees every cycle). Error message or empty.
  std::string advance_to(uint64_t cycle);
  /// Goes back to the previous cycle at which an enabled breakpoint or watchpoint fired.
  /// Returns the stop, or an error message in `error`.
  std::optional<StopInfo> reverse_continue(std::string& error);

  /// State changes that time travel re-applies (see Intervention).
  bool deposit(emu::SignalId id, uint32_t element, const emu::SignalValue& v);
  bool force(emu::SignalId id, uint32_t element, const emu::SignalValue& v);
  void release(emu::SignalId id, uint32_t element);
  bool write_memory(const std::string& memory, uint64_t offset, const std::vector<uint8_t>& bytes);
  const std::vector<Intervention>& interventions() const { return interventions_; }
  /// Takes a recorded log of interventions (a packet's, sorted by cycle) as this session's: each
  /// is applied when execution reaches its cycle, running forward or re-executing, and those at
  /// the current cycle now. Error (naming the intervention) or empty.
  std::string adopt_interventions(std::vector<Intervention> log);

  /// Counters at the stop before the current one: `counters` shows the change since then.
  /// Index = the design's counter index (emu().describe().counters), sized when the session
  /// was made.
  const std::vector<uint64_t>& counters_at_last_stop() const { return prev_counters_; }
  /// Records a stop: the counters of the current stop become the previous ones.
  void snapshot_counters();

  /// The furthest cycle this execution has reached, and the cycle it finished at (if it did).
  uint64_t furthest_cycle() const { return furthest_; }
  std::optional<uint64_t> end_cycle() const { return end_cycle_; }

  /// Installs the golden-model check (not owned; also added as a hook), or removes it (nullptr).
  void set_stage_check(class StageCheck* check);
  /// The golden-model check, or null when the session has none (e.g. no golden model).
  class StageCheck* stage_check() const { return stage_check_; }

  /// The trigger engine attached to this session (not owned; TriggerEngine::attach sets it and
  /// detach clears it), or null: the `trigger` commands and the remote service act on it.
  class TriggerEngine* triggers() const { return triggers_; }
  void set_triggers(class TriggerEngine* engine) { triggers_ = engine; }

  /// Adds/removes a per-cycle hook (not owned; must outlive its registration).
  void add_hook(SessionHook* hook);
  void remove_hook(SessionHook* hook);

  /// Called between chunks while run() runs (every SessionConfig::chunk cycles at most, never
  /// per cycle) with the current cycle, so a front end can show progress; empty: nothing. Not
  /// called during time travel. The callback must not change the session.
  void set_progress_callback(std::function<void(uint64_t cycle)> callback) {
    progress_ = std::move(callback);
  }

  /// Set from a signal handler (Ctrl-C): the running command stops at the next chunk boundary
  /// or breakpoint check with reason "interrupted".
  static std::atomic<bool>& interrupt_flag();

 private:
  std::function<void(uint64_t)> progress_;
  bool record(Intervention i);
  void note_progress();
  void collect_breakpoint_hits(std::vector<StopReason>& out) const;


  std::unique_ptr<emu::Emulator> emu_;
  ProgramInfo program_;
  SessionConfig config_;
  Timeline timeline_;
  Breakpoints breakpoints_;
  std::vector<Intervention> interventions_;
  std::vector<SessionHook*> hooks_;
  class StageCheck* stage_check_ = nullptr;
  class TriggerEngine* triggers_ = nullptr;
  std::vector<uint64_t> prev_counters_;
  std::vector<uint64_t> last_counters_;
  uint64_t furthest_ = 0;
  std::optional<uint64_t> end_cycle_;
};

}  // namespace bud::debugger
