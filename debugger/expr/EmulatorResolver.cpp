#include "debugger/expr/EmulatorResolver.h"

namespace bud::debugger {

namespace {

constexpr std::string_view kPmuPrefix = "pmu.";

/// The design's counter `name` (or `pmu.<name>`), if it has one.
std::optional<int> counter_index(const emu::Emulator& emu, std::string_view name) {
  if (name.substr(0, kPmuPrefix.size()) == kPmuPrefix) name.remove_prefix(kPmuPrefix.size());
  return emu.describe().find_counter(name);
}

}  // namespace

std::optional<Ref> EmulatorResolver::resolve(std::string_view name, std::optional<uint32_t> index) {
  // Counters and `cycle` are scalars: resolve(name, i) fails for them, and the compiler then
  // reports "not an array" from resolve(name, nullopt).
  if (name == "cycle") {
    if (index) return std::nullopt;
    Ref r{RefKind::Cycle, 0, 0, 1, 64};
    if ((r.direct = emu_.cycle_address())) r.direct_bytes = 8;
    return r;
  }
  if (auto c = counter_index(emu_, name)) {
    if (index) return std::nullopt;
    Ref r{RefKind::Counter, static_cast<uint32_t>(*c), 0, 1, 64};
    if ((r.direct = emu_.counter_address(*c))) r.direct_bytes = 8;
    return r;
  }
  auto id = emu_.find_signal(name);
  if (!id || *id >= emu_.signals().size()) return std::nullopt;
  const emu::SignalInfo& info = emu_.signals()[*id];
  const uint32_t elements = info.elements == 0 ? 1 : info.elements;
  if (index && (elements <= 1 || *index >= elements)) return std::nullopt;
  Ref r{RefKind::Signal, *id, index.value_or(0), elements, info.width};
  uint32_t bytes = 0;
  if ((r.direct = emu_.signal_address(*id, r.element, bytes))) r.direct_bytes = bytes;
  return r;
}

std::vector<std::string> EmulatorResolver::names() const {
  std::vector<std::string> out;
  out.emplace_back("cycle");
  for (const auto& c : emu_.describe().counters) out.push_back(c);
  for (const emu::SignalInfo& s : emu_.signals()) {
    // `pmu.<counter>` signals are the counters again; suggesting both spellings wastes a slot.
    if (counter_index(emu_, s.name)) continue;
    out.push_back(s.name);
  }
  return out;
}

uint64_t EmulatorSampler::sample(const Ref& ref) {
  switch (ref.kind) {
    case RefKind::Signal:
      return emu_.read_signal(ref.id, ref.element).low();
    case RefKind::Counter:
      return emu_.counter(static_cast<int>(ref.id));
    case RefKind::Cycle:
      return emu_.cycle();
    case RefKind::Other:
      return 0;
  }
  return 0;
}

}  // namespace bud::debugger
