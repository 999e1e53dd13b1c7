// Runs trigger programs (TriggerFile.h) against an emulator: evaluates every armed trigger once
// per cycle as a SessionHook (or, through TriggerParticipant, in a batch run), records hits, and
// performs the actions. The engine wires the parts together, each a class of its own:
//   CompiledTriggers  the loaded programs and their run-time state; evaluates one frame
//   TriggerEvaluator  evaluates inline or on its own thread from per-cycle frames (FrameRing)
//   TriggerActions    performs the actions of hits at a pause (halt, checkpoint, snapshot, ...)
//   CaptureWriter     capture windows, re-executed on a replica emulator
//   TriggerHistory    in-memory snapshots and re-execution for windows and late hits
// The simulation thread only copies the quantities the triggers read into a per-cycle frame; a
// hit whose actions need the design at the hit cycle (halt, checkpoint, snapshot) brings the run
// back to that cycle by deterministic re-execution, so results are the same as evaluating inline.
// docs/triggers.md states the semantics (sampling point, windows, latency, the end of a run
// inside a window).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "debugger/session/Session.h"
#include "debugger/trigger/CaptureWriter.h"
#include "debugger/trigger/CompiledTriggers.h"
#include "debugger/trigger/TriggerActions.h"
#include "debugger/trigger/TriggerEvaluator.h"
#include "debugger/trigger/TriggerFile.h"
#include "debugger/trigger/TriggerHistory.h"
#include "debugger/trigger/TriggerTypes.h"
#include "emu/core/Emulator.h"

namespace bud::debugger {

class TriggerEngine final : public SessionHook {
 public:
  TriggerEngine(emu::Emulator& emu, TriggerEngineConfig config);
  ~TriggerEngine() override;
  TriggerEngine(const TriggerEngine&) = delete;
  TriggerEngine& operator=(const TriggerEngine&) = delete;

  /// Adds the triggers of a program, enabled and armed at the next run. Returns their ids.
  std::vector<int> add(TriggerProgram program);
  bool remove(int id);
  /// Enabling refreshes a k-shot trigger's shots (perf's IOC_REFRESH) and re-arms it.
  bool set_enabled(int id, bool enabled);
  /// A snapshot of every trigger's state and coverage, taken once the evaluation thread has
  /// caught up. Simulation thread only.
  std::vector<TriggerStatus> status();
  /// Waits until the evaluation thread has evaluated every frame produced so far (or stopped at
  /// a barrier hit, which stays for settle()). Simulation thread only.
  void quiesce();
  size_t size() const { return size_; }

  /// Uses the session's interventions when re-executing windows, named checkpoints for the
  /// `checkpoint` action, registers this engine as a session hook and as the session's trigger
  /// engine (Session::triggers(), which the `trigger` commands and the remote service use).
  void attach(Session& session);
  void detach();
  /// The environment for parsing triggers against this engine's emulator and session program,
  /// with the limits and the history already loaded (every program added, removed triggers too:
  /// their conditions stay allocated).
  TriggerEnv env() const;
  void set_record_hook(TriggerRecordHook* hook) { actions_.set_record_hook(hook); }

  // SessionHook
  /// Whether a trigger is enabled with shots left, as of the last pause (runs end settled).
  bool active() const override { return active_; }
  /// Arms the triggers not armed yet; re-arms everything if the emulator is not at the cycle
  /// this engine last saw (time travel). Windows therefore continue across `step`/`continue`.
  void arm() override;
  bool after_cycle(uint64_t cycle) override;
  void on_txn(const emu::StageTxn& txn) override;
  /// Services pending hits and captures (the emulator is at the cycle of the pause) and appends
  /// a "trigger" reason for every halt.
  void stop_reasons(std::vector<StopReason>& out) override { service(&out); }
  /// Waits until the evaluation thread has seen every cycle run so far. Returns the cycle of a
  /// hit whose actions need the design at that cycle (halt, checkpoint, snapshot) when it is
  /// earlier than the emulator's: the caller must bring the emulator back there (with this hook
  /// uninstalled) before calling service()/stop_reasons().
  std::optional<uint64_t> settle() override;
  /// For runs without a session: brings the emulator back to `cycle` (which settle() returned)
  /// from the engine's own history snapshots, by deterministic re-execution. The caller (the
  /// run driver) has taken the per-cycle hooks off. Error message or empty.
  std::string rewind_to(uint64_t cycle);

  /// Arms every enabled trigger from the current state (windows and counts restart).
  void arm_all();
  /// Performs the actions of the hits of the last evaluated cycle and writes captures whose
  /// window has closed. Appends a reason per halt to `reasons` (may be null).
  void service(std::vector<StopReason>* reasons);
  /// The run ended: the symptom names are set from `state` (the hooked final cycle already saw
  /// assertion/hang/error/finished); `mismatch` (known only after the checks) re-evaluates the
  /// final cycle for the triggers that read it. Performs the actions and writes every pending
  /// capture, truncated at the end of the run.
  void finish_run(emu::RunState state, bool mismatch);
  /// Whether a halt action fired since the last clear_halt().
  bool halt_requested() const { return actions_.halt_requested(); }
  void clear_halt() { actions_.clear_halt(); }

  const std::vector<TriggerHit>& hits() const { return actions_.hits(); }
  uint64_t dropped_hits() const { return actions_.dropped_hits(); }
  /// In-memory history for pre-trigger windows: snapshot interval (0: no capture armed), number
  /// of snapshots kept and their bytes.
  uint64_t history_interval() const { return history_.interval(); }
  size_t history_snapshots() const { return history_.size(); }
  size_t history_bytes() const { return history_.bytes(); }
  /// Cycles re-executed so far: for captures, and to return to a hit found by the evaluation
  /// thread.
  uint64_t resimulated_cycles() const { return rx_.cycles(); }

 private:
  /// The programs, once the evaluation thread has caught up.
  CompiledTriggers& programs() { return evaluator_.quiesce(pending_).programs(); }
  /// Lays frames out for the programs loaded and chooses inline or threaded evaluation.
  void layout();
  void plan_history();
  /// Copies the current state into the frame the conditions read (for arming).
  void gather_armed();

  emu::Emulator& emu_;
  TriggerEngineConfig config_;
  Session* session_ = nullptr;
  TriggerEvaluator evaluator_;           ///< owns the programs
  FrameLayout layout_;                   ///< what a frame holds (simulation thread)
  std::unique_ptr<uint64_t[]> scratch_;  ///< a frame for inline evaluation and arming
  TriggerHistory history_;
  Reexecutor rx_;
  CaptureWriter captures_;
  TriggerActions actions_;
  std::vector<PendingHit> pending_;  ///< hits not performed yet
  size_t size_ = 0;                  ///< triggers loaded
  size_t loaded_history_bytes_ = 0;  ///< of every program added
  bool active_ = false;
  bool armed_ = false;
  bool txn_progress_ = false;  ///< a transaction since the last frame
  uint64_t txn_dispatch_ = 0;  ///< dispatch bits since the last frame
  uint64_t inline_until_ = 0;  ///< evaluate inline up to this cycle (after a barrier hit)
};

}  // namespace bud::debugger
