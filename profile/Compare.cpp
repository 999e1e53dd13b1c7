#include "profile/Compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "profile/RecordedRun.h"
#include "profile/Report.h"

namespace bud::profile {

namespace {

using json::Json;
using workload::Error;

// Reads fields of a profile object, keeping the first error (file and JSON path at fault).
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

  const Json* field(const Json& obj, const std::string& path, const std::string& key,
                    const char* expected) {
    if (!ok()) return nullptr;
    if (!obj.is_object()) return fail(path, std::string("is not an object"));
    auto it = obj.find(key);
    if (it == obj.end()) return fail(path + "." + key, std::string("missing"));
    const Json& v = *it;
    const std::string what(expected);
    const bool right = what == "object"   ? v.is_object()
                       : what == "array"  ? v.is_array()
                       : what == "string" ? v.is_string()
                       : what == "number" ? v.is_number()
                                          : v.is_number_unsigned() ||
                                                (v.is_number_integer() && v.get<int64_t>() >= 0);
    if (!right)
      return fail(path + "." + key, "is " + std::string(v.type_name()) + ", expected " + what);
    return &v;
  }
  uint64_t u64(const Json& obj, const std::string& path, const std::string& key) {
    const Json* v = field(obj, path, key, "unsigned integer");
    return v ? v->get<uint64_t>() : 0;
  }
  double number(const Json& obj, const std::string& path, const std::string& key) {
    const Json* v = field(obj, path, key, "number");
    return v ? v->get<double>() : 0;
  }
  std::string str(const Json& obj, const std::string& path, const std::string& key) {
    const Json* v = field(obj, path, key, "string");
    return v ? v->get<std::string>() : std::string();
  }
  std::nullptr_t fail(const std::string& path, const std::string& why) {
    if (ok()) error_ = file_ + ": " + path + ": " + why;
    return nullptr;
  }

