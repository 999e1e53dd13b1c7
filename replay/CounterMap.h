// Counters in packets are stored by position (Window.counters, Result.counters) beside a name
// table (Header.counter_names, format 2.0 on). CounterMap maps a packet's positions to this
// build's counter list (isa::kCounterNames) by name, so a packet recorded before a counter was
// added, removed or moved still compares counter by counter. Format 1.x packets carry no names:
// their positions are the counter list of their time (kFormat1CounterNames, frozen).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "emu/isa/Isa.h"
#include "replay/packet.pb.h"

namespace bud::replay {

/// The counters of packet format 1.x, by position (docs/counters.md as of format 1.x). Frozen:
/// never edit, whatever happens to the counter table.
extern const std::array<std::string_view, 62> kFormat1CounterNames;

/// Where each of this build's counters sits in a packet's recorded counter lists.
class CounterMap {
 public:
  /// The map of a packet with this header: its name table, or the format-1 list if it has none.
  static CounterMap of(const pb::Header& header);
  /// Writes this build's counter names into a header being recorded.
  static void describe(pb::Header& header);

  /// Whether the packet recorded this build's counter `index`.
  bool has(int index) const { return index >= 0 && index < isa::kNumCounters && pos_[index] >= 0; }
  /// This build's counter `index` in a recorded list; nullopt if the packet did not record it (or
  /// the list is shorter than its name table).
  std::optional<uint64_t> value(const google::protobuf::RepeatedField<uint64_t>& recorded,
                                int index) const;
  /// A recorded list in this build's order; counters the packet did not record read as 0 (see
  /// has()).
  std::vector<uint64_t> current(const google::protobuf::RepeatedField<uint64_t>& recorded) const;
  /// Recorded counter names this build does not know (removed or renamed since).
  const std::vector<std::string>& unknown() const { return unknown_; }

 private:
  std::array<int, isa::kNumCounters> pos_{};  ///< position in the packet's list, -1 if absent
  std::vector<std::string> unknown_;
};

/// Rewrites every Window and Result counter list of a packet into this build's order (absent
/// counters 0) and returns the map, so code comparing counters can index by isa::Counter.
struct Packet;
CounterMap to_current_counters(Packet& packet);

}  // namespace bud::replay
