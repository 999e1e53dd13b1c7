// The compiled trigger programs loaded into an engine and their run-time state (armed windows,
// state-machine positions, variables, coverage), and the evaluation of one cycle from a frame.
// The conditions read the quantities of the design from the frame being evaluated (frame slots
// bound by layout()), never from the emulator, so evaluation can run on another thread than the
// simulation (TriggerEvaluator). docs/triggers.md states the semantics.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "debugger/trigger/FrameLayout.h"
#include "debugger/trigger/TriggerFile.h"
#include "debugger/trigger/TriggerTypes.h"
#include "emu/core/Emulator.h"

namespace bud::debugger {

/// A hit found by evaluation, before its actions are performed.
struct PendingHit {
  uint32_t program = 0, trigger = 0, from_state = 0, branch = 0;
  uint64_t cycle = 0;
  uint64_t number = 0;           ///< the trigger's hit count including this one
  std::vector<uint64_t> values;  ///< the trigger's refs at the hit
};

/// What performing a hit's actions needs to know about its trigger.
struct HitTrigger {
  int id = 0;
  const TriggerDef* def = nullptr;
  const TriggerBranch* branch = nullptr;
  const std::vector<std::pair<std::string, Ref>>* refs = nullptr;  ///< names of `values`
};

/// What the history of snapshots must hold for the enabled triggers.
struct HistoryNeeds {
  bool captures = false;   ///< a capture action exists
  uint64_t max_pre = 0;    ///< largest pre depth of those captures (cycles)
  bool hit_cycle = false;  ///< an action needs the design at the hit cycle (halt, checkpoint,
                           ///< snapshot): a late hit brings the run back there
};

/// Whether an action needs the design at the hit cycle: an evaluation that finds it late makes
/// the run go back there.
bool needs_hit_cycle(ActionKind k);

class CompiledTriggers {
 public:
  explicit CompiledTriggers(const emu::Emulator& emu);
  ~CompiledTriggers();
  CompiledTriggers(const CompiledTriggers&) = delete;
  CompiledTriggers& operator=(const CompiledTriggers&) = delete;

  /// Adds the triggers of a program (enabled, armed at the next arm_all/arm_new); their ids.
  /// Call layout() before evaluating again.
  std::vector<int> add(TriggerProgram program);
  /// Removes a trigger (pending hits name triggers by index: perform them first).
  bool remove(int id);
  /// Enabling refreshes a k-shot trigger's shots and un-arms it (armed at the next run).
  bool set_enabled(int id, bool enabled);
  size_t size() const;
  /// Whether any trigger is enabled and has shots left.
  bool active() const;
  /// History bytes of every program loaded (removed triggers too: their conditions stay).
  size_t history_bytes() const;
  HistoryNeeds history_needs() const;

  /// Binds every quantity the conditions, hit values and every-N events read to a frame slot
  /// (slots only grow: earlier bindings stay valid) and returns the layout frames follow.
  FrameLayout layout();
  /// Copies a frame into the one the conditions read (no other effect: arming reads it).
  void set_frame(const uint64_t* f);
  /// Copies a frame in and applies its progress bit, run state and dispatch bits.
  void load_frame(const uint64_t* f);
  /// Evaluates every armed trigger on the loaded frame for `cycle`; appends the hits to `hits`.
  /// No allocation unless a trigger fires.
  void evaluate(uint64_t cycle, std::vector<PendingHit>& hits);
  /// Sets the symptom variables (assertion, hang, error, finished, mismatch).
  void set_symptoms(emu::RunState state, bool mismatch);
  /// While set, evaluate() only runs the triggers that read `mismatch`.
  void set_only_mismatch(bool only) { only_mismatch_ = only; }

  /// Arms every enabled trigger from the loaded frame at cycle `now` (windows and counts restart).
  void arm_all(uint64_t now);
  /// Arms the enabled triggers not armed yet, keeping the others' windows; false if none was.
  bool arm_new();
  /// The last cycle evaluated or armed at.
  uint64_t last_cycle() const { return last_cycle_; }

  /// Whether a hit's actions need the design at its cycle.
  bool is_barrier(const PendingHit& h) const;
  /// Whether a hit's trigger has a capture action.
  bool captures(const PendingHit& h) const;
  /// The trigger and branch a hit names.
  HitTrigger trigger_of(const PendingHit& h) const;
  /// Every trigger's state and coverage (a snapshot).
  std::vector<TriggerStatus> status() const;

 private:
  struct Program;
  struct Runtime;
  Runtime* find(int id);
  void arm_one(Program& p, Runtime& rt);

  const emu::Emulator& emu_;
  std::vector<std::unique_ptr<Program>> programs_;
  int next_id_ = 1;
  std::unique_ptr<uint64_t[]> frame_;  ///< the frame being evaluated; conditions read it
  size_t stride_ = kFrameFixed;
  struct DispatchEvent {
    uint32_t program = 0, event = 0;
  };
  std::vector<DispatchEvent> dispatch_events_;  ///< per dispatch bit
  std::vector<Ref> slots_;                      ///< the layout's slots
  uint64_t last_cycle_ = 0;
  uint64_t last_progress_ = 0;
  bool progress_ = false;
  bool only_mismatch_ = false;
};

}  // namespace bud::debugger
