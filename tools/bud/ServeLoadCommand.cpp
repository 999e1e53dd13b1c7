#include "tools/bud/ServeLoadCommand.h"

#include <cmath>
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <fstream>
#include <memory>
#include <sstream>

#include "debugger/json/Json.h"
#include "load/ArrivalTrace.h"
#include "load/Sweep.h"
#include "power/EnergyTable.h"
#include "tools/bud/Output.h"
#include "tools/bud/RunCommand.h"
#include "tools/bud/ServePlanReport.h"
#include "tools/bud/ServeStreams.h"
#include "tools/plots/HtmlReport.h"

namespace bud::cli {
namespace {

constexpr int kNoSla = 1;
constexpr int kReportFailed = 4;

/// The default load points: light load to just past capacity, denser where queues build up.
std::vector<double> default_loads() { return {0.1, 0.25, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 1.0, 1.1}; }

std::string fixed(double v, int digits) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

Json sweep_json(const load::Service& s, const load::SweepResult& r, const load::SweepSpec& spec) {
  Json j = Json::object();
  j["capacity_rps"] = r.capacity_rps;
  j["thermal"] = s.thermal.has_value();
  j["sla_p99_us"] = spec.sla_p99_us;
  Json points = Json::array();
  for (const auto& p : r.points) {
    Json q = Json::object();
    q["load"] = p.load;
    q["offered_rps"] = p.offered_rps;
    q["served_rps"] = p.served_rps;
    q["completed"] = p.completed;
    q["dropped"] = p.dropped;
    q["latency_cycles"] = {{"mean", p.latency.mean}, {"p50", p.latency.p50}, {"p95", p.latency.p95},
                           {"p99", p.latency.p99}, {"max", p.latency.max}};
    // Saturated: no steady state, so no percentile to quote (latency_cycles keeps the finite
    // run's figures).
    q["saturated"] = p.saturated;
    if (p.saturated)
      q["latency_us"] = {{"p50", nullptr}, {"p95", nullptr}, {"p99", nullptr}};
    else
      q["latency_us"] = {{"p50", load::to_us(s, p.latency.p50)},
                         {"p95", load::to_us(s, p.latency.p95)},
                         {"p99", load::to_us(s, p.latency.p99)}};
    q["batches_by_size"] = p.batches_by_size;
    q["busy_cycles"] = p.busy_cycles;
    q["end_cycle"] = p.end_cycle;
    q["energy_fj"] = p.energy_fj;
    q["joules_per_request"] = p.joules_per_request;
    q["watts"] = p.watts;
    q["requests_per_joule"] = p.requests_per_joule;
    q["meets_sla"] = p.meets_sla;
    if (s.thermal) {
      // The tail split by clamp overlap: p99 of each side, null for an empty side (or a
      // saturated point, which has no percentile to quote).
      auto side = [&](const load::LatencySummary& l) {
        Json t = Json::object();
        t["requests"] = l.count;
        t["p50_cycles"] = l.p50;
        t["p99_cycles"] = l.p99;
        if (l.count == 0 || p.saturated) {
          t["p50_us"] = nullptr;
          t["p99_us"] = nullptr;
        } else {
          t["p50_us"] = load::to_us(s, l.p50);
          t["p99_us"] = load::to_us(s, l.p99);
        }
        return t;
      };
      q["thermal"] = {{"clamp_events", p.clamp_events},
                      {"clamped_cycles", p.clamped_cycles},
                      {"clamped_fraction", p.clamped_fraction},
                      {"peak_mc", p.peak_mc},
                      {"overlapping_clamp", side(p.clamp_overlapping)},
                      {"clear_of_clamp", side(p.clamp_clear)}};
    }
    points.push_back(std::move(q));
  }
  j["points"] = std::move(points);
  if (r.sustained) j["sustained_point"] = *r.sustained;
  else j["sustained_point"] = nullptr;
  return j;
}

std::string text_report(const load::Service& s, const load::SweepResult& r,
                        const load::SweepSpec& spec, const ServeLoadOptions& o) {
  std::string out;
  char b[512];
  std::snprintf(b, sizeof b,
                "bud serve-load %s: %u requests per load point, %s arrivals (seed %llu), max batch "
                "%u, window %.1f us, queue %u (%s), %.0f MHz (%s)\n",
                s.workload.c_str(), spec.arrivals.count, o.arrivals.c_str(),
                static_cast<unsigned long long>(spec.arrivals.seed), spec.policy.max_batch,
                o.window_us, spec.policy.queue_bound, o.admission.c_str(), s.frequency_mhz,
                s.energy_table.c_str());
  out += b;
  out += "\nBatch costs on the RTL (each run checked bit-exactly; host: " +
         group_digits(s.times.host_per_batch) + " cycles per batch, " +
         group_digits(s.times.host_per_request) + " per request for " +
         group_digits(s.request_bytes_in + s.request_bytes_out) + " bytes copied)\n";
  std::snprintf(b, sizeof b, "  %5s %12s %12s %12s %10s %9s\n", "batch", "NPU cycles",
                "service", "per request", "energy uJ", "check");
  out += b;
  for (const auto& run : s.runs) {
    const uint64_t svc = s.times.batch(run.batch);
    std::snprintf(b, sizeof b, "  %5u %12s %12s %12s %10s %9s\n", run.batch,
                  group_digits(run.npu_cycles).c_str(), group_digits(svc).c_str(),
                  group_digits(svc / run.batch).c_str(),
                  fixed(static_cast<double>(run.energy_fj) * 1e-9, 3).c_str(),
                  run.passed ? "PASS" : "FAIL");
    out += b;
  }
  std::snprintf(b, sizeof b, "\nLoad sweep (capacity %.0f requests/s at batch %u%s)\n",
                r.capacity_rps, spec.policy.max_batch,
                s.thermal ? ", nominal: the thermal clamp holds the NPU under load" : "");
  out += b;
  std::snprintf(b, sizeof b, "  %5s %10s %10s %7s %9s %9s %9s %9s %7s %9s %s\n", "load",
                "offered/s", "served/s", "dropped", "p50 us", "p95 us", "p99 us", "uJ/req", "W",
                "req/J", spec.sla_p99_us > 0 ? "SLA" : "");
  out += b;
  for (size_t i = 0; i < r.points.size(); ++i) {
    const auto& p = r.points[i];
    std::snprintf(b, sizeof b, "  %5s %10.0f %10.0f %7llu %9s %9s %9s %9s %7s %9.0f %s\n",
                  fixed(p.load, 2).c_str(), p.offered_rps, p.served_rps,
                  static_cast<unsigned long long>(p.dropped),
                  p.saturated ? "saturated" : fixed(load::to_us(s, p.latency.p50), 1).c_str(),
                  p.saturated ? "saturated" : fixed(load::to_us(s, p.latency.p95), 1).c_str(),
                  p.saturated ? "saturated" : fixed(load::to_us(s, p.latency.p99), 1).c_str(),
                  fixed(p.joules_per_request * 1e6, 3).c_str(), fixed(p.watts, 3).c_str(),
                  p.requests_per_joule,
                  spec.sla_p99_us <= 0 ? "" : (r.sustained == i ? "meets (sustained)" : p.meets_sla ? "meets" : "misses"));
    out += b;
  }
  if (s.thermal) {
    // The thermal model over each load point's timeline (docs/serving.md).
    std::snprintf(b, sizeof b, "\nThermal clamp under load (trip %.1f C, hysteresis %.1f C)\n",
                  s.thermal->trip_mc / 1e3, s.thermal->hysteresis_mc / 1e3);
    out += b;
    // The tail split: requests whose time in the system overlaps a clamp against the others.
    std::snprintf(b, sizeof b, "  %5s %10s %12s %10s %9s %10s %11s %10s %9s\n", "load", "served/s",
                  "clamp events", "clamped", "peak C", "overlap n", "overlap p99", "clear n",
                  "clear p99");
    out += b;
    auto p99 = [&](const load::LoadPoint& p, const load::LatencySummary& l) {
      return p.saturated ? std::string("saturated")
             : l.count == 0 ? std::string("-")
                            : fixed(load::to_us(s, l.p99), 1);
    };
    for (const auto& p : r.points) {
      std::snprintf(b, sizeof b, "  %5s %10.0f %12s %9.1f%% %9.3f %10s %11s %10s %9s\n",
                    fixed(p.load, 2).c_str(), p.served_rps, group_digits(p.clamp_events).c_str(),
                    100 * p.clamped_fraction, p.peak_mc / 1e3,
                    group_digits(p.clamp_overlapping.count).c_str(),
                    p99(p, p.clamp_overlapping).c_str(), group_digits(p.clamp_clear.count).c_str(),
                    p99(p, p.clamp_clear).c_str());
      out += b;
    }
    out += "  (p99 in us of the requests whose arrival-to-completion overlaps a clamp, and of the "
           "rest)\n";
  }
  if (spec.sla_p99_us > 0) {
    if (r.sustained) {
      const auto& p = r.points[*r.sustained];
      std::snprintf(b, sizeof b,
                    "\nSustained at the SLA (p99 <= %.1f us, nothing dropped): %.0f requests/s at "
                    "%.3f W = %.0f requests/J (load %.2f, p99 %.1f us)\n",
                    spec.sla_p99_us, p.served_rps, p.watts, p.requests_per_joule, p.load,
                    load::to_us(s, p.latency.p99));
    } else {
      std::snprintf(b, sizeof b,
                    "\nNo load point meets the SLA (p99 <= %.1f us, nothing dropped)\n",
                    spec.sla_p99_us);
    }
    out += b;
  }
  return out;
}

}  // namespace

Json service_json(const load::Service& s) {
  Json j = Json::object();
  j["workload"] = s.workload;
  j["model_revision"] = s.model_revision;
  j["seed"] = s.seed;
  j["mem_seed"] = s.mem_seed;
  j["energy_table"] = s.energy_table;
  j["frequency_mhz"] = s.frequency_mhz;
  j["host_per_batch_cycles"] = s.times.host_per_batch;
  j["host_per_request_cycles"] = s.times.host_per_request;
  j["request_bytes_in"] = s.request_bytes_in;
  j["request_bytes_out"] = s.request_bytes_out;
  j["request_copy_fj"] = s.request_copy_fj;
  j["idle_fj_per_cycle"] = s.idle_fj_per_cycle;
  Json runs = Json::array();
  for (const auto& r : s.runs) {
    Json b = Json::object();
    b["batch"] = r.batch;
    b["npu_cycles"] = r.npu_cycles;
    b["host_layer_cycles"] = r.host_layer_cycles;
    b["service_cycles"] = s.times.batch(r.batch);
    b["useful_macs"] = r.useful_macs;
    b["energy_fj"] = r.energy_fj;
    b["passed"] = r.passed;
    if (!r.passed) b["failure"] = r.failure;
    b["unpriced_counters"] = r.unpriced;
    runs.push_back(std::move(b));
  }
  j["batches"] = std::move(runs);
  return j;
}

bool is_serving_option(const std::string& name) {
  for (const char* n :
       {"--arrivals", "--arrival-trace", "--requests", "--arrival-seed", "--burst-factor", "--burst-fraction",
        "--burst-period-us", "--diurnal-amplitude", "--diurnal-period-us", "--max-batch", "--window-us", "--queue-bound", "--admission", "--load",
        "--sla-p99-us", "--sweep-windows-us", "--sweep-tile-rows",
        "--sweep-tile-blocks"})
    if (name == n) return true;
  return false;
}

void add_serving_options(CLI::App& app, ServeLoadOptions& options) {
  auto* sub = &app;
  sub->add_option("--arrivals", options.arrivals,
                  "Arrival process: poisson, bursty, diurnal (a sine day curve) or trace")
      ->check(CLI::IsMember({"poisson", "bursty", "diurnal", "trace"}))
      ->capture_default_str();
  sub->add_option("--arrival-trace", options.arrival_trace,
                  "With --arrivals trace: timestamps in us, one per line or a JSON array; each "
                  "load point scales its time axis to the offered rate");
  sub->add_option("--requests", options.requests, "Requests per load point")->capture_default_str();
  sub->add_option("--arrival-seed", options.arrival_seed, "Seed of the arrival stream")
      ->capture_default_str();
  sub->add_option("--burst-factor", options.burst_factor,
                  "Bursty: rate during bursts as a multiple of the mean")
      ->capture_default_str();
  sub->add_option("--burst-fraction", options.burst_fraction,
                  "Bursty: fraction of the time in bursts")
      ->capture_default_str();
  sub->add_option("--burst-period-us", options.burst_period_us,
                  "Bursty: mean burst plus quiet period, microseconds")
      ->capture_default_str();
  sub->add_option("--diurnal-amplitude", options.diurnal_amplitude,
                  "Diurnal: rate = mean x (1 + A sin(2 pi t / period)), A in [0, 1)")
      ->capture_default_str();
  sub->add_option("--diurnal-period-us", options.diurnal_period_us,
                  "Diurnal: the day curve's period, microseconds")
      ->capture_default_str();
  sub->add_option("--max-batch", options.max_batch, "Largest batch the server forms")
      ->capture_default_str();
  sub->add_option("--window-us", options.window_us,
                  "Micro-batching window: a partial batch waits up to this long")
      ->capture_default_str();
  sub->add_option("--queue-bound", options.queue_bound, "Requests that may wait in the queue")
      ->capture_default_str();
  sub->add_option("--admission", options.admission,
                  "At a full queue: drop the request, or delay it until there is room")
      ->check(CLI::IsMember({"drop", "delay"}))
      ->capture_default_str();
  sub->add_option("--load", options.loads,
                  "Offered loads as fractions of capacity (default 0.1 .. 1.1)")
      ->delimiter(',');
  sub->add_option("--sla-p99-us", options.sla_p99_us,
                  "Latency SLA: p99 bound in microseconds (0: none)")
      ->capture_default_str();
  sub->add_option("--sweep-windows-us", options.sweep_windows_us,
                  "With --sweep: the micro-batching windows to try, microseconds")
      ->delimiter(',')
      ->capture_default_str();
  sub->add_option("--sweep-tile-rows", options.sweep_tile_rows,
                  "With --sweep: tile-row caps to try, each measured again on the RTL (default: "
                  "half and a quarter of the largest tile's rows)")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  sub->add_option("--sweep-tile-blocks", options.sweep_tile_blocks,
                  "With --sweep: output-block caps per tile to try, each measured again on the "
                  "RTL (default: half and a quarter of the largest tile's blocks)")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
}

void setup_serve_load(CLI::App& app, ServeLoadOptions& options) {
  auto* sub = app.add_subcommand(
      "serve-load",
      "Serve a request stream on the NPU: latency percentiles, throughput and perf/W per load");
  sub->footer(
      "Examples:\n"
      "  bud serve-load mlp                              # default load points, no SLA\n"
      "  bud serve-load mlp --sla-p99-us 200 --max-batch 4 --window-us 20\n"
      "  bud serve-load gemm_small --arrivals bursty --load 0.5,0.9 --json\n"
      "  bud serve-load mlp --sla-p99-us 200 --html serve.html\n"
      "  bud serve-load --stream chat:mlp:1:300:2 --stream batch:gemm_small:3 --queue-policy strict\n"
      "Batch costs are measured on the RTL (one checked run per batch size), then each load point\n"
      "serves a seeded arrival stream (docs/serving.md). Exit status: 0 served (and some load\n"
      "point met the SLA when one is given), 1 none met it or a batch failed its check,\n"
      "2 bad input, 4 the HTML report could not be written.");
  options.run.workload.clear();  // not RunOptions' default: none given means --stream
  sub->add_option("workload", options.run.workload,
                  "Built-in name (see `bud workloads`), workload file or ONNX model (or --stream)");
  add_emulation_options(*sub, options.run);
  add_serving_options(*sub, options);
  sub->add_option("--stream", options.streams,
                  "NAME:WORKLOAD:SHARE[:SLA_US[:PRIORITY|WEIGHT]], repeatable: several request "
                  "streams on one NPU, each its own workload, share of the offered rate, p99 SLA "
                  "(empty: --sla-p99-us) and priority (strict) or weight (weighted)");
  sub->add_option("--queue-policy", options.queue_policy,
                  "With --stream: which stream's batch starts next: fifo, strict (priority, "
                  "non-preemptive) or weighted (fair share of NPU time by weight)")
      ->check(CLI::IsMember({"fifo", "strict", "weighted"}))
      ->capture_default_str();
  sub->add_flag("--sweep", options.sweep,
                "Try one policy change at a time (max batch 1, 2, 4, 8; micro-batching windows) "
                "and rank them by requests per joule at the SLA (needs --sla-p99-us)");
  sub->add_option("--html", options.html,
                  "Write a self-contained HTML report: latency-throughput curve, perf/W");
  sub->add_flag("--json", options.json, "Print one JSON object instead of the tables");
}

std::string serving_spec(const ServeLoadOptions& o, load::SweepSpec& spec) {
  if (o.requests == 0) return "--requests must be >= 1";
  if (o.max_batch == 0 || o.max_batch > 64) return "--max-batch must be in 1..64";
  if (!std::isfinite(o.window_us) || o.window_us < 0) return "--window-us must be >= 0";
  spec.arrivals.kind = o.arrivals == "bursty"    ? load::ArrivalSpec::Kind::Bursty
                       : o.arrivals == "diurnal" ? load::ArrivalSpec::Kind::Diurnal
                                                 : load::ArrivalSpec::Kind::Poisson;
  spec.arrivals.count = o.requests;
  spec.arrivals.seed = o.arrival_seed;
  spec.arrivals.burst_factor = o.burst_factor;
  spec.arrivals.burst_fraction = o.burst_fraction;
  spec.arrivals.burst_period_us = o.burst_period_us;
  spec.arrivals.diurnal_amplitude = o.diurnal_amplitude;
  spec.arrivals.diurnal_period_us = o.diurnal_period_us;
  if (o.arrivals == "trace") {
    if (o.arrival_trace.empty()) return "--arrivals trace needs --arrival-trace FILE";
    std::ifstream in(o.arrival_trace, std::ios::binary);
    if (!in) return o.arrival_trace + ": cannot read";
    std::stringstream text;
    text << in.rdbuf();
    auto trace = load::parse_arrival_trace(o.arrival_trace, text.str());
    if (!trace.error.empty()) return trace.error;
    spec.arrivals.kind = load::ArrivalSpec::Kind::Trace;
    spec.arrivals.trace_us = std::move(trace.times_us);
    spec.arrivals.count = static_cast<uint32_t>(spec.arrivals.trace_us.size());
  }
  if (auto e = spec.arrivals.validate(); !e.empty()) return e;
  spec.policy.max_batch = o.max_batch;
  spec.policy.queue_bound = o.queue_bound;
  spec.policy.admission = o.admission == "delay" ? load::ServerPolicy::Admission::Delay
                                                 : load::ServerPolicy::Admission::Drop;
  spec.loads = o.loads.empty() ? default_loads() : o.loads;
  spec.sla_p99_us = o.sla_p99_us;
  return {};
}

workload::Result<load::Service> measure_batches(const std::string& command,
                                                run::RunOptions measured, uint32_t up_to,
                                                const power::EnergyTable& table) {
  // Progress on a terminal: one line per measured run, in cycles.
  std::unique_ptr<ProgressLine> progress;
  measured.progress = [&progress](uint64_t cycle) {
    if (progress) progress->update(cycle);
  };
  return load::measure_service(measured, up_to, table, [&](uint32_t b) {
    progress = std::make_unique<ProgressLine>(command + ": " + measured.workload + " batch " +
                                              std::to_string(b) + " of " +
                                              std::to_string(up_to));
  });
}

int serve_options(const std::string& command, const ServeLoadOptions& o, Served& out) {
  const auto fail = [&](int code, const std::string& e) {
    return fail_command(command, o.json, code, e);
  };
  if (auto e = validate_emulation_options(o.run); !e.empty()) return fail(2, e);
  if (o.sweep && !(o.sla_p99_us > 0))
    return fail(2, "--sweep ranks interventions at the SLA: give --sla-p99-us");
  for (double w : o.sweep_windows_us)
    if (!std::isfinite(w) || w < 0) return fail(2, "--sweep-windows-us must be >= 0");
  // The sweep tries batches up to 8 (or --max-batch if larger): measure them all.
  const uint32_t measure_up_to = o.sweep ? std::max<uint32_t>(o.max_batch, 8) : o.max_batch;
  load::SweepSpec& spec = out.spec;
  if (auto e = serving_spec(o, spec); !e.empty()) return fail(2, e);

  // The energy table (--energy-table, --point: the operating point's clock and DRAM timing,
  // --thermal) as every running command resolves it.
  run::RunOptions configured = o.run;
  if (int rc = resolve_config(command, o.json, configured)) return rc;
  run::RunOptions measured = configured;
  auto table = resolve_power_options(measured);
  if (!table) return fail(2, table.error());

  auto service = measure_batches(command, measured, measure_up_to, *table);
  std::unique_ptr<ProgressLine> progress;  // the plan's runs
  if (!service) return fail(2, service.error());
  spec.policy.window_cycles =
      static_cast<uint64_t>(std::llround(o.window_us * service->frequency_mhz));
  for (const auto& run : service->runs)
    if (!run.passed)
      return fail(1, "batch of " + std::to_string(run.batch) + " failed on the RTL: " + run.failure);
  if (auto e = spec.validate(*service); !e.empty()) return fail(2, e);
  out.result = load::sweep(*service, spec);
  if (o.sweep) {
    // The changes to the run, each measured again on the RTL under the baseline policy: every
    // other operating point of the table (its clock, DRAM timing and supply), and smaller tiles.
    std::vector<load::RunChange> changes;
    for (const auto& point : table->points) {
      if (point.frequency_mhz == table->frequency_mhz && point.voltage == table->voltage)
        continue;  // the baseline's own point
      load::RunChange c;
      c.knob = load::Knob::OperatingPoint;
      c.name = "point " + point.name;
      c.options = configured;
      c.options.point = point.name;
      auto point_table = resolve_power_options(c.options);
      if (!point_table) return fail(2, point_table.error());
      c.table = std::move(point_table).value();
      changes.push_back(std::move(c));
    }
    const auto rows =
        o.sweep_tile_rows.empty() ? load::tile_rows_to_try(*service) : o.sweep_tile_rows;
    for (uint32_t r : rows) changes.push_back(load::tile_rows_change(measured, *table, r));
    const auto blocks =
        o.sweep_tile_blocks.empty() ? load::tile_blocks_to_try(*service) : o.sweep_tile_blocks;
    for (uint32_t b : blocks) changes.push_back(load::tile_blocks_change(measured, *table, b));
    for (auto& c : load::precision_changes(measured, *table)) changes.push_back(std::move(c));
    for (auto& c : changes)
      c.options.progress = [&progress](uint64_t cycle) {
        if (progress) progress->update(cycle);
      };
    auto plan = load::plan_interventions(
        *service, spec, o.window_us, o.sweep_windows_us, changes,
        [&](const std::string& name, uint32_t b) {
          progress = std::make_unique<ProgressLine>(command + ": " + name + ", batch " +
                                                    std::to_string(b) + " of " +
                                                    std::to_string(o.max_batch));
        });
    progress.reset();
    if (!plan) return fail(2, plan.error());
    for (const auto& i : *plan)
      if (i.mismatch) return fail(1, i.name + ": " + i.failure);
    out.plan = std::move(plan).value();
  }
  out.service = std::move(service).value();
  return 0;
}

int run_serve_load(const ServeLoadOptions& o) {
  if (!o.streams.empty()) {
    if (!o.run.workload.empty())
      return fail_command("serve-load", o.json, 2,
                          "give a WORKLOAD or --stream, not both (the streams name their workloads)");
    return run_serve_streams(o);
  }
  if (o.run.workload.empty())
    return fail_command("serve-load", o.json, 2, "give a WORKLOAD or one or more --stream");
  Served served;
  if (int rc = serve_options("serve-load", o, served)) return rc;
  const load::Service& service = served.service;
  const load::SweepSpec& spec = served.spec;
  const load::SweepResult& result = served.result;
  Json j = Json::object();
  j["service"] = service_json(service);
  j["sweep"] = sweep_json(service, result, spec);
  j["arrivals"] = {{"kind", o.arrivals}, {"requests", o.requests}, {"seed", o.arrival_seed}};
  j["policy"] = {{"max_batch", o.max_batch},
                 {"window_us", o.window_us},
                 {"window_cycles", spec.policy.window_cycles},
                 {"queue_bound", o.queue_bound},
                 {"admission", o.admission}};
  if (o.sweep) j["interventions"] = interventions_json(served.plan);
  if (!o.html.empty()) {
    if (auto e = plots::render_html("serve_report", j, o.html); !e.empty())
      return fail_command("serve-load", o.json, kReportFailed, o.html + ": " + e);
  }
  if (o.json)
    std::cout << j.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
  else
    std::cout << text_report(service, result, spec, o) << interventions_text(served.plan, spec);
  return spec.sla_p99_us > 0 && !result.sustained ? kNoSla : 0;
}

}  // namespace bud::cli
