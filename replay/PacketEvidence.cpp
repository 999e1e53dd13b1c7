#include "replay/PacketEvidence.h"

#include <algorithm>
#include <set>
#include <sstream>
#include <string_view>

#include "replay/CounterMap.h"
#include "replay/PacketReader.h"

namespace bud::replay {

namespace {

std::vector<std::string> sorted(std::set<std::string> s) { return {s.begin(), s.end()}; }

// The names of a trigger file's `trigger NAME ...` statements. Only the statement's first two
// words are read (docs/triggers.md: one statement per line, '#' starts a comment): the packet
// was recorded from a file the trigger parser accepted, so nothing else needs checking here.
void trigger_names(const std::string& text, std::set<std::string>& out) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (const size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string keyword, name;
    if (words >> keyword >> name && keyword == "trigger") out.insert(name);
  }
}

}  // namespace

std::string trigger_hit_note(const std::string& trigger, uint64_t number, uint64_t cycle) {
  return "trigger " + trigger + " hit " + std::to_string(number) + " at cycle " +
         std::to_string(cycle);
}

PacketEvidence evidence_of(const Packet& packet) {
  PacketEvidence e;
  std::set<std::string> armed, hit;
  for (const auto& t : packet.header.triggers()) trigger_names(t, armed);
  for (const auto& a : packet.annotations) {
    const std::string_view text = a.text();
    constexpr std::string_view kPrefix = "trigger ";
    const size_t at = text.find(" hit ");
    if (text.substr(0, kPrefix.size()) == kPrefix && at != std::string_view::npos &&
        at > kPrefix.size())
      hit.insert(std::string(text.substr(kPrefix.size(), at - kPrefix.size())));
  }
  e.triggers_armed = sorted(std::move(armed));
  e.triggers_hit = sorted(std::move(hit));

  std::vector<std::string> names(packet.header.counter_names().begin(),
                                 packet.header.counter_names().end());
  if (names.empty())
    for (const auto n : kFormat1CounterNames) names.emplace_back(n);
  const google::protobuf::RepeatedField<uint64_t>* values = nullptr;
  if (packet.result)
    values = &packet.result->counters();
  else if (!packet.windows.empty())
    values = &packet.windows.back().counters();
  std::set<std::string> carried, observed;
  for (size_t i = 0; i < names.size(); ++i) {
    carried.insert(names[i]);
    if (values && i < static_cast<size_t>(values->size()) && (*values)[static_cast<int>(i)] != 0)
      observed.insert(names[i]);
  }
  e.counters = sorted(std::move(carried));
  e.counters_observed = sorted(std::move(observed));
  return e;
}

}  // namespace bud::replay
