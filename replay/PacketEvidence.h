// What a packet says about the bring-up evidence beyond its verdict: the triggers its trigger
// files armed and those that hit (its annotations), and the PMU counters it recorded and those
// that counted something. The evidence database keeps it per packet and run (replay/dashboard),
// the report turns it into trigger coverage and counter completeness (docs/packets.md,
// "Evidence report"). Read from the packet alone: nothing is simulated.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bud::replay {

struct Packet;

/// One packet's evidence. Every list is sorted and without duplicates.
struct PacketEvidence {
  std::vector<std::string> triggers_armed;     ///< names of the triggers in its trigger files
  std::vector<std::string> triggers_hit;       ///< those that hit at least once while recording
  std::vector<std::string> counters;           ///< counters it recorded (Header.counter_names)
  std::vector<std::string> counters_observed;  ///< those not zero at its last recorded point
  bool operator==(const PacketEvidence&) const = default;
};

/// The evidence of `packet`: armed triggers from Header.triggers (each `trigger NAME` statement),
/// hits from its annotations (trigger_hit_note()), counters from its name table (format 1.x: the
/// format-1 list) and values at its Result, or its last window when it has none.
PacketEvidence evidence_of(const Packet& packet);

/// The annotation a recording keeps for a trigger hit: "trigger NAME hit N at cycle C". The one
/// format evidence_of() reads back.
std::string trigger_hit_note(const std::string& trigger, uint64_t number, uint64_t cycle);

}  // namespace bud::replay
