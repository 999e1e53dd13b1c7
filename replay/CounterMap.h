// Counters in packets are stored by position (Window.counters, Result.counters) beside a name
// table (Header.counter_names, format 2.0 on). CounterMap maps a packet's positions to a design's
// counter list (Emulator::describe().counters) by name, so a packet recorded before a counter was
// added, removed or moved still compares counter by counter. Format 1.x packets carry no names:
// they are all NPU packets, and their positions are the NPU's counter list of their time
// (kFormat1CounterNames, frozen).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "emu/core/Emulator.h"
#include "replay/packet.pb.h"

namespace bud::replay {

/// The counters of packet format 1.x, by position (docs/counters.md as of format 1.x). Frozen:
/// never edit, whatever happens to the counter table.
extern const std::array<std::string_view, 62> kFormat1CounterNames;

/// Where each of this build's counters sits in a packet's recorded counter lists.
class CounterMap {
 public:
  /// The map of a packet with this header onto the counter list `counters` (a design's
  /// describe().counters): the header's name table, or the format-1 list if it has none.
  static CounterMap of(const pb::Header& header, const std::vector<std::string>& counters);
  /// Writes the design's name and counter names into a header being recorded.
  static void describe(pb::Header& header, const emu::DesignInfo& design);

  /// Whether the packet recorded counter `index` of the list.
  bool has(int index) const {
    return index >= 0 && index < static_cast<int>(pos_.size()) && pos_[index] >= 0;
  }
  /// Counter `index` of the list in a recorded list; nullopt if the packet did not record it (or
  /// the list is shorter than its name table).
  std::optional<uint64_t> value(const google::protobuf::RepeatedField<uint64_t>& recorded,
                                int index) const;
  /// A recorded list in the list's order; counters the packet did not record read as 0 (see
  /// has()).
  std::vector<uint64_t> current(const google::protobuf::RepeatedField<uint64_t>& recorded) const;
  /// Recorded counter names the list does not have (removed or renamed since).
  const std::vector<std::string>& unknown() const { return unknown_; }

 private:
  std::vector<int> pos_;  ///< per counter of the list: position in the packet's list, -1 if absent
  std::vector<std::string> unknown_;
};

/// Rewrites every Window and Result counter list of a packet into the order of `counters` (a
/// design's describe().counters; absent counters 0) and returns the map, so code comparing
/// counters can index them by the design's counter index.
struct Packet;
CounterMap to_current_counters(Packet& packet, const std::vector<std::string>& counters);

}  // namespace bud::replay