 private:
  std::string file_;
  std::string error_;
};

ScopeMetrics read_scope(Reader& r, const Json& j, const std::string& path, bool layer) {
  ScopeMetrics m;
  m.name = r.str(j, path, "name");
  m.kind = r.str(j, path, "kind");
  m.layers = static_cast<int>(r.u64(j, path, "layers"));
  m.cycles = r.u64(j, path, "cycles");
  if (layer) {
    m.first_dispatch = r.u64(j, path, "first_dispatch");
    m.last_retire = r.u64(j, path, "last_retire");
  }
  m.macs_useful = r.u64(j, path, "macs_useful");
  m.macs_issued = r.u64(j, path, "macs_issued");
  m.dram_rd_bytes = r.u64(j, path, "dram_rd_bytes");
  m.dram_wr_bytes = r.u64(j, path, "dram_wr_bytes");
  m.peak_fraction = r.number(j, path, "peak_fraction");
  m.model_mac_fraction = r.number(j, path, "model_mac_fraction");
  m.bandwidth = r.number(j, path, "bandwidth_bytes_per_cycle");
  m.intensity = r.number(j, path, "arithmetic_intensity");
  m.memory_stall_fraction = r.number(j, path, "memory_stall_fraction");
  if (const Json* ec = r.field(j, path, "engine_cycles", "object")) {
    for (int e = 0; e < isa::kNumEngines; ++e) {
      const std::string engine(isa::kEngineNames[e]);
      const std::string epath = path + ".engine_cycles";
      if (const Json* ej = r.field(*ec, epath, engine, "object"))
        for (int c = 0; c < isa::kNumClasses; ++c)
          m.engine[e][c] = r.u64(*ej, epath + "." + engine, std::string(isa::kClassNames[c]));
    }
  }
  const std::string tpath = path + ".topdown";
  if (const Json* td = r.field(j, path, "topdown", "object")) {
    m.topdown.slots = r.u64(*td, tpath, "slots");
    if (const Json* classes = r.field(*td, tpath, "classes", "object")) {
      for (int c = 0; c < kNumTopClasses; ++c) {
        const std::string name = top_class_name(static_cast<TopClass>(c));
        const std::string cpath = tpath + ".classes." + name;
        const Json* cj = r.field(*classes, tpath + ".classes", name, "object");
        const Json* subs = cj ? r.field(*cj, cpath, "sub", "object") : nullptr;
        if (!subs) break;
        for (int s = 0; s < kNumSubClasses; ++s)
          if (parent_of(static_cast<SubClass>(s)) == static_cast<TopClass>(c))
            m.topdown.sub[s] =
                r.u64(*subs, cpath + ".sub", sub_class_name(static_cast<SubClass>(s)));
      }
    }
    uint64_t sum = 0;
    for (auto v : m.topdown.sub) sum += v;
    if (r.ok() && sum != m.topdown.slots)
      r.fail(tpath, "sub-classes sum to " + std::to_string(sum) + " slots, not the scope's " +
                        std::to_string(m.topdown.slots));
  }
  return m;
}

double relative(double base, double next) { return (next - base) / std::max(base, 1.0); }

Delta relative_delta(double base, double next) { return {base, next, relative(base, next)}; }

std::array<int32_t, kNumTopClasses> shares(const TopDown& t) {
  std::array<int32_t, kNumTopClasses> out{};
  const auto bp = t.basis_points();
  for (int c = 0; c < kNumTopClasses; ++c) out[c] = static_cast<int32_t>(bp[c]);
  return out;
}

double sub_share(const TopDown& t, int s) {
  return t.slots ? 10000.0 * static_cast<double>(t.sub[s]) / static_cast<double>(t.slots) : 0;
}

// The class (not useful) whose share moved most in the direction of `sign` (+1 slower, -1
// faster), its sub-class that moved most, the triage rule and its evidence in both scopes.
CompareDivergence explain(const ScopeMetrics& b, const ScopeMetrics& n, uint32_t base_macs,
                          uint32_t next_macs, int sign) {
  CompareDivergence d;
  const auto bb = shares(b.topdown), nb = shares(n.topdown);
  int best = 1;
  for (int c = 2; c < kNumTopClasses; ++c)
    if (sign * (nb[c] - bb[c]) > sign * (nb[best] - bb[best])) best = c;
  d.mechanism = static_cast<TopClass>(best);
  d.share_change_bp = nb[best] - bb[best];
  const auto cycles = [](const TopDown& t, TopClass c, uint32_t m) {
    return m ? static_cast<int64_t>(t.top(c) / m) : 0;
  };
  d.class_cycles_change =
      cycles(n.topdown, d.mechanism, next_macs) - cycles(b.topdown, d.mechanism, base_macs);
  double best_sub = 0;
  bool first = true;
  for (int s = 0; s < kNumSubClasses; ++s) {
    if (parent_of(static_cast<SubClass>(s)) != d.mechanism) continue;
    const double moved = sign * (sub_share(n.topdown, s) - sub_share(b.topdown, s));
    if (first || moved > best_sub) {
      best_sub = moved;
      d.mechanism_sub = static_cast<SubClass>(s);
      first = false;
    }
  }
  const auto rule = triage_rule(d.mechanism, d.mechanism_sub);
  d.rule = rule.rule;
  d.advice = rule.advice;
  for (const auto& name : rule.evidence)
    d.evidence.push_back({name, evidence_value(b, name), evidence_value(n, name)});
  return d;
}

Json delta_json(const Delta& d) {
  Json j;
  j["base"] = d.base;
  j["new"] = d.next;
  j["change"] = d.change;
  return j;
}

Json input_json(const ProfileInput& in) {
  Json j;
  j["file"] = in.file;
  j["workload"] = in.workload;
  j["model_revision"] = in.model_revision;
  j["seed"] = in.seed;
  j["mem_seed"] = in.mem_seed;
  j["cycles"] = in.profile.cycles;
  j["array_macs"] = in.profile.array_macs;
  return j;
}

}  // namespace

const char* divergence_kind_name(CompareDivergence::Kind k) {
  switch (k) {
    case CompareDivergence::Kind::Layer:
      return "layer";
    case CompareDivergence::Kind::Accumulated:
      return "accumulated";
    case CompareDivergence::Kind::Tail:
      return "tail";
  }
  return "?";
}

