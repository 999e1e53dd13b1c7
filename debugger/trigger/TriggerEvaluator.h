// Evaluates the compiled triggers (CompiledTriggers) either inline on the simulation thread or on
// a thread of its own from per-cycle frames (FrameRing). It owns the programs: the simulation
// thread reaches them only through an Idle token, which quiesce() and settle() hand out once the
// evaluation thread has stopped touching them. Hits travel back through a mutex-guarded queue;
// a hit whose actions need the design at its cycle (a barrier) stops the evaluation thread there,
// and settle() tells the simulation thread to go back to that cycle.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "debugger/trigger/CompiledTriggers.h"
#include "debugger/trigger/FrameRing.h"

namespace bud::debugger {

class TriggerEvaluator {
 public:
  /// Proof that the evaluation thread is not using the programs (it is caught up, stopped at a
  /// barrier, or not running). Only the evaluator makes one.
  class Idle {
   public:
    CompiledTriggers& programs() const { return programs_; }

   private:
    friend class TriggerEvaluator;
    explicit Idle(CompiledTriggers& p) : programs_(p) {}
    CompiledTriggers& programs_;
  };

  explicit TriggerEvaluator(const emu::Emulator& emu);
  ~TriggerEvaluator();
  TriggerEvaluator(const TriggerEvaluator&) = delete;
  TriggerEvaluator& operator=(const TriggerEvaluator&) = delete;

  /// Evaluates on a thread from frames of `stride` words from now on (the thread starts, or
  /// restarts with a new ring). Call while idle.
  void start(size_t stride);
  /// Evaluates inline from now on (the thread ends). Call while idle.
  void stop();
  bool threaded() const { return worker_.joinable(); }

  // Simulation thread, threaded: produce frames, take hits.
  /// The slot of the next frame, waiting for room (taking hits into `pending` meanwhile). Null
  /// when the ring is full and the thread stopped at a barrier: the run must pause.
  uint64_t* claim(std::vector<PendingHit>& pending);
  /// The claimed frame is written.
  void commit() { producer_.commit(); }
  /// Whether hits want servicing soon (a capture hit, a barrier, a filling hit queue).
  bool attention() const { return attention_.load(std::memory_order_relaxed); }
  /// Waits until every frame produced so far is evaluated (or the thread stopped at a barrier,
  /// which stays for settle()), moving hits into `pending`.
  Idle quiesce(std::vector<PendingHit>& pending);
  struct Settled {
    Idle idle;
    /// The cycle of a barrier hit: the run must go back there; the frames after it are dropped.
    std::optional<uint64_t> back;
  };
  /// quiesce(), then resolves a barrier stop (the thread continues with the next frame
  /// produced) and clears attention().
  Settled settle(std::vector<PendingHit>& pending);

  // Simulation thread, inline (not threaded, or threaded and settled).
  /// The programs, for evaluating a cycle on the simulation thread: the thread has nothing to
  /// evaluate (every frame produced is done).
  Idle inline_access() { return Idle(programs_); }

 private:
  void worker_loop(FrameRing::Consumer ring);
  void take_hits(std::vector<PendingHit>& pending);

  CompiledTriggers programs_;
  FrameRing::Producer producer_;  ///< simulation thread
  std::thread worker_;
  std::vector<PendingHit> eval_hits_;  ///< evaluation thread: hits of the frame being evaluated
  uint64_t barrier_cycle_ = 0;         ///< written by the thread before it stops at a barrier
  std::atomic<bool> attention_{false};
  std::mutex hits_mu_;
  std::vector<PendingHit> shared_hits_;  ///< evaluation thread -> simulation thread (hits_mu_)
};

}  // namespace bud::debugger
