// A saved emulator state as an ordered list of segments (Emulator::save_segments), so that a
// checkpointer can tell which parts of the state may have changed since it last looked without
// reading them: each segment carries a stable key and a version that changes whenever its bytes
// may have. Concatenating the segments gives exactly the bytes save() writes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace bud::emu {

/// Segments of one saved state. Owned segments are bytes written into this object's buffer;
/// borrowed segments point into the emulator's memory and stay valid until the emulator next
/// changes (step, restore, deposit, write) or save_segments() is called again.
class StateSegments {
 public:
  /// One piece of the state.
  struct Segment {
    /// Names the piece within its emulator (e.g. "DRAM page 17"); stable across saves.
    uint64_t key = 0;
    /// 0: may have changed, read the bytes. Otherwise: within one emulator, two segments with the
    /// same key and the same non-zero version hold the same bytes (versions come from
    /// new_version(), so they are never reused in a process).
    uint64_t version = 0;
    std::span<const uint8_t> bytes;
  };

  /// A version no segment has had before in this process (thread-safe; never 0).
  static uint64_t new_version();

  /// Forgets every segment (keeps the buffer's capacity).
  void clear();
  /// The buffer owned segments are written into: append bytes, then end_owned().
  std::vector<uint8_t>& buffer() { return own_; }
  /// Ends an owned segment: the bytes appended to buffer() since the previous end_owned() (or
  /// clear()). Those bytes may still be patched in buffer() until they are read.
  void end_owned(uint64_t key, uint64_t version);
  /// Adds a segment borrowing `bytes` (not copied).
  void add_borrowed(uint64_t key, uint64_t version, std::span<const uint8_t> bytes);

  /// Number of segments.
  size_t count() const { return entries_.size(); }
  /// Segment `i` (< count()), in state order.
  Segment at(size_t i) const;
  /// Total bytes of all segments.
  size_t size_bytes() const { return total_; }
  /// Appends the concatenation of all segments to `out`.
  void append_to(std::vector<uint8_t>& out) const;

 private:
  struct Entry {
    uint64_t key = 0;
    uint64_t version = 0;
    const uint8_t* borrowed = nullptr;  ///< nullptr: owned, at `offset` in own_
    size_t offset = 0;
    size_t size = 0;
  };
  std::vector<uint8_t> own_;
  std::vector<Entry> entries_;
  size_t owned_end_ = 0;  ///< end of the last owned segment in own_
  size_t total_ = 0;
};

}  // namespace bud::emu