workload::Result<ProfileInput> read_profile_json(const Json& j, const std::string& file) {
  ProfileInput in;
  in.file = file;
  Reader r(file);
  if (j.is_object() && j.contains("error") && !j.contains("profile")) {
    const auto m = j.find("message");
    return Error{file + ": an error report, not a profile: " +
                 (m != j.end() && m->is_string() ? m->get<std::string>() : j.dump())};
  }
  if (!j.is_object())
    return Error{file + ": $: is " + std::string(j.type_name()) +
                 ", expected the object of `bud profile --json`"};
  if (const Json* run = r.field(j, "$", "run", "object")) {
    in.workload = r.str(*run, "$.run", "workload");
    in.model_revision = r.str(*run, "$.run", "model_revision");
    in.seed = r.u64(*run, "$.run", "seed");
    in.mem_seed = r.u64(*run, "$.run", "mem_seed");
  }
  const Json* prof = r.field(j, "$", "profile", "object");
  if (prof) {
    Profile& p = in.profile;
    p.array_macs = static_cast<uint32_t>(r.u64(*prof, "$.profile", "array_macs"));
    if (r.ok() && p.array_macs == 0) r.fail("$.profile.array_macs", "is 0");
    p.cycles = r.u64(*prof, "$.profile", "cycles");
    if (const Json* layers = r.field(*prof, "$.profile", "layers", "array")) {
      if (r.ok() && layers->empty()) r.fail("$.profile.layers", "is empty");
      for (size_t i = 0; i < layers->size() && r.ok(); ++i)
        p.layers.push_back(
            read_scope(r, (*layers)[i], "$.profile.layers[" + std::to_string(i) + "]", true));
    }
    if (const Json* tail = r.field(*prof, "$.profile", "tail", "object"))
      p.tail = read_scope(r, *tail, "$.profile.tail", false);
    if (const Json* model = r.field(*prof, "$.profile", "model", "object"))
      p.model = read_scope(r, *model, "$.profile.model", false);
  }
  // Energy and thermal figures are optional (--no-energy, no --thermal), but whole when present.
  if (prof && prof->contains("energy") && !(*prof)["energy"].is_null()) {
    const Json* e = r.field(*prof, "$.profile", "energy", "object");
    const Json* run = e ? r.field(*e, "$.profile.energy", "run", "object") : nullptr;
    const Json* table = e ? r.field(*e, "$.profile.energy", "table", "object") : nullptr;
    if (run && table) {
      RunEnergy en;
      const std::string rp = "$.profile.energy.run", tp = "$.profile.energy.table";
      en.total_fj = r.u64(*run, rp, "total_fj");
      en.seconds = r.number(*run, rp, "seconds");
      en.watts = r.number(*run, rp, "watts");
      en.tops_per_watt = r.number(*run, rp, "tops_per_watt");
      en.inferences_per_joule = r.number(*run, rp, "inferences_per_joule");
      en.table = r.str(*table, tp, "name");
      en.frequency_mhz = r.number(*table, tp, "frequency_mhz");
      en.voltage = r.number(*table, tp, "voltage");
      in.energy = en;
    }
  }
  if (prof && prof->contains("thermal") && !(*prof)["thermal"].is_null()) {
    if (const Json* t = r.field(*prof, "$.profile", "thermal", "object")) {
      RunThermal th;
      const std::string tp = "$.profile.thermal";
      th.nominal_cycles = r.u64(*t, tp, "nominal_cycles");
      th.sustained_cycles = r.u64(*t, tp, "sustained_cycles");
      th.clamp_events = r.u64(*t, tp, "clamp_events");
      th.clamped_cycles = r.u64(*t, tp, "clamped_cycles");
      th.clamped_fraction = r.number(*t, tp, "clamped_fraction");
      th.peak_c = r.number(*t, tp, "peak_mc") / 1000.0;
      in.thermal = th;
    }
  }
  if (prof && prof->contains("conditions") && (*prof)["conditions"].is_object())
    in.conditions = read_conditions((*prof)["conditions"]);
  // The roofline's memory split is optional (a profile written before bud recorded it).
  if (prof && prof->contains("roofline") && (*prof)["roofline"].is_object()) {
    const Json& rl = (*prof)["roofline"];
    if (rl.contains("layers") && rl["layers"].is_array()) {
      for (const Json& l : rl["layers"]) {
        if (!l.is_object() || !l.contains("latency_cycles") || !l.contains("bandwidth_cycles") ||
            !l["latency_cycles"].is_number_unsigned() || !l["bandwidth_cycles"].is_number_unsigned()) {
          in.roofline.clear();
          break;
        }
        LayerProjection lp;
        lp.latency_cycles = l["latency_cycles"].get<uint64_t>();
        lp.bandwidth_cycles = l["bandwidth_cycles"].get<uint64_t>();
        lp.memory_cycles = lp.latency_cycles + lp.bandwidth_cycles;
        in.roofline.push_back(lp);
      }
      if (in.roofline.size() != in.profile.layers.size()) in.roofline.clear();
    }
  }
  if (!r.ok()) return Error{r.error()};
  in.profile.ranking = rank_layers(in.profile.layers, in.profile.array_macs);
  annotate_bounds(in.profile.ranking, in.roofline);
  return in;
}

