#include "profile/DvfsSweep.h"

#include <cstdio>
#include <sstream>

#include "power/Dvfs.h"
#include "power/EnergyAccount.h"
#include "power/ThermalSetup.h"
#include "profile/Energy.h"
#include "profile/Profiler.h"
#include "profile/Report.h"

namespace bud::profile {

DvfsSweep sweep_dvfs(const run::PreparedRun& prepared, const run::RunOptions& options,
                     const power::EnergyTable& table) {
  DvfsSweep s;
  s.scaled_dram = table.dram_timing.has_value();
  for (const auto& point : table.points) {
    DvfsPoint d;
    d.point = point;
    run::RunOptions o = options;
    if (table.dram_timing)
      o.emulator.dram = power::dram_at(o.emulator.dram, *table.dram_timing, point.frequency_mhz);
    d.dram = o.emulator.dram;
    const auto at = power::at_point(table, point);
    if (options.emulator.thermal.enabled) {
      // The thermal model at this point's clock and energies.
      std::vector<std::string> counters;
      for (int i = 0; i < isa::kNumCounters; ++i) counters.push_back(isa::counter_name(i));
      auto thermal = power::thermal_config(at, counters);
      if (!thermal) {
        s.error = "operating point '" + point.name + "': " + thermal.error();
        return s;
      }
      o.emulator.thermal = std::move(thermal).value();
    }
    auto profiled = run_profiled(prepared, o);
    if (!profiled.attribution) {
      s.error = "operating point '" + point.name + "': " + profiled.error;
      return s;
    }
    d.report = profiled.report;
    d.cycles = d.report.counter("cycles");
    auto names = d.report.counter_names;
    auto values = d.report.counters;
    names.emplace_back(power::kHostCsrAccess);
    values.push_back(profiled.host ? profiled.host->accesses() : 0);
    auto account = power::account(at, names, values);
    if (!account) {
      s.error = "operating point '" + point.name + "': " + account.error();
      return s;
    }
    d.energy_fj = account->total_fj;
    const auto f = power::figures(*account, at, d.cycles, d.report.counter("macs_useful"));
    d.seconds = f.seconds;
    d.watts = f.watts;
    d.inferences_per_joule = f.inferences_per_joule;
    d.tops_per_watt = f.tops_per_watt;
    d.inferences_per_second = f.seconds > 0 ? 1.0 / f.seconds : 0;
    s.points.push_back(std::move(d));
  }
  // Pareto: a point is not worth running when another is at least as fast and costs no more
  // energy per inference, one of the two strictly (the first such point in table order is named).
  for (auto& p : s.points) {
    for (const auto& q : s.points) {
      if (&p == &q) continue;
      const bool no_slower = q.seconds <= p.seconds, no_costlier = q.energy_fj <= p.energy_fj;
      if (!no_slower || !no_costlier || (q.seconds == p.seconds && q.energy_fj == p.energy_fj))
        continue;
      p.inefficient = "'" + q.point.name + "' is " +
                      (q.seconds < p.seconds ? "faster" : "as fast") + " and costs " +
                      (q.energy_fj < p.energy_fj ? "less" : "no more") + " energy per inference";
      break;
    }
  }
  return s;
}

json::Json dvfs_json(const DvfsSweep& s, const power::EnergyTable& table) {
  json::Json j;
  j["table"] = table.name + " " + table.version;
  j["scaled_dram"] = s.scaled_dram;
  json::Json points = json::Json::array();
  for (const auto& p : s.points) {
    json::Json pj;
    pj["name"] = p.point.name;
    pj["frequency_mhz"] = p.point.frequency_mhz;
    pj["voltage"] = p.point.voltage;
    pj["dram"] = json::Json{{"latency_cycles", p.dram.base_latency},
                            {"jitter_cycles", p.dram.jitter},
                            {"bytes_per_cycle", p.dram.bytes_per_cycle}};
    pj["passed"] = p.report.passed;
    pj["cycles"] = p.cycles;
    pj["seconds"] = p.seconds;
    pj["energy_fj"] = p.energy_fj;
    pj["watts"] = p.watts;
    pj["inferences_per_joule"] = p.inferences_per_joule;
    pj["tops_per_watt"] = p.tops_per_watt;
    pj["inferences_per_second"] = p.inferences_per_second;
    pj["inefficient"] = p.inefficient.empty() ? json::Json(nullptr) : json::Json(p.inefficient);
    if (p.report.thermal)
      pj["thermal"] = json::Json{{"peak_mc", p.report.thermal->peak_mc},
                                 {"clamp_events", p.report.thermal->clamp_events},
                                 {"clamped_cycles", p.report.thermal->clamped_cycles}};
    points.push_back(pj);
  }
  j["points"] = points;
  return j;
}

std::string dvfs_text(const DvfsSweep& s, const power::EnergyTable& table) {
  std::ostringstream o;
  char buf[512];
  o << "DVFS sweep (table " << table.name << " " << table.version << "; "
    << (s.scaled_dram ? "DRAM timing from the table's ns and GB/s at each clock"
                      : "the table has no dram_timing: DRAM timing stays in cycles")
    << ")\n";
  std::snprintf(buf, sizeof buf, "  %-10s %6s %6s %14s %10s %11s %12s %10s %10s %9s  %s\n", "point",
                "MHz", "V", "DRAM lat/B", "cycles", "time", "energy/inf", "power", "inf/J",
                "TOPS/W", "");
  o << buf;
  for (const auto& p : s.points) {
    const std::string dram =
        std::to_string(p.dram.base_latency) + "c " + std::to_string(p.dram.bytes_per_cycle) + "B/c";
    std::snprintf(buf, sizeof buf,
                  "  %-10s %6.0f %6.3g %14s %10s %8.2f us %12s %7.1f mW %10.0f %9.3f  %s%s\n",
                  p.point.name.c_str(), p.point.frequency_mhz, p.point.voltage, dram.c_str(),
                  grouped(p.cycles).c_str(), p.seconds * 1e6, joules_text(p.energy_fj).c_str(),
                  p.watts * 1e3, p.inferences_per_joule, p.tops_per_watt,
                  p.report.passed ? "" : "FAILED ",
                  p.inefficient.empty() ? "" : ("inefficient: " + p.inefficient).c_str());
    o << buf;
    if (p.report.thermal) {
      const auto& t = *p.report.thermal;
      std::snprintf(buf, sizeof buf,
                    "  %-10s thermal: peak %.1f C, %s clamp events, %.1f%% of cycles clamped\n", "",
                    t.peak_mc / 1e3, grouped(t.clamp_events).c_str(),
                    p.cycles ? 100.0 * t.clamped_cycles / p.cycles : 0.0);
      o << buf;
    }
  }
  return o.str();
}

}  // namespace bud::profile
