#include "profile/RunConditions.h"

#include <cmath>
#include <cstdio>
#include <algorithm>

namespace bud::profile {

namespace {

using json::Json;

std::string number_text(double v) {
  char buf[64];
  if (std::fabs(v - std::round(v)) < 1e-9)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

RunCondition number(std::string name, double v) { return {std::move(name), number_text(v), v}; }
RunCondition text(std::string name, std::string v) {
  return {std::move(name), std::move(v), std::nullopt};
}

// "3 int8, 1 bf16": the precision mix in order of first appearance.
std::string precision_mix(const run::RunReport& r) {
  std::vector<std::pair<std::string, int>> mix;
  for (const auto& l : r.precisions) {
    auto it = std::find_if(mix.begin(), mix.end(), [&](auto& m) { return m.first == l.precision; });
    if (it == mix.end())
      mix.emplace_back(l.precision, 1);
    else
      ++it->second;
  }
  std::string s;
  for (const auto& [p, n] : mix) s += (s.empty() ? "" : ", ") + std::to_string(n) + " " + p;
  return s.empty() ? "none" : s;
}

}  // namespace

const RunCondition* RunConditions::find(const std::string& name) const {
  for (const auto& c : items)
    if (c.name == name) return &c;
  return nullptr;
}

RunConditions run_conditions(const run::RunOptions& o, const run::RunReport& r, double clock_mhz) {
  RunConditions c;
  auto& v = c.items;
  const auto& d = o.emulator.dram;
  v.push_back(text("design", o.emulator.design));
  v.push_back(text("array", std::string(r.array.name)));
  v.push_back(text("operating_point", o.point.empty() ? "nominal" : o.point));
  if (clock_mhz > 0) v.push_back(number("clock_mhz", clock_mhz));
  v.push_back(number("dram_base_latency_cycles", d.base_latency));
  v.push_back(number("dram_jitter_cycles", d.jitter));
  v.push_back(number("dram_bytes_per_cycle", d.bytes_per_cycle));
  v.push_back(number("dram_max_outstanding", d.max_outstanding));
  v.push_back(text("dram_reorder", d.reorder ? "on" : "off"));
  v.push_back(text("dram_bursty", d.bursty ? "period " + std::to_string(d.burst_period) + ", " +
                                                 std::to_string(d.burst_duty_pct) + "% stalled"
                                           : "off"));
  const auto& t = o.emulator.throttle;
  v.push_back(text("throttle", t.period ? std::to_string(t.on_cycles) + " of " +
                                              std::to_string(t.period) + " cycles"
                                        : "off"));
  v.push_back(text("thermal", o.emulator.thermal.enabled ? "on" : "off"));
  v.push_back(text("precision", precision_mix(r)));
  v.push_back(number("tile_max_rows", o.tiles.max_rows));
  v.push_back(number("tile_max_blocks", o.tiles.max_blocks));
  v.push_back(number("faults", static_cast<double>(o.faults.size())));
  return c;
}

Json conditions_json(const RunConditions& c) {
  Json j = Json::object();
  for (const auto& i : c.items) j[i.name] = i.number ? Json(*i.number) : Json(i.text);
  return j;
}

RunConditions read_conditions(const Json& j) {
  RunConditions c;
  if (!j.is_object()) return c;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it->is_number())
      c.items.push_back(number(it.key(), it->get<double>()));
    else if (it->is_string())
      c.items.push_back(text(it.key(), it->get<std::string>()));
    else
      c.items.push_back(text(it.key(), it->dump()));
  }
  return c;
}

std::vector<ConditionChange> changed_conditions(const RunConditions& base,
                                                const RunConditions& next) {
  std::vector<ConditionChange> out;
  for (const auto& b : base.items) {
    const RunCondition* n = next.find(b.name);
    if (!n || n->text == b.text) continue;
    out.push_back({b.name, b.text, n->text, b.number, n->number});
  }
  return out;
}

std::string condition_effect(const ConditionChange& c) {
  const bool up = c.base_number && c.next_number && *c.next_number > *c.base_number;
  const std::string& n = c.name;
  if (n == "clock_mhz")
    return "the clock moved: engine work takes the same cycles, but DRAM timing is in ns, so "
           "each DRAM access costs " +
           std::string(up ? "more" : "fewer") +
           " cycles at the new clock; cycles and time move differently: compare time, and "
           "profile both at one operating point (--point) to find a mechanism";
  if (n == "operating_point")
    return "another operating point: engine work takes the same cycles at its clock, but DRAM "
           "timing is in ns, so its DRAM timing in cycles differs too; cycles and time move "
           "differently - compare time, and profile both at one point (--point) to find a "
           "mechanism";
  if (n == "dram_bytes_per_cycle")
    return std::string(up ? "a wider" : "a narrower") +
           " DRAM channel: every response takes " + (up ? "fewer" : "more") +
           " cycles to transfer (memory / load_transfer: bandwidth-bound)";
  if (n == "dram_base_latency_cycles" || n == "dram_jitter_cycles")
    return std::string(up ? "a longer" : "a shorter") +
           " DRAM latency: with bounded requests in flight, every load waits " +
           (up ? "longer" : "less") + " (memory / dram_wait: latency-bound, Little's law)";
  if (n == "dram_max_outstanding")
    return std::string(up ? "more" : "fewer") +
           " requests in flight: the bandwidth Little's law sustains at the same latency " +
           (up ? "rises" : "falls") + " (memory / dram_wait: latency-bound)";
  if (n == "dram_reorder" || n == "dram_bursty")
    return "the DRAM model's response order or stalls differ: memory waits move with it";
  if (n == "throttle" || n == "thermal")
    return "the clock-enable clamp differs: engine work is held on clamped cycles (throttled)";
  if (n == "precision")
    return "the layers run at another precision: a BF16 GEMM iteration does half the int8 MACs "
           "(precision)";
  if (n == "array" || n == "design")
    return "another MAC array or design: peak MACs per cycle and tiling differ; compare per "
           "layer time against its own peak (bud fit), not cycles";
  if (n == "tile_max_rows" || n == "tile_max_blocks")
    return "the tile caps differ: the lowering tiles the layers differently (more, smaller "
           "tiles: more loads and per-command overhead)";
  if (n == "faults") return "the runs inject different faults: their results differ by design";
  return "a recorded run condition differs";
}

}  // namespace bud::profile