workload::Result<ProfileInput> read_profile_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Error{path + ": cannot read the file"};
  std::stringstream s;
  s << f.rdbuf();
  // nlohmann reports where the text stops being JSON only through its exception.
  Json j;
  try {
    j = Json::parse(s.str());
  } catch (const Json::parse_error& e) {
    return Error{path + ": not JSON (byte " + std::to_string(e.byte) + ")"};
  }
  return read_profile_json(j, path);
}

workload::Result<ProfileInput> read_profile_input(const std::string& path) {
  if (!is_packet_file(path)) return read_profile_file(path);
  auto recorded = load_recorded_run(path);
  if (!recorded) return Error{recorded.error()};
  const auto profiled = run_recorded(*recorded);
  if (!profiled.attribution) return Error{path + ": " + profiled.error};
  ProfileInput in;
  in.file = path;
  const run::RunReport& r = profiled.report;
  in.workload = r.workload;
  in.model_revision = r.model_revision;
  in.seed = r.seed;
  in.mem_seed = r.mem_seed;
  in.profile = build_profile(*profiled.attribution, recorded->prepared.program, r);
  // The packet records the options it ran with, not the energy table's clock.
  in.conditions = run_conditions(recorded->options, r, 0);
  in.roofline = project(recorded->prepared.workload, recorded->prepared.program,
                        recorded->options.emulator, in.profile)
                    .layers;
  annotate_bounds(in.profile.ranking, in.roofline);
  return in;
}

std::string check_comparable(const ProfileInput& base, const ProfileInput& next) {
  const std::string both = base.file + " and " + next.file;
  if (base.workload != next.workload)
    return both + " profile different workloads: " + base.workload + " and " + next.workload;
  const auto& bl = base.profile.layers;
  const auto& nl = next.profile.layers;
  if (bl.size() != nl.size())
    return both + " profile workload " + base.workload +
           " with different layers: " + std::to_string(bl.size()) + " and " +
           std::to_string(nl.size());
  for (size_t i = 0; i < bl.size(); ++i)
    if (bl[i].name != nl[i].name || bl[i].kind != nl[i].kind)
      return both + " profile different layers: layer " + std::to_string(i) + " is " + bl[i].name +
             " (" + bl[i].kind + ") in " + base.file + ", " + nl[i].name + " (" + nl[i].kind +
             ") in " + next.file;
  return {};
}

