#include "profile/Energy.h"

#include <cstdio>
#include <optional>
#include <sstream>

#include "profile/Report.h"

namespace bud::profile {

namespace {

using isa::Engine;

// The engine whose action a counter counts (docs/power.md "Attribution"): static engine-cycles
// their engine; MACs and compute's scratchpad accesses gemm (POST's ACC reads included: gemm and
// post share the compute engine); OUT writes post; INP/WGT writes and DRAM reads load (fetch's
// ring reads included: the two share the read port); OUT reads and DRAM writes store; retirements
// the engine that retires (SYNC, END: fetch). DRAM background and host accesses: none.
std::optional<Engine> action_engine(std::string_view c) {
  for (int e = 0; e < isa::kNumEngines; ++e) {
    const auto name = isa::kEngineNames[e];
    if (c.size() > name.size() && c.substr(0, name.size()) == name && c[name.size()] == '.')
      return static_cast<Engine>(e);
  }
  if (c == "macs_issued" || c == "macs_issued_bf16" || c == "spad_inp_rd" || c == "spad_wgt_rd" || c == "spad_acc_rd" ||
      c == "spad_acc_wr" || c == "retired_gemm")
    return Engine::Gemm;
  if (c == "spad_out_wr" || c == "retired_post") return Engine::Post;
  if (c == "spad_inp_wr" || c == "spad_wgt_wr" || c == "dram_rd_bytes" || c == "retired_load")
    return Engine::Load;
  if (c == "spad_out_rd" || c == "dram_wr_bytes" || c == "retired_store") return Engine::Store;
  if (c == "retired_sync" || c == "retired_end") return Engine::Fetch;
  return std::nullopt;
}

// The scratchpad buffer a "spad_<buf>_{rd,wr}" counter counts.
std::optional<int> action_buffer(std::string_view c) {
  for (int b = 0; b < isa::kNumBuffers; ++b)
    if (c.size() == 11 && c.substr(0, 5) == "spad_" && c.substr(5, 3) == isa::kBufferNames[b])
      return b;
  return std::nullopt;
}

// Prices `s.counts` with `table` into the scope's sums. Counts are at most the run's, whose
// products and sums power::account() has checked for overflow.
void price(ScopeEnergy& s, const power::EnergyTable& table) {
  for (size_t i = 0; i < table.actions.size(); ++i) {
    const auto& a = table.actions[i];
    const uint64_t fj = s.counts[i] * a.fj;
    s.total_fj += fj;
    s.by_component[static_cast<size_t>(a.component)] += fj;
    if (auto e = action_engine(a.counter))
      s.by_engine[static_cast<size_t>(*e)] += fj;
    else
      s.no_engine_fj += fj;
    if (auto b = action_buffer(a.counter)) s.by_buffer[static_cast<size_t>(*b)] += fj;
  }
  power::EnergyAccount acc;
  acc.total_fj = s.total_fj;
  s.figures = power::figures(acc, table, s.cycles, s.macs_useful);
}

json::Json scope_energy_json(const ScopeEnergy& s, const power::EnergyTable& table) {
  json::Json j;
  j["name"] = s.name;
  j["total_fj"] = s.total_fj;
  j["cycles"] = s.cycles;
  j["seconds"] = s.figures.seconds;
  j["watts"] = s.figures.watts;
  j["tops_per_watt"] = s.figures.tops_per_watt;
  j["inferences_per_joule"] = s.figures.inferences_per_joule;
  json::Json comp = json::Json::object();
  for (int c = 0; c < power::kNumComponents; ++c)
    comp[power::component_name(static_cast<power::Component>(c))] = s.by_component[c];
  j["components_fj"] = comp;
  json::Json eng = json::Json::object();
  for (int e = 0; e < isa::kNumEngines; ++e)
    eng[std::string(isa::kEngineNames[e])] = s.by_engine[e];
  eng["none"] = s.no_engine_fj;
  j["engines_fj"] = eng;
  json::Json buf = json::Json::object();
  for (int b = 0; b < isa::kNumBuffers; ++b)
    buf[std::string(isa::kBufferNames[b])] = s.by_buffer[b];
  j["buffers_fj"] = buf;
  json::Json counts = json::Json::object();
  for (size_t i = 0; i < table.actions.size(); ++i) counts[table.actions[i].counter] = s.counts[i];
  j["counts"] = counts;
  return j;
}

}  // namespace

uint64_t scope_count(const ScopeMetrics& m, std::string_view c) {
  if (c == "cycles") return m.engine_cycles(Engine::Gemm);
  if (c == "macs_issued") return m.macs_issued;
  if (c == "macs_issued_bf16") return m.macs_issued_bf16;
  if (c == "macs_useful") return m.macs_useful;
  if (c == "dram_rd_bytes") return m.dram_rd_bytes;
  if (c == "dram_wr_bytes") return m.dram_wr_bytes;
  static constexpr std::array<std::string_view, 8> kSpad = {
      "spad_inp_rd", "spad_inp_wr", "spad_wgt_rd", "spad_wgt_wr",
      "spad_acc_rd", "spad_acc_wr", "spad_out_rd", "spad_out_wr"};
  static constexpr std::array<std::string_view, 6> kRetired = {"retired_load", "retired_gemm",
                                                               "retired_post", "retired_store",
                                                               "retired_sync", "retired_end"};
  for (size_t i = 0; i < kSpad.size(); ++i)
    if (c == kSpad[i]) return m.spad[i];
  for (size_t i = 0; i < kRetired.size(); ++i)
    if (c == kRetired[i]) return m.retired[i];
  return evidence_value(m, c);  // "<engine>.<class>", else 0
}

power::Result<EnergyProfile> energy_profile(const Profile& p, const power::EnergyTable& table,
                                            const std::vector<std::string>& names,
                                            const std::vector<uint64_t>& values) {
  auto account = power::account(table, names, values);
  if (!account) return power::Error{account.error()};
  EnergyProfile e;
  e.table = table;
  e.unpriced = account->unpriced;
  const size_t n = table.actions.size();
  e.run.name = "run";
  e.run.cycles = p.cycles;
  e.run.macs_useful = p.model.macs_useful;
  e.run.counts.resize(n);
  for (const auto& line : account->lines) e.run.counts[line.action] = line.count;
  price(e.run, table);
  // Layers take their attributed counts; should a count exceed what is left of the run's (a
  // failed run's commands may request more than the memory accepted), the later layers get
  // only what is left, so that layers + rest stays the run's count.
  std::vector<uint64_t> left = e.run.counts;
  for (const auto& m : p.layers) {
    ScopeEnergy s;
    s.name = m.name;
    s.cycles = m.cycles;
    s.macs_useful = m.macs_useful;
    s.counts.resize(n);
    for (size_t i = 0; i < n; ++i) {
      s.counts[i] = std::min(left[i], scope_count(m, table.actions[i].counter));
      left[i] -= s.counts[i];
    }
    price(s, table);
    e.layers.push_back(std::move(s));
  }
  // The rest's time: the run's cycles the layers' spans leave.
  uint64_t spans = 0;
  for (const auto& l : e.layers) spans += l.cycles;
  e.rest.name = "rest";
  e.rest.counts = left;
  e.rest.cycles = p.cycles > spans ? p.cycles - spans : 0;
  e.rest.macs_useful = p.tail.macs_useful;
  price(e.rest, table);
  return e;
}

double ThermalFigures::nominal_per_second() const {
  return nominal_cycles ? frequency_mhz * 1e6 / static_cast<double>(nominal_cycles) : 0;
}
double ThermalFigures::sustained_per_second() const {
  return sustained_cycles ? frequency_mhz * 1e6 / static_cast<double>(sustained_cycles) : 0;
}
double ThermalFigures::clamped_fraction() const {
  return sustained_cycles ? static_cast<double>(clamped_cycles) / sustained_cycles : 0;
}

json::Json thermal_json(const ThermalFigures& t) {
  json::Json j;
  j["nominal_cycles"] = t.nominal_cycles;
  j["sustained_cycles"] = t.sustained_cycles;
  j["frequency_mhz"] = t.frequency_mhz;
  j["nominal_inferences_per_second"] = t.nominal_per_second();
  j["sustained_inferences_per_second"] = t.sustained_per_second();
  j["peak_mc"] = t.peak_mc;
  j["end_mc"] = t.end_mc;
  j["clamp_events"] = t.clamp_events;
  j["clamped_cycles"] = t.clamped_cycles;
  j["clamped_fraction"] = t.clamped_fraction();
  return j;
}

std::string thermal_text(const ThermalFigures& t) {
  char buf[512];
  const double loss = t.nominal_per_second() > 0
                          ? 100.0 * (1.0 - t.sustained_per_second() / t.nominal_per_second())
                          : 0.0;
  std::snprintf(buf, sizeof buf,
                "\nthermal (lumped RC model, docs/power.md)\n"
                "  nominal    %s cycles, %.0f inferences/s (without the thermal model)\n"
                "  sustained  %s cycles, %.0f inferences/s (%.1f%% lost to the clamp)\n"
                "  clamp      %s event%s, %s cycles clamped (%.1f%% of the run); peak %.3f C, "
                "end %.3f C\n",
                grouped(t.nominal_cycles).c_str(), t.nominal_per_second(),
                grouped(t.sustained_cycles).c_str(), t.sustained_per_second(), loss,
                grouped(t.clamp_events).c_str(), t.clamp_events == 1 ? "" : "s",
                grouped(t.clamped_cycles).c_str(), 100.0 * t.clamped_fraction(), t.peak_mc / 1e3,
                t.end_mc / 1e3);
  return buf;
}

std::string joules_text(uint64_t fj) {
  const double j = static_cast<double>(fj) * 1e-15;
  if (j >= 1) return fmt("%.3f J", j);
  if (j >= 1e-3) return fmt("%.3f mJ", j * 1e3);
  if (j >= 1e-6) return fmt("%.3f uJ", j * 1e6);
  if (j >= 1e-9) return fmt("%.3f nJ", j * 1e9);
  return fmt("%.3f pJ", j * 1e12);
}

json::Json energy_json(const EnergyProfile& e) {
  json::Json j;
  json::Json t;
  t["file"] = e.table.file;
  t["name"] = e.table.name;
  t["version"] = e.table.version;
  t["technology"] = e.table.technology;
  t["voltage"] = e.table.voltage;
  t["frequency_mhz"] = e.table.frequency_mhz;
  json::Json fj = json::Json::object();
  for (const auto& a : e.table.actions) fj[a.counter] = a.fj;
  t["fj_per_count"] = fj;
  j["table"] = t;
  j["run"] = scope_energy_json(e.run, e.table);
  json::Json layers = json::Json::array();
  for (const auto& l : e.layers) layers.push_back(scope_energy_json(l, e.table));
  j["layers"] = layers;
  j["rest"] = scope_energy_json(e.rest, e.table);
  j["unpriced"] = e.unpriced;
  return j;
}

std::string energy_text(const EnergyProfile& e) {
  std::ostringstream o;
  char buf[512];
  const auto& t = e.table;
  o << "\nenergy (table " << t.name << " " << t.version << ", " << t.technology << ", "
    << fmt("%.3g V", t.voltage) << ", " << fmt("%.0f MHz", t.frequency_mhz)
    << "; approximate: docs/power.md)\n";
  std::snprintf(buf, sizeof buf, "  %-12s %14s %7s %10s %9s", "scope", "energy", "%run",
                "avg power", "TOPS/W");
  o << buf;
  for (int c = 0; c < power::kNumComponents; ++c) {
    std::snprintf(buf, sizeof buf, " %7.7s",
                  power::component_name(static_cast<power::Component>(c)));
    o << buf;
  }
  o << "\n";
  auto row = [&](const ScopeEnergy& s) {
    const double share = e.run.total_fj ? 100.0 * s.total_fj / e.run.total_fj : 0.0;
    std::snprintf(buf, sizeof buf, "  %-12s %14s %6.1f%% %8.1f mW %9.3f", s.name.c_str(),
                  joules_text(s.total_fj).c_str(), share, s.figures.watts * 1e3,
                  s.figures.tops_per_watt);
    o << buf;
    for (int c = 0; c < power::kNumComponents; ++c) {
      std::snprintf(buf, sizeof buf, " %6.1f%%",
                    s.total_fj ? 100.0 * s.by_component[c] / s.total_fj : 0.0);
      o << buf;
    }
    o << "\n";
  };
  for (const auto& l : e.layers) row(l);
  row(e.rest);
  row(e.run);
  o << "  per engine:";
  for (int i = 0; i < isa::kNumEngines; ++i)
    o << " " << isa::kEngineNames[i] << " " << joules_text(e.run.by_engine[i]) << ";";
  o << " none (DRAM background, host) " << joules_text(e.run.no_engine_fj) << "\n";
  o << "  per buffer:";
  for (int b = 0; b < isa::kNumBuffers; ++b)
    o << " " << isa::kBufferNames[b] << " " << joules_text(e.run.by_buffer[b])
      << (b + 1 < isa::kNumBuffers ? ";" : "\n");
  std::snprintf(
      buf, sizeof buf, "  run: %s in %s s, %.1f mW average, %.3f TOPS/W, %.0f inferences/J\n",
      joules_text(e.run.total_fj).c_str(), fmt("%.6g", e.run.figures.seconds).c_str(),
      e.run.figures.watts * 1e3, e.run.figures.tops_per_watt, e.run.figures.inferences_per_joule);
  o << buf;
  if (!e.unpriced.empty()) {
    o << "  not priced by the table (energy left out):";
    for (const auto& u : e.unpriced) o << " " << u;
    o << "\n";
  }
  return o.str();
}

}  // namespace bud::profile
