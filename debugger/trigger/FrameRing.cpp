#include "debugger/trigger/FrameRing.h"

namespace bud::debugger {

struct FrameRing::Shared {
  explicit Shared(size_t s) : stride(s), buf(kFrames * s, 0) {}
  const size_t stride;
  std::vector<uint64_t> buf;         ///< kFrames frames
  std::atomic<uint64_t> head{0};     ///< frames published
  std::atomic<uint64_t> tail{0};     ///< frames taken
  std::atomic<bool> stopped{false};  ///< the consumer stopped at a barrier
  std::atomic<bool> idle{false}, quit{false};
  std::atomic<uint32_t> wake{0};
};

std::pair<FrameRing::Producer, FrameRing::Consumer> FrameRing::make(size_t stride) {
  auto s = std::make_shared<Shared>(stride);
  return {Producer(s), Consumer(s)};
}

void FrameRing::quit(Producer& producer) {
  Shared& s = *producer.shared_;
  s.quit.store(true, std::memory_order_seq_cst);
  s.wake.fetch_add(1, std::memory_order_seq_cst);
  s.wake.notify_one();
}

uint64_t* FrameRing::Producer::claim() {
  Shared& s = *shared_;
  if (produced_ - tail_seen_ >= kFrames &&
      produced_ - (tail_seen_ = s.tail.load(std::memory_order_acquire)) >= kFrames)
    return nullptr;
  return s.buf.data() + (produced_ % kFrames) * s.stride;
}

void FrameRing::Producer::commit() {
  ++produced_;
  if (produced_ - shared_->head.load(std::memory_order_relaxed) >= kPublishEvery) publish();
}

void FrameRing::Producer::publish() {
  Shared& s = *shared_;
  s.head.store(produced_, std::memory_order_seq_cst);
  if (s.idle.load(std::memory_order_seq_cst)) {
    s.wake.fetch_add(1, std::memory_order_seq_cst);
    s.wake.notify_one();
  }
}

bool FrameRing::Producer::drained() const {
  return shared_->tail.load(std::memory_order_acquire) >= produced_ || stopped();
}

bool FrameRing::Producer::stopped() const {
  return shared_->stopped.load(std::memory_order_acquire);
}

void FrameRing::Producer::resume() {
  Shared& s = *shared_;
  produced_ = s.tail.load(std::memory_order_acquire);
  tail_seen_ = produced_;
  s.head.store(produced_, std::memory_order_seq_cst);
  s.stopped.store(false, std::memory_order_release);
}

std::pair<uint64_t, uint64_t> FrameRing::Consumer::wait() {
  Shared& s = *shared_;
  for (;;) {
    if (s.quit.load(std::memory_order_acquire)) return {0, 0};
    const uint64_t t = s.tail.load(std::memory_order_relaxed);
    const bool stopped = s.stopped.load(std::memory_order_acquire);
    const uint64_t h = s.head.load(std::memory_order_acquire);
    if (!stopped && t != h) return {t, h};
    // Nothing to do: spin briefly (the next batch is usually close), then sleep until the
    // producer publishes (Dekker handshake on idle/head, both seq_cst).
    bool more = false;
    for (int i = 0; i < 256 && !more; ++i) {
      __builtin_ia32_pause();
      more =
          !s.stopped.load(std::memory_order_acquire) && s.head.load(std::memory_order_acquire) != t;
    }
    if (more) continue;
    const uint32_t w = s.wake.load(std::memory_order_seq_cst);
    s.idle.store(true, std::memory_order_seq_cst);
    if (!s.quit.load(std::memory_order_seq_cst) &&
        (s.stopped.load(std::memory_order_seq_cst) || s.head.load(std::memory_order_seq_cst) == t))
      s.wake.wait(w, std::memory_order_seq_cst);
    s.idle.store(false, std::memory_order_seq_cst);
  }
}

const uint64_t* FrameRing::Consumer::frame(uint64_t number) const {
  return shared_->buf.data() + (number % kFrames) * shared_->stride;
}

void FrameRing::Consumer::release(uint64_t end, bool stop) {
  shared_->tail.store(end, std::memory_order_release);
  if (stop) shared_->stopped.store(true, std::memory_order_release);
}

bool FrameRing::Consumer::quitting() const { return shared_->quit.load(std::memory_order_acquire); }

}  // namespace bud::debugger
