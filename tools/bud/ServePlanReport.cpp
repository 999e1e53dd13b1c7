#include "tools/bud/ServePlanReport.h"

#include <cstdio>

#include "tools/bud/Output.h"

namespace bud::cli {

Json interventions_json(const std::vector<load::Intervention>& plan) {
  const load::Intervention* base = nullptr;
  for (const auto& i : plan)
    if (i.knob == load::Knob::Baseline) base = &i;
  Json a = Json::array();
  for (const auto& i : plan) {
    Json q = Json::object();
    q["name"] = i.name;
    q["knob"] = load::knob_name(i.knob);
    q["max_batch"] = i.policy.max_batch;
    q["window_cycles"] = i.policy.window_cycles;
    q["point"] = i.point;
    q["frequency_mhz"] = i.frequency_mhz;
    q["tile_rows"] = i.tiles.max_rows;  // 0: the plan's
    q["tile_blocks"] = i.tiles.max_blocks;
    q["batch1_cycles"] = i.batch1_cycles;
    q["batch1_energy_uj"] = static_cast<double>(i.batch1_fj) * 1e-9;
    q["measured"] = i.failure.empty();
    if (!i.failure.empty()) q["failure"] = i.failure;
    q["meets_sla"] = i.result.sustained.has_value();
    q["requests_per_joule"] = i.requests_per_joule;
    q["served_rps"] = i.served_rps;
    q["p99_us"] = i.p99_us;
    q["watts"] = i.watts;
    // After / before: the baseline's sustained figures (null when either misses the SLA).
    if (base && base->result.sustained && i.result.sustained && base->requests_per_joule > 0)
      q["vs_baseline"] = i.requests_per_joule / base->requests_per_joule;
    else
      q["vs_baseline"] = nullptr;
    a.push_back(std::move(q));
  }
  return a;
}

std::string interventions_text(const std::vector<load::Intervention>& plan,
                               const load::SweepSpec& spec) {
  if (plan.empty()) return {};
  const load::Intervention* base = nullptr;
  for (const auto& i : plan)
    if (i.knob == load::Knob::Baseline) base = &i;
  char b[512];
  std::snprintf(b, sizeof b,
                "\nIntervention plan (one change at a time, ranked by requests/J at p99 <= %.1f "
                "us; cycles and uJ of one inference on the RTL)\n  %-16s %10s %10s %8s %7s %10s "
                "%8s %9s\n",
                spec.sla_p99_us, "change", "req/J", "served/s", "p99 us", "W", "cycles/inf",
                "uJ/inf", "vs base");
  std::string out = b;
  for (const auto& i : plan) {
    const std::string cycles = group_digits(i.batch1_cycles);
    const double uj = static_cast<double>(i.batch1_fj) * 1e-9;
    if (!i.failure.empty()) {
      std::snprintf(b, sizeof b, "  %-16s not measured: %s\n", i.name.c_str(), i.failure.c_str());
    } else if (!i.result.sustained) {
      std::snprintf(b, sizeof b, "  %-16s %-45s %10s %8.3f\n", i.name.c_str(),
                    "misses the SLA at every load", cycles.c_str(), uj);
    } else {
      const double vs = base && base->requests_per_joule > 0
                            ? i.requests_per_joule / base->requests_per_joule - 1
                            : 0;
      std::snprintf(b, sizeof b, "  %-16s %10.0f %10.0f %8.1f %7.3f %10s %8.3f %+8.1f%%\n",
                    i.name.c_str(), i.requests_per_joule, i.served_rps, i.p99_us, i.watts,
                    cycles.c_str(), uj, 100 * vs);
    }
    out += b;
  }
  return out;
}

Json plan_json(const Served& served, const ServeLoadOptions& o) {
  Json j = Json::object();
  j["workload"] = served.service.workload;
  j["sla_p99_us"] = served.spec.sla_p99_us;
  j["arrivals"] = {{"kind", o.arrivals}, {"requests", o.requests}, {"seed", o.arrival_seed}};
  j["policy"] = {{"max_batch", o.max_batch},
                 {"window_us", o.window_us},
                 {"queue_bound", o.queue_bound},
                 {"admission", o.admission}};
  j["loads"] = served.spec.loads;
  j["interventions"] = interventions_json(served.plan);
  return j;
}

std::string plan_text(const Served& served, const ServeLoadOptions& o) {
  char b[512];
  std::snprintf(b, sizeof b,
                "\nServing %s at p99 <= %.1f us: %u %s requests per load point (seed %llu), "
                "baseline max batch %u, window %.1f us, queue %u (%s), %.0f MHz\n",
                served.service.workload.c_str(), served.spec.sla_p99_us, o.requests,
                o.arrivals.c_str(), static_cast<unsigned long long>(o.arrival_seed), o.max_batch,
                o.window_us, o.queue_bound, o.admission.c_str(), served.service.frequency_mhz);
  std::string out = b;
  if (served.result.sustained) {
    const auto& p = served.result.points[*served.result.sustained];
    std::snprintf(b, sizeof b,
                  "baseline: sustained %.0f requests/s at %.3f W = %.0f requests/J (load %.2f, "
                  "p99 %.1f us)\n",
                  p.served_rps, p.watts, p.requests_per_joule, p.load,
                  load::to_us(served.service, p.latency.p99));
  } else {
    std::snprintf(b, sizeof b, "baseline: no load point meets the SLA\n");
  }
  out += b;
  return out + interventions_text(served.plan, served.spec);
}

}  // namespace bud::cli