Comparison compare(const Profile& base, const Profile& next, double tolerance) {
  Comparison c;
  c.tolerance = tolerance;
  c.cycles = relative_delta(static_cast<double>(base.cycles), static_cast<double>(next.cycles));
  const size_t n = std::min(base.layers.size(), next.layers.size());
  for (size_t i = 0; i < n; ++i) {
    const auto& b = base.layers[i];
    const auto& x = next.layers[i];
    LayerDelta d;
    d.name = b.name;
    d.kind = b.kind;
    d.cycles = relative_delta(static_cast<double>(b.cycles), static_cast<double>(x.cycles));
    d.end = relative_delta(static_cast<double>(b.last_retire), static_cast<double>(x.last_retire));
    d.peak = {b.peak_fraction, x.peak_fraction, x.peak_fraction - b.peak_fraction};
    d.bandwidth = relative_delta(b.bandwidth, x.bandwidth);
    d.base_bp = shares(b.topdown);
    d.next_bp = shares(x.topdown);
    d.diverges = std::abs(d.cycles.change) > tolerance;
    c.layers.push_back(d);
  }
  if (std::abs(c.cycles.change) <= tolerance) return c;
  // The run is beyond the tolerance: find the first layer from which it stays so.
  const int sign = c.cycles.change > 0 ? 1 : -1;
  const auto beyond = [&](double change) { return sign * change > tolerance; };
  std::vector<bool> stays(n + 1, true);  // stays[i]: every layer's end from i on is beyond
  for (size_t i = n; i-- > 0;) stays[i] = stays[i + 1] && beyond(c.layers[i].end.change);
  std::optional<size_t> at;
  auto kind = CompareDivergence::Kind::Layer;
  for (size_t i = 0; i < n && !at; ++i)
    if (stays[i] && beyond(c.layers[i].cycles.change)) at = i;
  if (!at) {
    kind = CompareDivergence::Kind::Accumulated;
    for (size_t i = 0; i < n && !at; ++i)
      if (stays[i]) at = i;
  }
  CompareDivergence d;
  if (at) {
    // Explained in the run's direction (for `layer`, also the layer's own).
    d = explain(base.layers[*at], next.layers[*at], base.array_macs, next.array_macs, sign);
    d.kind = kind;
    d.layer = static_cast<int>(*at);
    d.scope = base.layers[*at].name;
    d.cycles_change = c.layers[*at].cycles.change;
  } else {
    d = explain(base.tail, next.tail, base.array_macs, next.array_macs, sign);
    d.kind = CompareDivergence::Kind::Tail;
    d.scope = "tail";
    d.cycles_change = c.cycles.change;
  }
  c.divergence = std::move(d);
  return c;
}

namespace {

// The order a differing condition is named as the cause in (docs/profiling.md, "Run
// conditions"): what changes the machine first, then what the operating point derives (DRAM
// timing in cycles), then the injected faults.
constexpr const char* kCausePriority[] = {
    "design",          "array",
    "operating_point", "clock_mhz",
    "thermal",         "throttle",
    "precision",       "tile_max_rows",
    "tile_max_blocks", "dram_bytes_per_cycle",
    "dram_base_latency_cycles", "dram_jitter_cycles",
    "dram_max_outstanding",     "dram_reorder",
    "dram_bursty",     "faults"};

size_t cause_rank(const std::string& name) {
  size_t i = 0;
  for (const char* n : kCausePriority) {
    if (name == n) return i;
    ++i;
  }
  return i;
}

}  // namespace

Comparison compare(const ProfileInput& base, const ProfileInput& next, double tolerance) {
  Comparison c = compare(base.profile, next.profile, tolerance);
  if (base.conditions && next.conditions) {
    c.conditions_known = true;
    c.conditions = changed_conditions(*base.conditions, *next.conditions);
  }
  if (!c.divergence) return c;
  auto& d = *c.divergence;
  if (!c.conditions.empty()) {
    const auto lead = std::min_element(
        c.conditions.begin(), c.conditions.end(),
        [](const ConditionChange& a, const ConditionChange& b) {
          return cause_rank(a.name) < cause_rank(b.name);
        });
    d.cause = *lead;
    d.cause_effect = condition_effect(*lead);
  }
  // Within memory, the roofline tells a longer wait from a slower transfer.
  if (d.layer >= 0 && static_cast<size_t>(d.layer) < base.roofline.size() &&
      static_cast<size_t>(d.layer) < next.roofline.size()) {
    const auto& b = base.roofline[static_cast<size_t>(d.layer)];
    const auto& n = next.roofline[static_cast<size_t>(d.layer)];
    d.memory_split = true;
    d.latency_cycles_change =
        static_cast<int64_t>(n.latency_cycles) - static_cast<int64_t>(b.latency_cycles);
    d.bandwidth_cycles_change =
        static_cast<int64_t>(n.bandwidth_cycles) - static_cast<int64_t>(b.bandwidth_cycles);
    if (d.mechanism == TopClass::Memory &&
        (d.mechanism_sub == SubClass::DramWait || d.mechanism_sub == SubClass::LoadTransfer)) {
      const int sign = c.cycles.change > 0 ? 1 : -1;
      const SubClass sub = sign * d.bandwidth_cycles_change > sign * d.latency_cycles_change
                               ? SubClass::LoadTransfer
                               : SubClass::DramWait;
      if (sub != d.mechanism_sub) {
        d.mechanism_sub = sub;
        const auto rule = triage_rule(d.mechanism, sub);
        d.rule = rule.rule;
        d.advice = rule.advice;
      }
    }
  }
  return c;
}

