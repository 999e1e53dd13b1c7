// The one loop that steps an emulator. Everything else that takes part in a run is a Participant
// with a declared role: it may watch every cycle (a CycleHook: breakpoints, trigger frames), every
// stage transaction (a TxnObserver: checkers), or only the pauses it asks for (recorders, progress,
// checkpointers); an asynchronous one may find, late, that the run must go back to an earlier
// cycle, which the driver does through its Rewinder (the debugger's timeline, or a history of
// snapshots) with the per-cycle hooks taken off. The driver owns the emulator's single hook and
// observer slots: no participant sets them. docs/architecture.md draws one cycle and one trip back.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "emu/core/Emulator.h"

namespace bud::drive {

/// What a participant says at a pause.
enum class PauseAction : uint8_t {
  Continue,  ///< nothing to add
  Halt,      ///< the run must stop here (e.g. a trigger's halt action, Ctrl-C)
  Fail,      ///< the participant failed (e.g. could not write its packet); the run stops
};

/// A party to a run. Defaults make a participant that does nothing; override what it needs.
/// Cost is declared by what it returns: a cycle hook or transaction observer is called every
/// cycle/transaction (and must not allocate, lock, throw or do I/O); next_pause() costs one
/// pause of the emulator at the cycles it names.
class Participant {
 public:
  virtual ~Participant() = default;

  /// Called every cycle while the run is driven (null: not needed now). Asked at each start.
  /// A hook returning true asks for a pause right after that cycle; whether the run stops there
  /// is the participants' word at that pause (e.g. breakpoints halt when they have hits).
  virtual emu::CycleHook* cycle_hook() { return nullptr; }
  /// Called on every stage transaction (null: not needed now). Asked at each start.
  virtual emu::TxnObserver* txn_observer() { return nullptr; }
  /// Called once when a run (Driver::run_until) starts, from the current state.
  virtual void on_start(uint64_t cycle) { (void)cycle; }
  /// The next cycle after `now` at which it needs the emulator paused (UINT64_MAX: none).
  virtual uint64_t next_pause(uint64_t now) const {
    (void)now;
    return UINT64_MAX;
  }
  /// Asynchronous participants finish every cycle run so far; a cycle earlier than the current
  /// one means the run must go back there (the driver rewinds, then calls on_rewind()).
  virtual std::optional<uint64_t> settle() { return std::nullopt; }
  /// The emulator was brought back to `cycle` (everything after it will happen again).
  virtual void on_rewind(uint64_t cycle) { (void)cycle; }
  /// At every pause, once settled: the emulator is at `cycle` and may be read.
  virtual PauseAction on_pause(uint64_t cycle) {
    (void)cycle;
    return PauseAction::Continue;
  }
  /// Why it halted or failed, after it returned Halt or Fail.
  virtual std::string stop_detail() const { return {}; }
};

/// Brings the emulator back to an earlier cycle of the same execution (deterministic
/// re-execution from a saved state). The driver has taken its hooks off while it runs.
class Rewinder {
 public:
  virtual ~Rewinder() = default;
  /// Moves the emulator to `cycle`. Error message (state unspecified) or empty.
  virtual std::string rewind_to(uint64_t cycle) = 0;
};

/// Plain per-cycle hooks as a participant (either may be null), for code that only watches.
class HookParticipant final : public Participant {
 public:
  HookParticipant(emu::CycleHook* hook, emu::TxnObserver* observer)
      : hook_(hook), observer_(observer) {}
  emu::CycleHook* cycle_hook() override { return hook_; }
  emu::TxnObserver* txn_observer() override { return observer_; }

 private:
  emu::CycleHook* hook_;
  emu::TxnObserver* observer_;
};

/// Calls a callback at every multiple of `interval` cycles of a driven run (progress lines).
class ProgressParticipant final : public Participant {
 public:
  ProgressParticipant(std::function<void(uint64_t)> callback, uint64_t interval)
      : callback_(std::move(callback)), interval_(interval ? interval : 1) {}
  uint64_t next_pause(uint64_t now) const override { return (now / interval_ + 1) * interval_; }
  PauseAction on_pause(uint64_t cycle) override {
    if (callback_ && cycle % interval_ == 0) callback_(cycle);
    return PauseAction::Continue;
  }

 private:
  std::function<void(uint64_t)> callback_;
  uint64_t interval_;
};

/// Why run_until() returned: every reason that applied.
struct DriveStop {
  uint64_t cycle = 0;
  emu::RunState state = emu::RunState::Ready;
  bool reached_target = false;  ///< the target cycle was reached
  bool halted = false;          ///< a participant returned Halt
  bool failed = false;          ///< a participant returned Fail, or a rewind failed
  std::optional<uint64_t> rewound_to;  ///< the run went back to this cycle at the last pause
  std::string detail;           ///< the halting/failing participant's words, or the rewind error
  std::string message;          ///< the emulator's message when the state left Ready
};

/// Steps one emulator on behalf of its participants.
class Driver {
 public:
  explicit Driver(emu::Emulator& emu) : emu_(emu) {}
  ~Driver();
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  emu::Emulator& emulator() { return emu_; }

  /// Adds a participant (not owned; must outlive its registration). Order is call order.
  void add(Participant& p);
  void remove(Participant& p);
  /// How the driver goes back in time (not owned); null: a participant asking to go back fails
  /// the run.
  void set_rewinder(Rewinder* r) { rewinder_ = r; }

  /// Runs until cycle `target` (absolute), until the run leaves Ready, or a participant halts or
  /// fails at a pause. Pauses at least every `max_chunk` cycles, and wherever a per-cycle hook
  /// asks.
  DriveStop run_until(uint64_t target, uint64_t max_chunk = uint64_t{1} << 20);

  /// Cycles stepped since construction, re-executions by the rewinder excluded: a run that
  /// is simulated once steps each cycle once.
  uint64_t cycles_driven() const { return driven_; }

 private:
  /// Fans the emulator's single hook and observer slots out to the participants that need them.
  struct Fanout final : emu::CycleHook, emu::TxnObserver {
    std::vector<emu::CycleHook*> hooks;
    std::vector<emu::TxnObserver*> observers;
    bool after_cycle(uint64_t cycle) override;
    void on_txn(const emu::StageTxn& t) override;
  };
  void install();
  void uninstall();

  emu::Emulator& emu_;
  std::vector<Participant*> participants_;
  Rewinder* rewinder_ = nullptr;
  Fanout fanout_;
  bool installed_ = false;
  uint64_t driven_ = 0;
};

/// Drives `emu` to `target` on a driver of its own with `with` taking part (nulls skipped): for
/// code that needs one bounded run and no more (positioning before a check, a lockstep step).
DriveStop advance(emu::Emulator& emu, uint64_t target,
                  std::initializer_list<Participant*> with = {});

}  // namespace bud::drive
