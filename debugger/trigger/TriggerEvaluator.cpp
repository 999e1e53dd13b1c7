#include "debugger/trigger/TriggerEvaluator.h"

namespace bud::debugger {

namespace {
// Hits queued by the evaluation thread before it waits for the simulation thread to take them.
constexpr size_t kMaxQueuedHits = 1 << 16;
}  // namespace

TriggerEvaluator::TriggerEvaluator(const emu::Emulator& emu) : programs_(emu) {}

TriggerEvaluator::~TriggerEvaluator() { stop(); }

void TriggerEvaluator::start(size_t stride) {
  stop();
  auto [producer, consumer] = FrameRing::make(stride);
  producer_ = std::move(producer);
  worker_ = std::thread([this, c = std::move(consumer)]() mutable { worker_loop(std::move(c)); });
}

void TriggerEvaluator::stop() {
  if (!worker_.joinable()) return;
  FrameRing::quit(producer_);
  worker_.join();
  producer_ = FrameRing::Producer();
}

uint64_t* TriggerEvaluator::claim(std::vector<PendingHit>& pending) {
  uint64_t* slot = producer_.claim();
  if (slot) return slot;
  // Ring full: wait for the evaluator (taking its hits, so that it never waits for us).
  producer_.publish();
  while (!(slot = producer_.claim())) {
    if (producer_.stopped()) return nullptr;
    take_hits(pending);
    std::this_thread::yield();
  }
  return slot;
}

void TriggerEvaluator::take_hits(std::vector<PendingHit>& pending) {
  std::lock_guard<std::mutex> lock(hits_mu_);
  for (auto& h : shared_hits_) pending.push_back(std::move(h));
  shared_hits_.clear();
}

TriggerEvaluator::Idle TriggerEvaluator::quiesce(std::vector<PendingHit>& pending) {
  if (!threaded()) return Idle(programs_);
  producer_.publish();
  while (!producer_.drained()) {
    take_hits(pending);
    std::this_thread::yield();
  }
  return Idle(programs_);
}

TriggerEvaluator::Settled TriggerEvaluator::settle(std::vector<PendingHit>& pending) {
  Settled s{quiesce(pending), std::nullopt};
  if (!threaded()) return s;
  take_hits(pending);
  if (producer_.stopped()) {
    // barrier_cycle_ was written before the stop was released (acquired by stopped()).
    s.back = barrier_cycle_;
    producer_.resume();
  }
  attention_.store(false, std::memory_order_relaxed);
  return s;
}

void TriggerEvaluator::worker_loop(FrameRing::Consumer ring) {
  for (;;) {
    auto [t, h] = ring.wait();
    if (ring.quitting()) return;
    bool stop = false;
    for (; t < h && !stop; ++t) {
      const uint64_t* f = ring.frame(t);
      programs_.load_frame(f);
      programs_.evaluate(f[0], eval_hits_);
      if (eval_hits_.empty()) continue;
      bool notify = false;
      for (const auto& hit : eval_hits_) {
        stop |= programs_.is_barrier(hit);
        notify |= programs_.captures(hit);
      }
      for (;;) {
        {
          std::lock_guard<std::mutex> lock(hits_mu_);
          if (shared_hits_.size() < kMaxQueuedHits) {
            for (auto& hit : eval_hits_) shared_hits_.push_back(std::move(hit));
            notify |= shared_hits_.size() >= kMaxQueuedHits / 2;
            break;
          }
        }
        // The simulation thread takes hits while it waits for this thread, so this ends.
        attention_.store(true, std::memory_order_release);
        std::this_thread::yield();
      }
      eval_hits_.clear();
      if (stop) barrier_cycle_ = f[0];
      if (notify || stop) attention_.store(true, std::memory_order_release);
    }
    ring.release(t, stop);
  }
}

}  // namespace bud::debugger
