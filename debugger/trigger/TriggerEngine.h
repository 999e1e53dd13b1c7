// Runs trigger programs (TriggerFile.h) against an emulator: evaluates every armed trigger once
// per cycle as a SessionHook (or a plain CycleHook in batch runs), records hits, and performs the
// actions. The simulation thread only copies the quantities the triggers read into a per-cycle
// frame; the conditions are evaluated from those frames on a second thread, and a hit whose
// actions need the design at the hit cycle (halt, checkpoint, snapshot) brings the run back to
// that cycle by deterministic re-execution, so results are the same as evaluating inline. Captures re-execute the window on a replica emulator restored from an in-memory
// history of snapshots, so the run being observed is never disturbed. docs/triggers.md states the
// semantics (sampling point, windows, latency, the end of a run inside a window).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "debugger/session/Session.h"
#include "debugger/trigger/TriggerFile.h"
#include "emu/core/Emulator.h"
#include "emu/drive/Driver.h"
#include "emu/isa/Isa.h"

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
  /// Every trigger's state and coverage. Waits for the evaluation thread to catch up first.
  std::vector<TriggerStatus> status() const;
  /// Waits until the evaluation thread has evaluated every frame produced so far (or stopped at
  /// a barrier hit, which stays for settle()). Simulation thread only.
  void quiesce();
  size_t size() const;

  /// Uses the session's interventions when re-executing windows, named checkpoints for the
  /// `checkpoint` action, and registers this engine as a session hook.
  void attach(Session& session);
  void detach();
  /// The engine attached to `session` (used by the `trigger` commands), or null.
  static TriggerEngine* of(const Session& session);
  /// The environment for parsing triggers against this engine's emulator and session program,
  /// with the limits and the history already loaded (every program added, removed triggers too:
  /// their conditions stay allocated).
  TriggerEnv env() const;
  void set_record_hook(TriggerRecordHook* hook) { record_hook_ = hook; }

  // SessionHook
  bool active() const override;
  /// Arms the triggers not armed yet; re-arms everything if the emulator is not at the cycle
  /// this engine last saw (time travel). Windows therefore continue across `step`/`continue`.
  void arm() override;
  bool after_cycle(uint64_t cycle) override;
  void on_txn(const emu::StageTxn& txn) override;
  /// Services pending hits and captures (the emulator is at the cycle of the pause) and appends
  /// a "trigger" reason for every halt.
  void stop_reasons(std::vector<StopReason>& out) override;
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
  bool halt_requested() const { return halt_; }
  void clear_halt() { halt_ = false; }

  const std::vector<TriggerHit>& hits() const { return hits_; }
  uint64_t dropped_hits() const { return dropped_hits_; }
  /// In-memory history for pre-trigger windows: snapshot interval (0: no capture armed), number
  /// of snapshots kept and their bytes.
  uint64_t history_interval() const { return snap_interval_; }
  size_t history_snapshots() const;
  size_t history_bytes() const;
  /// Cycles re-executed so far: for captures, and to return to a hit found by the evaluation thread.
  uint64_t resimulated_cycles() const { return resimulated_; }

 private:
  struct Program;
  struct Runtime;
  struct PendingHit {
    uint32_t program = 0, trigger = 0, from_state = 0, branch = 0;
    uint64_t cycle = 0;
    uint64_t number = 0;           ///< the trigger's hit count including this one
    std::vector<uint64_t> values;  ///< the trigger's refs at the hit
  };
  struct Snapshot {
    uint64_t cycle = 0;
    std::shared_ptr<std::vector<uint8_t>> state;
  };
  struct CaptureRequest {
    size_t hit = 0;   ///< index into hits_
    size_t file = 0;  ///< index into the hit's captures
    int trigger_id = 0;
    uint64_t hit_cycle = 0;
    uint64_t pre = 0, post = 0;
    Snapshot from;  ///< pinned snapshot at or before the window start
  };

  bool evaluate(uint64_t cycle);
  // Frames (see the file comment): [0] cycle, [1] progress bit | run state << 8, [2] dispatch
  // event bits, then one slot per distinct quantity read (gather_).
  static constexpr size_t kFrameFixed = 3;
  static constexpr size_t kMaxFrameSlots = 1024;
  static constexpr uint64_t kRingFrames = uint64_t{1} << 14;
  static constexpr uint64_t kPublishEvery = 2048;
  static constexpr size_t kMaxQueuedHits = 1 << 16;
  static constexpr uint64_t kInlineAfterBarrier = uint64_t{1} << 19;
  void layout();
  void gather(uint64_t* dst, uint64_t cycle);
  void apply_frame(const uint64_t* f);
  bool is_barrier(const PendingHit& h) const;
  void publish();
  void take_hits();
  void worker_loop();
  void stop_worker();
  void eval_current_on_main(uint64_t cycle);
  void set_symptoms(emu::RunState state, bool mismatch);
  void take_snapshot(uint64_t cycle);
  void plan_history();
  void perform(const PendingHit& p);
  void materialize(CaptureRequest& req, std::optional<uint64_t> run_end);
  void service_captures(std::optional<uint64_t> run_end);
  /// Drives `e` to `target` re-applying the session's interventions, with `with` taking part.
  std::string advance(emu::Emulator& e, uint64_t target, drive::Participant* with = nullptr);
  Runtime* find(int id, Program** prog = nullptr);

  emu::Emulator& emu_;
  TriggerEngineConfig config_;
  Session* session_ = nullptr;
  TriggerRecordHook* record_hook_ = nullptr;
  std::vector<std::unique_ptr<Program>> programs_;
  int next_id_ = 1;
  bool any_enabled_ = false;
  bool armed_ = false;
  uint64_t last_cycle_ = 0;
  uint64_t last_progress_ = 0;
  bool progress_ = false;
  bool halt_ = false;
  bool only_mismatch_ = false;
  std::vector<PendingHit> pending_;
  uint64_t dropped_hits_ = 0;
  std::vector<TriggerHit> hits_;
  std::vector<CaptureRequest> captures_;
  uint64_t next_capture_due_ = UINT64_MAX;
  // History ring for pre-trigger windows.
  uint64_t snap_interval_ = 0;
  size_t snap_keep_ = 0;
  uint64_t next_snapshot_ = UINT64_MAX;
  uint64_t history_start_ = 0;
  std::vector<Snapshot> ring_;
  std::unique_ptr<emu::Emulator> replica_;
  uint64_t resimulated_ = 0;
  bool needs_rewind_ = false;  ///< a barrier action exists (history snapshots for rewind_to)

  // Frames and the evaluation thread.
  std::vector<Ref> gather_;            ///< where each slot's quantity lives in the emulator
  std::unique_ptr<uint64_t[]> frame_;  ///< the frame being evaluated; conditions read it
  size_t stride_ = kFrameFixed;
  struct DispatchBit {
    uint32_t program = 0, event = 0;
  };
  std::vector<DispatchBit> dispatch_bits_;
  bool txn_progress_ = false;  ///< simulation thread: a transaction since the last frame
  uint64_t txn_dispatch_ = 0;
  bool async_ = false;
  uint64_t inline_until_ = 0;  ///< evaluate inline up to this cycle (after a barrier hit)
  std::vector<uint64_t> ring_buf_;  ///< kRingFrames frames
  uint64_t produced_ = 0;           ///< frames written (simulation thread)
  uint64_t tail_seen_ = 0;          ///< simulation thread's last look at tail_
  std::atomic<uint64_t> head_{0};   ///< frames published
  std::atomic<uint64_t> tail_{0};   ///< frames evaluated
  std::atomic<bool> barrier_{false};    ///< the evaluator stopped after a barrier hit
  std::atomic<bool> attention_{false};  ///< hits want servicing soon
  std::atomic<bool> idle_{false}, quit_{false};
  std::atomic<uint32_t> wake_{0};
  uint64_t barrier_cycle_ = 0;
  std::mutex hits_mu_;
  std::vector<PendingHit> shared_hits_;  ///< evaluator -> simulation thread (hits_mu_)
  uint64_t shared_dropped_ = 0;          ///< (hits_mu_)
  std::vector<PendingHit> eval_hits_;    ///< hits of the frame being evaluated
  std::thread worker_;
};

