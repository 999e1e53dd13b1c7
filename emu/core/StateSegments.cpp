#include "emu/core/StateSegments.h"

#include <atomic>
#include <cassert>

namespace bud::emu {

uint64_t StateSegments::new_version() {
  // Process-wide, so that a version stays unique when a model is replaced by a restored copy.
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

void StateSegments::clear() {
  own_.clear();
  entries_.clear();
  owned_end_ = 0;
  total_ = 0;
}

void StateSegments::end_owned(uint64_t key, uint64_t version) {
  const size_t size = own_.size() - owned_end_;
  entries_.push_back({key, version, nullptr, owned_end_, size});
  owned_end_ = own_.size();
  total_ += size;
}

void StateSegments::add_borrowed(uint64_t key, uint64_t version, std::span<const uint8_t> bytes) {
  // Bytes appended to buffer() but not ended would silently move behind this segment.
  assert(own_.size() == owned_end_);
  entries_.push_back({key, version, bytes.data(), 0, bytes.size()});
  total_ += bytes.size();
}

StateSegments::Segment StateSegments::at(size_t i) const {
  const Entry& e = entries_[i];
  const uint8_t* p = e.borrowed ? e.borrowed : own_.data() + e.offset;
  return {e.key, e.version, std::span<const uint8_t>(p, e.size)};
}

void StateSegments::append_to(std::vector<uint8_t>& out) const {
  out.reserve(out.size() + total_);
  for (size_t i = 0; i < entries_.size(); ++i) {
    const auto b = at(i).bytes;
    out.insert(out.end(), b.begin(), b.end());
  }
}

}  // namespace bud::emu
