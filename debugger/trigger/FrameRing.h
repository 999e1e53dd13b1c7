// A single-producer single-consumer ring of fixed-size frames (words of one simulated cycle) from
// the simulation thread to the trigger evaluation thread. The two ends are separate move-only
// handles, so which thread may do what is in the types: the simulation thread holds the
// Producer, the evaluation thread the Consumer. Frames are published in batches (one release
// store per kPublishEvery frames); a consumer with nothing to do spins briefly, then sleeps until
// the producer publishes. The consumer can stop at a frame (a barrier): it evaluates nothing more
// until the producer, having seen the stop, drops the frames after it and resumes.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace bud::debugger {

class FrameRing {
  struct Shared;

 public:
  static constexpr uint64_t kFrames = uint64_t{1} << 14;
  static constexpr uint64_t kPublishEvery = 2048;

  /// The simulation thread's end.
  class Producer {
   public:
    Producer() = default;
    /// The slot of the next frame (stride words), or null when the ring is full; then the caller
    /// waits for the consumer (publish() first, so that it has something to do).
    uint64_t* claim();
    /// The frame written into the last claim() is complete; published in batches.
    void commit();
    /// Makes every committed frame visible to the consumer (and wakes it if asleep).
    void publish();
    /// Whether the consumer has taken every committed frame (or stopped at a barrier).
    bool drained() const;
    /// Whether the consumer stopped at a barrier.
    bool stopped() const;
    /// After a stop: drops the frames the consumer did not take, then lets it continue with the
    /// next frame committed.
    void resume();
    explicit operator bool() const { return shared_ != nullptr; }

   private:
    friend class FrameRing;
    explicit Producer(std::shared_ptr<Shared> s) : shared_(std::move(s)) {}
    std::shared_ptr<Shared> shared_;
    uint64_t produced_ = 0;   ///< frames committed
    uint64_t tail_seen_ = 0;  ///< the consumer's position at the last look
  };

  /// The evaluation thread's end.
  class Consumer {
   public:
    Consumer() = default;
    /// Waits until frames are published (or quit() is called): the range [first, end) of frame
    /// numbers to take, read with frame(). Empty after quit().
    std::pair<uint64_t, uint64_t> wait();
    const uint64_t* frame(uint64_t number) const;
    /// Frames before `end` are done with. With `stop`, the consumer stops there until resumed.
    void release(uint64_t end, bool stop);
    bool quitting() const;

   private:
    friend class FrameRing;
    explicit Consumer(std::shared_ptr<Shared> s) : shared_(std::move(s)) {}
    std::shared_ptr<Shared> shared_;
  };

  /// A ring of kFrames frames of `stride` words and its two ends.
  static std::pair<Producer, Consumer> make(size_t stride);
  /// Wakes the consumer and makes wait() return empty (any thread).
  static void quit(Producer& producer);
};

}  // namespace bud::debugger