/// The engine as a participant of a batch run (no session): per-cycle frames, a settle at every
/// pause, hits serviced there, a halt action halts the run; the way back to a hit found late is
/// the engine's own history (it is the driver's rewinder too).
class TriggerParticipant final : public drive::Participant, public drive::Rewinder {
 public:
  explicit TriggerParticipant(TriggerEngine& engine) : engine_(engine) {}
  emu::CycleHook* cycle_hook() override { return &engine_; }
  emu::TxnObserver* txn_observer() override { return &engine_; }
  void on_start(uint64_t cycle) override;
  std::optional<uint64_t> settle() override { return engine_.settle(); }
  std::string rewind_to(uint64_t cycle) override { return engine_.rewind_to(cycle); }
  drive::PauseAction on_pause(uint64_t cycle) override;
  std::string stop_detail() const override { return "halted by a trigger"; }

 private:
  TriggerEngine& engine_;
};

/// Why drive() returned.
struct DriveResult {
  bool halted = false;  ///< a halt action fired
  uint64_t cycle = 0;
  std::string error;  ///< the run could not return to a trigger hit (it stopped there)
};

/// Runs `emu` with `engine` (a TriggerParticipant on a driver of its own) until the run leaves
/// the Ready state, `max_cycles` is reached or a halt action fires (batch runs). Calls `progress`
/// about every `progress_interval` cycles. Does not call finish_run().
DriveResult drive(emu::Emulator& emu, TriggerEngine& engine, uint64_t max_cycles,
                  const std::function<void(uint64_t)>& progress, uint64_t progress_interval);

}  // namespace bud::debugger
