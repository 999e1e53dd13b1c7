#include "power/EnergyTable.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "emu/textproto/TextProto.h"
#include "energy_table.pb.h"

namespace bud::power {

namespace detail {
extern const char* const kDefaultTableText;  // generated from power/tables/npu_45nm.textpb
}

namespace {

Error fail(const std::string& where, const std::string& what) { return Error{where + ": " + what}; }

Component component_of(bud::power::proto::Component c) {
  switch (c) {
    case proto::MAC: return Component::Mac;
    case proto::SCRATCHPAD: return Component::Scratchpad;
    case proto::DRAM: return Component::Dram;
    case proto::CONTROL: return Component::Control;
    case proto::STATIC: return Component::Static;
    case proto::HOST: return Component::Host;
    case proto::BACKGROUND: return Component::Background;
    default: return Component::Count;
  }
}

}  // namespace

const char* component_name(Component c) {
  static constexpr const char* kNames[] = {"mac",    "scratchpad", "dram",      "control",
                                           "static", "host",       "background"};
  return c < Component::Count ? kNames[static_cast<int>(c)] : "?";
}

bool on_die(Component c) {
  return c != Component::Dram && c != Component::Background && c != Component::Host;
}

Result<EnergyTable> parse_energy_table(std::string_view text, std::string_view file,
                                       const std::vector<std::string>& known) {
  const std::string fname(file);
  proto::EnergyTable pt;
  textproto::Tree tree;
  if (auto e = textproto::parse(std::string(text), fname, pt, tree); !e.empty()) return Error{e};
  const textproto::Locator loc(fname);
  if (pt.schema() == 0)
    return fail(loc.start(), "missing `schema` (this bud reads energy table schema " +
                                 std::to_string(kEnergySchema) + ")");
  if (pt.schema() > kEnergySchema)
    return fail(loc.at(&tree, pt, "schema", -1, loc.start()),
                "energy table schema " + std::to_string(pt.schema()) + " is newer than this bud's (" +
                    std::to_string(kEnergySchema) + ")");
  if (!(pt.voltage() > 0) || !std::isfinite(pt.voltage()))
    return fail(loc.at(&tree, pt, "voltage", -1, loc.start()), "`voltage` must be > 0 volts");
  if (!(pt.frequency_mhz() > 0) || !std::isfinite(pt.frequency_mhz()))
    return fail(loc.at(&tree, pt, "frequency_mhz", -1, loc.start()), "`frequency_mhz` must be > 0");
  if (pt.action_size() == 0) return fail(loc.start(), "the table prices no action");
  EnergyTable t;
  t.file = fname;
  t.name = pt.name();
  t.version = pt.version();
  t.technology = pt.technology();
  t.voltage = pt.voltage();
  t.frequency_mhz = pt.frequency_mhz();
  std::set<std::string> seen;
  for (int i = 0; i < pt.action_size(); ++i) {
    const proto::Action& a = pt.action(i);
    const textproto::Tree* at = loc.nested(&tree, pt, "action", i);
    const std::string where = loc.at(&tree, pt, "action", i, loc.start());
    if (a.counter().empty()) return fail(where, "action without a `counter`");
    if (std::find(known.begin(), known.end(), a.counter()) == known.end())
      return fail(loc.at(at, a, "counter", -1, where),
                  "'" + a.counter() + "' is not a counter of this design (`bud workloads` and " +
                      "docs/counters.md list them)");
    if (!seen.insert(a.counter()).second)
      return fail(loc.at(at, a, "counter", -1, where), "'" + a.counter() + "' is priced twice");
    const double fj = a.pj() * 1000.0;
    if (!std::isfinite(a.pj()) || a.pj() < 0 || fj > 1e15)
      return fail(loc.at(at, a, "pj", -1, where), "energy must be finite and >= 0 pJ");
    if (std::fabs(fj - std::round(fj)) > 1e-6)
      return fail(loc.at(at, a, "pj", -1, where),
                  "energy " + std::to_string(a.pj()) + " pJ is finer than 1 fJ (bud sums whole fJ)");
    const Component c = component_of(a.component());
    if (c == Component::Count)
      return fail(loc.at(at, a, "component", -1, where), "action without a `component`");
    t.actions.push_back({a.counter(), static_cast<uint64_t>(std::llround(fj)), c, a.source(),
                         loc.at(at, a, "counter", -1, where)});
  }
  bool own_listed = false;
  for (int i = 0; i < pt.operating_point_size(); ++i) {
    const proto::OperatingPoint& op = pt.operating_point(i);
    const textproto::Tree* at = loc.nested(&tree, pt, "operating_point", i);
    const std::string where = loc.at(&tree, pt, "operating_point", i, loc.start());
    if (op.name().empty()) return fail(where, "operating point without a `name`");
    if (t.point(op.name()))
      return fail(loc.at(at, op, "name", -1, where), "operating point '" + op.name() + "' is listed twice");
    if (!(op.frequency_mhz() > 0) || !std::isfinite(op.frequency_mhz()))
      return fail(loc.at(at, op, "frequency_mhz", -1, where), "`frequency_mhz` must be > 0");
    if (!(op.voltage() > 0) || !std::isfinite(op.voltage()))
      return fail(loc.at(at, op, "voltage", -1, where), "`voltage` must be > 0 volts");
    own_listed |= op.frequency_mhz() == t.frequency_mhz && op.voltage() == t.voltage;
    t.points.push_back({op.name(), op.frequency_mhz(), op.voltage()});
  }
  if (!own_listed) {
    if (t.point("nominal"))
      return fail(loc.start(), "operating point 'nominal' differs from the table's own frequency "
                               "and voltage");
    t.points.insert(t.points.begin(), {"nominal", t.frequency_mhz, t.voltage});
  }
  if (pt.has_dram_timing()) {
    const proto::DramTiming& d = pt.dram_timing();
    const std::string where = loc.at(&tree, pt, "dram_timing", -1, loc.start());
    if (!(d.latency_ns() > 0) || !std::isfinite(d.latency_ns()) || !(d.jitter_ns() >= 0) ||
        !std::isfinite(d.jitter_ns()) || !(d.bandwidth_gbps() > 0) || !std::isfinite(d.bandwidth_gbps()))
      return fail(where, "`dram_timing` needs latency_ns > 0, jitter_ns >= 0 and bandwidth_gbps > 0");
    t.dram_timing = DramTiming{d.latency_ns(), d.jitter_ns(), d.bandwidth_gbps()};
  }
  if (pt.has_thermal()) {
    const proto::Thermal& th = pt.thermal();
    const textproto::Tree* at = loc.nested(&tree, pt, "thermal", -1);
    const std::string where = loc.at(&tree, pt, "thermal", -1, loc.start());
    auto field = [&](const char* name) { return loc.at(at, th, name, -1, where); };
    // One multiplication and one rounding per value: the same integers on every machine.
    auto scaled = [](double v, double unit) { return std::llround(v * unit); };
    auto bad = [](double v, double lo, double hi) { return !std::isfinite(v) || v < lo || v > hi; };
    if (bad(th.r_c_per_w(), 0.001, 1e4))
      return fail(field("r_c_per_w"), "`r_c_per_w` must be in [0.001, 10^4] degrees C per watt");
    if (bad(th.c_j_per_c(), 1e-9, 1e3))
      return fail(field("c_j_per_c"), "`c_j_per_c` must be in [10^-9, 10^3] joules per degree C");
    if (bad(th.ambient_c(), 0, 1000))
      return fail(field("ambient_c"), "`ambient_c` must be in [0, 1000] degrees C");
    if (bad(th.trip_c(), 0, 1000) || !(th.trip_c() > th.ambient_c()))
      return fail(field("trip_c"), "`trip_c` must be above `ambient_c` (and at most 1000)");
    if (bad(th.hysteresis_c(), 0, th.trip_c() - th.ambient_c()))
      return fail(field("hysteresis_c"), "`hysteresis_c` must be in [0, trip_c - ambient_c]");
    if (th.window_cycles() == 0 || th.window_cycles() > (uint64_t{1} << 32))
      return fail(field("window_cycles"), "`window_cycles` must be in [1, 2^32]");
    ThermalParams p;
    p.r_mc_per_w = static_cast<uint64_t>(scaled(th.r_c_per_w(), 1e3));
    p.c_nj_per_c = static_cast<uint64_t>(scaled(th.c_j_per_c(), 1e9));
    p.ambient_mc = scaled(th.ambient_c(), 1e3);
    p.trip_mc = scaled(th.trip_c(), 1e3);
    p.hysteresis_mc = scaled(th.hysteresis_c(), 1e3);
    p.window_cycles = th.window_cycles();
    p.where = where;
    t.thermal = p;
  }
  return t;
}

const OperatingPoint* EnergyTable::point(std::string_view point_name) const {
  for (const auto& p : points)
    if (p.name == point_name) return &p;
  return nullptr;
}

Result<EnergyTable> load_energy_table(const std::string& path,
                                      const std::vector<std::string>& known) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot open energy table"};
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Error{path + ": cannot read energy table"};
  return parse_energy_table(ss.str(), path, known);
}

Result<EnergyTable> default_energy_table(const std::vector<std::string>& known) {
  return parse_energy_table(detail::kDefaultTableText, "<builtin npu_45nm>", known);
}

}  // namespace bud::power