Json comparison_json(const Comparison& c, const ProfileInput& base, const ProfileInput& next) {
  Json j;
  j["base"] = input_json(base);
  j["new"] = input_json(next);
  j["tolerance"] = c.tolerance;
  j["cycles"] = delta_json(c.cycles);
  Json layers = Json::array();
  for (const auto& l : c.layers) {
    Json lj;
    lj["name"] = l.name;
    lj["kind"] = l.kind;
    lj["cycles"] = delta_json(l.cycles);
    lj["end"] = delta_json(l.end);
    lj["peak_fraction"] = delta_json(l.peak);
    lj["bandwidth_bytes_per_cycle"] = delta_json(l.bandwidth);
    Json td = Json::object();
    for (int k = 0; k < kNumTopClasses; ++k) {
      Json cj;
      cj["base"] = l.base_bp[k];
      cj["new"] = l.next_bp[k];
      cj["change"] = l.next_bp[k] - l.base_bp[k];
      td[top_class_name(static_cast<TopClass>(k))] = cj;
    }
    lj["topdown_basis_points"] = td;
    lj["diverges"] = l.diverges;
    layers.push_back(lj);
  }
  j["layers"] = layers;
  if (c.divergence) {
    const auto& d = *c.divergence;
    Json dj;
    dj["kind"] = divergence_kind_name(d.kind);
    dj["layer"] = d.scope;
    dj["cycles_change"] = d.cycles_change;
    dj["mechanism"] = top_class_name(d.mechanism);
    dj["mechanism_sub"] = sub_class_name(d.mechanism_sub);
    dj["share_change_basis_points"] = d.share_change_bp;
    dj["class_cycles_change"] = d.class_cycles_change;
    dj["rule"] = d.rule;
    dj["advice"] = d.advice;
    if (d.cause)
      dj["cause"] = Json{{"condition", d.cause->name},
                         {"base", d.cause->base},
                         {"new", d.cause->next},
                         {"effect", d.cause_effect}};
    else
      dj["cause"] = nullptr;
    if (d.memory_split)
      dj["memory_split"] = Json{{"latency_cycles_change", d.latency_cycles_change},
                                {"bandwidth_cycles_change", d.bandwidth_cycles_change}};
    Json ev = Json::object();
    for (const auto& e : d.evidence) {
      Json ej;
      ej["base"] = e.base;
      ej["new"] = e.next;
      ev[e.counter] = ej;
    }
    dj["evidence"] = ev;
    j["divergence"] = dj;
  } else {
    j["divergence"] = nullptr;
  }
  if (c.conditions_known) {
    Json conds = Json::array();
    for (const auto& x : c.conditions)
      conds.push_back(Json{{"condition", x.name}, {"base", x.base}, {"new", x.next}});
    j["conditions"] = conds;
  } else {
    j["conditions"] = nullptr;
  }
  Json ranking;
  ranking["before"] = ranking_json(base.profile);
  ranking["after"] = ranking_json(next.profile);
  j["ranking"] = ranking;
  return j;
}

