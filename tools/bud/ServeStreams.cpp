#include "tools/bud/ServeStreams.h"

#include <cstdio>
#include <iostream>
#include <map>

#include "load/streams/StreamSweep.h"
#include "power/EnergyTable.h"
#include "tools/bud/Output.h"
#include "tools/bud/RunCommand.h"
#include "tools/plots/HtmlReport.h"

namespace bud::cli {
namespace {

constexpr const char* kCommand = "serve-load";
constexpr int kNoSla = 1;
constexpr int kReportFailed = 4;

/// What serving the streams measured: one service per distinct workload, and the sweep.
struct ServedStreams {
  std::map<std::string, load::Service> services;  ///< by workload (ordered: deterministic)
  std::vector<const load::Service*> per_stream;   ///< services[streams[i].workload]
  load::StreamSweepSpec spec;
  load::StreamSweepResult result;
};

Json latency_us(const load::LatencySummary& l, double mhz, bool saturated) {
  if (saturated) return {{"p50", nullptr}, {"p95", nullptr}, {"p99", nullptr}, {"p999", nullptr}};
  return {{"p50", l.p50 / mhz}, {"p95", l.p95 / mhz}, {"p99", l.p99 / mhz}, {"p999", l.p999 / mhz}};
}

Json streams_json(const ServedStreams& s, const ServeLoadOptions& o) {
  const double mhz = s.per_stream[0]->frequency_mhz;
  Json j = Json::object();
  j["queue_policy"] = load::queue_policy_name(s.spec.queue_policy);
  j["arrivals"] = {{"kind", o.arrivals}, {"requests", o.requests}, {"seed", o.arrival_seed}};
  j["policy"] = {{"max_batch", o.max_batch},
                 {"window_us", o.window_us},
                 {"window_cycles", s.spec.policy.window_cycles},
                 {"queue_bound", o.queue_bound},
                 {"queue_bound_per", "stream"},
                 {"admission", o.admission}};
  Json streams = Json::array();
  for (size_t i = 0; i < s.spec.streams.size(); ++i) {
    const load::StreamSpec& st = s.spec.streams[i];
    streams.push_back({{"name", st.name},
                       {"workload", st.workload},
                       {"share", st.share},
                       {"sla_p99_us", st.sla_p99_us},
                       {"priority", st.priority},
                       {"weight", st.weight},
                       {"service", service_json(*s.per_stream[i])}});
  }
  j["streams"] = std::move(streams);
  Json points = Json::array();
  for (const auto& p : s.result.points) {
    Json q = {{"load", p.load},
              {"offered_rps", p.offered_rps},
              {"served_rps", p.served_rps},
              {"busy_cycles", p.busy_cycles},
              {"end_cycle", p.end_cycle},
              {"saturated", p.saturated},
              {"meets_sla", p.meets_sla}};
    Json per = Json::array();
    for (size_t i = 0; i < p.streams.size(); ++i) {
      const load::StreamPoint& sp = p.streams[i];
      const auto& l = sp.latency;
      per.push_back({{"name", s.spec.streams[i].name},
                     {"offered_rps", sp.offered_rps},
                     {"served_rps", sp.served_rps},
                     {"arrived", sp.arrived},
                     {"completed", sp.completed},
                     {"dropped", sp.dropped},
                     {"rejected_fraction", sp.rejected_fraction},
                     {"latency_cycles",
                      {{"mean", l.mean},
                       {"p50", l.p50},
                       {"p95", l.p95},
                       {"p99", l.p99},
                       {"p999", l.p999},
                       {"max", l.max}}},
                     {"latency_us", latency_us(l, mhz, p.saturated)},
                     {"batches_by_size", sp.batches_by_size},
                     {"busy_cycles", sp.busy_cycles},
                     {"service_share", sp.service_share},
                     {"sla_p99_us", s.spec.streams[i].sla_p99_us},
                     {"meets_sla", sp.meets_sla}});
    }
    q["streams"] = std::move(per);
    points.push_back(std::move(q));
  }
  Json sweep = {{"capacity_rps", s.result.capacity_rps}, {"points", std::move(points)}};
  if (s.result.sustained)
    sweep["sustained_point"] = *s.result.sustained;
  else
    sweep["sustained_point"] = nullptr;
  j["sweep"] = std::move(sweep);
  return j;
}

std::string streams_text(const ServedStreams& s, const ServeLoadOptions& o) {
  const load::Service& first = *s.per_stream[0];
  const double mhz = first.frequency_mhz;
  std::string out;
  char b[512];
  std::snprintf(b, sizeof b,
                "bud serve-load: %zu streams, %s queue policy, %u requests per load point, %s "
                "arrivals (seed %llu), max batch %u, window %.1f us, queue %u per stream (%s), "
                "%.0f MHz (%s)\n\n  %-10s %-16s %7s %9s %8s %6s %14s\n",
                s.spec.streams.size(), load::queue_policy_name(s.spec.queue_policy), o.requests,
                o.arrivals.c_str(), static_cast<unsigned long long>(o.arrival_seed), o.max_batch,
                o.window_us, o.queue_bound, o.admission.c_str(), mhz, first.energy_table.c_str(),
                "stream", "workload", "share", "SLA us", "priority", "weight", "batch-1 cycles");
  out += b;
  for (size_t i = 0; i < s.spec.streams.size(); ++i) {
    const load::StreamSpec& st = s.spec.streams[i];
    char sla[32] = "-";
    if (st.sla_p99_us > 0) std::snprintf(sla, sizeof sla, "%.1f", st.sla_p99_us);
    std::snprintf(b, sizeof b, "  %-10s %-16s %7.3g %9s %8u %6u %14s\n", st.name.c_str(),
                  st.workload.c_str(), st.share, sla, st.priority, st.weight,
                  group_digits(s.per_stream[i]->times.batch(1)).c_str());
    out += b;
  }
  std::snprintf(b, sizeof b,
                "\nLoad sweep (capacity %.0f requests/s for the mix at batch %u; per stream)\n"
                "  %5s %-10s %10s %10s %9s %8s %9s %9s %9s %9s %6s %s\n",
                s.result.capacity_rps, o.max_batch, "load", "stream", "offered/s", "served/s",
                "completed", "rejected", "p50 us", "p95 us", "p99 us", "p99.9 us", "NPU %", "SLA");
  out += b;
  for (size_t k = 0; k < s.result.points.size(); ++k) {
    const auto& p = s.result.points[k];
    for (size_t i = 0; i < p.streams.size(); ++i) {
      const load::StreamPoint& sp = p.streams[i];
      auto us = [&](uint64_t cycles) {
        char v[32];
        std::snprintf(v, sizeof v, "%.1f", cycles / mhz);
        return p.saturated ? std::string("saturated") : std::string(v);
      };
      const double sla = s.spec.streams[i].sla_p99_us;
      const char* verdict = sla <= 0 ? "-"
                            : sp.meets_sla
                                ? (s.result.sustained == k ? "meets (sustained)" : "meets")
                                : "misses";
      std::snprintf(
          b, sizeof b, "  %5.2f %-10s %10.0f %10.0f %9llu %7.2f%% %9s %9s %9s %9s %5.1f%% %s\n",
          p.load, s.spec.streams[i].name.c_str(), sp.offered_rps, sp.served_rps,
          static_cast<unsigned long long>(sp.completed), 100 * sp.rejected_fraction,
          us(sp.latency.p50).c_str(), us(sp.latency.p95).c_str(), us(sp.latency.p99).c_str(),
          us(sp.latency.p999).c_str(), 100 * sp.service_share, verdict);
      out += b;
    }
  }
  if (s.result.sustained) {
    const auto& p = s.result.points[*s.result.sustained];
    std::snprintf(b, sizeof b,
                  "\nSustained with every stream at its SLA (nothing rejected): %.0f requests/s "
                  "(load %.2f)\n",
                  p.served_rps, p.load);
    out += b;
  } else {
    bool any = false;
    for (const auto& st : s.spec.streams) any = any || st.sla_p99_us > 0;
    if (any) out += "\nNo load point meets every stream's SLA (nothing rejected)\n";
  }
  return out;
}

/// Parses, measures and sweeps: 0 and `out` filled, or the exit status after the error.
int serve_streams(const ServeLoadOptions& o, ServedStreams& out) {
  const auto fail = [&](int code, const std::string& e) {
    return fail_command(kCommand, o.json, code, e);
  };
  if (auto e = validate_emulation_options(o.run); !e.empty()) return fail(2, e);
  if (o.sweep) return fail(2, "--sweep ranks interventions for one workload: not with --stream");
  load::SweepSpec base;
  if (auto e = serving_spec(o, base); !e.empty()) return fail(2, e);
  load::StreamSweepSpec& spec = out.spec;
  spec.arrivals = base.arrivals;
  spec.policy = base.policy;
  spec.loads = base.loads;
  const auto policy = load::parse_queue_policy(o.queue_policy);
  if (!policy)
    return fail(2, "--queue-policy \"" + o.queue_policy + "\": fifo, strict or weighted");
  spec.queue_policy = *policy;
  for (const auto& text : o.streams) {
    auto parsed = load::parse_stream_spec(text);
    if (!parsed.error.empty()) return fail(2, parsed.error);
    if (!parsed.spec.sla_given) parsed.spec.sla_p99_us = o.sla_p99_us;
    spec.streams.push_back(std::move(parsed.spec));
  }
  // One energy table for all: the streams share the NPU and its clock.
  run::RunOptions configured = o.run;
  configured.workload = spec.streams[0].workload;
  if (int rc = resolve_config(kCommand, o.json, configured)) return rc;
  auto table = resolve_power_options(configured);
  if (!table) return fail(2, table.error());
  for (const auto& st : spec.streams) {
    if (out.services.count(st.workload)) continue;  // measured for an earlier stream
    run::RunOptions measured = configured;
    measured.workload = st.workload;
    auto service = measure_batches(kCommand, measured, o.max_batch, *table);
    if (!service) return fail(2, "stream " + st.name + ": " + service.error());
    for (const auto& run : service->runs)
      if (!run.passed)
        return fail(1, "stream " + st.name + ": batch of " + std::to_string(run.batch) +
                           " failed on the RTL: " + run.failure);
    out.services.emplace(st.workload, std::move(service).value());
  }
  for (const auto& st : spec.streams) out.per_stream.push_back(&out.services.at(st.workload));
  spec.policy.window_cycles =
      static_cast<uint64_t>(std::llround(o.window_us * out.per_stream[0]->frequency_mhz));
  if (auto e = spec.validate(out.per_stream); !e.empty()) return fail(2, e);
  out.result = load::sweep_streams(out.per_stream, spec);
  return 0;
}

}  // namespace

int run_serve_streams(const ServeLoadOptions& o) {
  ServedStreams served;
  if (int rc = serve_streams(o, served)) return rc;
  const Json j = streams_json(served, o);
  if (!o.html.empty()) {
    if (auto e = plots::render_html("serve_streams_report", j, o.html); !e.empty())
      return fail_command(kCommand, o.json, kReportFailed, o.html + ": " + e);
  }
  if (o.json)
    std::cout << j.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
  else
    std::cout << streams_text(served, o);
  bool any_sla = false;
  for (const auto& st : served.spec.streams) any_sla = any_sla || st.sla_p99_us > 0;
  return any_sla && !served.result.sustained ? kNoSla : 0;
}

}  // namespace bud::cli
