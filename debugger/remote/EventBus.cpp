#include "debugger/remote/EventBus.h"

#include <algorithm>

namespace bud::remote {

void Mailbox::push(v1::Event event) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_) return;
    event.set_sequence(++sequence_);
    if (events_.size() >= capacity_) events_.pop_front();
    events_.push_back(std::move(event));
  }
  cv_.notify_one();
}

std::optional<v1::Event> Mailbox::pop(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!cv_.wait_for(lock, timeout, [&] { return closed_ || !events_.empty(); }))
    return std::nullopt;
  if (events_.empty()) return std::nullopt;
  v1::Event e = std::move(events_.front());
  events_.pop_front();
  return e;
}

void Mailbox::close() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
  }
  cv_.notify_all();
}

bool Mailbox::closed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return closed_;
}

std::shared_ptr<Mailbox> EventBus::subscribe(const v1::Event* first) {
  auto box = std::make_shared<Mailbox>(capacity_);
  if (first) box->push(*first);
  std::lock_guard<std::mutex> lock(mutex_);
  boxes_.push_back(box);
  return box;
}

void EventBus::unsubscribe(const std::shared_ptr<Mailbox>& box) {
  std::lock_guard<std::mutex> lock(mutex_);
  boxes_.erase(std::remove(boxes_.begin(), boxes_.end(), box), boxes_.end());
}

void EventBus::publish(const v1::Event& event) {
  std::vector<std::shared_ptr<Mailbox>> boxes;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    boxes = boxes_;
  }
  for (auto& b : boxes) b->push(event);
}

void EventBus::close_all() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& b : boxes_) b->close();
}

}  // namespace bud::remote