std::string comparison_text(const Comparison& c, const ProfileInput& base,
                            const ProfileInput& next) {
  std::ostringstream o;
  char buf[512];
  o << "compare    " << base.workload << ": " << base.file << " (" << grouped(base.profile.cycles)
    << " cycles) -> " << next.file << " (" << grouped(next.profile.cycles) << " cycles), "
    << fmt("%+.1f%%", 100 * c.cycles.change) << " (tolerance " << fmt("%.1f%%", 100 * c.tolerance)
    << ")\n";
  if (!c.conditions_known) {
    o << "conditions not recorded in " << (base.conditions ? next.file : base.file)
      << ": the run conditions could not be tested\n";
  } else if (c.conditions.empty()) {
    o << "conditions the same (design, array, operating point, DRAM, throttle, thermal, "
         "precision, tiles, faults)\n";
  } else {
    o << "conditions differ:\n";
    for (const auto& x : c.conditions)
      o << "  " << x.name << " " << x.base << " -> " << x.next << "\n";
  }
  o << "\nper layer (cycles: span; end: last retirement on the run's clock)\n";
  std::snprintf(buf, sizeof buf, "  %-12s %-7s %10s %10s %8s %8s %15s %15s\n", "name", "kind",
                "base", "new", "change", "end", "%peak", "B/cycle");
  o << buf;
  for (const auto& l : c.layers) {
    std::snprintf(buf, sizeof buf,
                  "  %-12s %-7s %10s %10s %+7.1f%% %+7.1f%% %6.1f -> %5.1f %6.2f -> %5.2f%s\n",
                  l.name.c_str(), l.kind.c_str(),
                  grouped(static_cast<uint64_t>(l.cycles.base)).c_str(),
                  grouped(static_cast<uint64_t>(l.cycles.next)).c_str(), 100 * l.cycles.change,
                  100 * l.end.change, 100 * l.peak.base, 100 * l.peak.next, l.bandwidth.base,
                  l.bandwidth.next, l.diverges ? "  *" : "");
    o << buf;
  }
  o << "\ntop-down share change per layer (percentage points of the layer's MAC slots)\n";
  std::snprintf(buf, sizeof buf, "  %-12s", "layer");
  o << buf;
  for (int k = 0; k < kNumTopClasses; ++k) {
    std::snprintf(buf, sizeof buf, " %9.9s", top_class_name(static_cast<TopClass>(k)));
    o << buf;
  }
  o << "\n";
  for (const auto& l : c.layers) {
    std::snprintf(buf, sizeof buf, "  %-12s", l.name.c_str());
    o << buf;
    for (int k = 0; k < kNumTopClasses; ++k) {
      std::snprintf(buf, sizeof buf, " %+9.2f", (l.next_bp[k] - l.base_bp[k]) / 100.0);
      o << buf;
    }
    o << "\n";
  }
  o << "\n";
  if (!c.divergence) {
    o << "divergence none: the run is within the tolerance\n";
  } else {
    const auto& d = *c.divergence;
    switch (d.kind) {
      case CompareDivergence::Kind::Layer:
        o << "divergence first persistent at layer " << d.scope << ": its cycles "
          << fmt("%+.1f%%", 100 * d.cycles_change)
          << ", and the run's clock stays beyond the tolerance from its end on\n";
        break;
      case CompareDivergence::Kind::Accumulated:
        o << "divergence accumulated: no layer alone beyond the tolerance; the run's clock stays "
             "beyond it from the end of layer "
          << d.scope << " (its cycles " << fmt("%+.1f%%", 100 * d.cycles_change) << ")\n";
        break;
      case CompareDivergence::Kind::Tail:
        o << "divergence after the last layer (tail): the run "
          << fmt("%+.1f%%", 100 * d.cycles_change) << "\n";
        break;
    }
    if (d.cause)
      o << "cause      run condition " << d.cause->name << " " << d.cause->base << " -> "
        << d.cause->next << ": " << d.cause_effect << "\n";
    o << (d.cause ? "moved      " : "mechanism  ") << top_class_name(d.mechanism) << " / "
      << sub_class_name(d.mechanism_sub)
      << ": share " << fmt("%+.2f", d.share_change_bp / 100.0) << " points, "
      << (d.class_cycles_change >= 0 ? "+" : "-")
      << grouped(static_cast<uint64_t>(std::llabs(d.class_cycles_change))) << " cycles  [" << d.rule
      << "]\n";
    if (d.memory_split && d.mechanism == TopClass::Memory)
      o << "           roofline: latency-bound time " << fmt("%+.0f", double(d.latency_cycles_change))
        << " cycles, bandwidth-bound time " << fmt("%+.0f", double(d.bandwidth_cycles_change))
        << " cycles\n";
    o << "           " << d.advice << "\n";
    if (!d.evidence.empty()) {
      o << "evidence  ";
      for (size_t i = 0; i < d.evidence.size(); ++i)
        o << (i ? ", " : " ") << d.evidence[i].counter << " " << grouped(d.evidence[i].base)
          << " -> " << grouped(d.evidence[i].next);
      o << "\n";
    }
  }
  o << "\nbottlenecks before\n" << ranking_text(base.profile, false);
  o << "\nbottlenecks after\n" << ranking_text(next.profile, false);
  return o.str();
}

}  // namespace bud::profile
