// Fan-out of the server's events to attached clients: each client has a bounded mailbox that
// its Attach stream drains. A slow client loses its oldest events (the sequence numbers then
// show a gap) instead of slowing the emulation or growing memory.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "remote.pb.h"

namespace bud::remote {

/// One client's queue of events.
class Mailbox {
 public:
  explicit Mailbox(size_t capacity) : capacity_(capacity) {}
  /// Appends (numbering it); drops the oldest event when full.
  void push(v1::Event event);
  /// Waits up to `timeout` for an event; nullopt on timeout or when closed and empty.
  std::optional<v1::Event> pop(std::chrono::milliseconds timeout);
  /// Wakes the reader for good: pop() returns what is left, then nullopt.
  void close();
  bool closed() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<v1::Event> events_;
  size_t capacity_;
  uint64_t sequence_ = 0;
  bool closed_ = false;
};

class EventBus {
 public:
  explicit EventBus(size_t capacity = 1024) : capacity_(capacity) {}
  /// A new mailbox; `first` (if any) is queued before any published event.
  std::shared_ptr<Mailbox> subscribe(const v1::Event* first = nullptr);
  void unsubscribe(const std::shared_ptr<Mailbox>& box);
  /// Copies the event into every mailbox.
  void publish(const v1::Event& event);
  /// Closes every mailbox (server shutdown).
  void close_all();

 private:
  std::mutex mutex_;
  size_t capacity_;
  std::vector<std::shared_ptr<Mailbox>> boxes_;
};

}  // namespace bud::remote
