#include "load/Sweep.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace bud::load {

double to_us(const Service& service, uint64_t cycles) {
  return static_cast<double>(cycles) / service.frequency_mhz;
}

std::string SweepSpec::validate(const Service& service) const {
  if (auto e = policy.validate(service.times); !e.empty()) return e;
  if (loads.empty()) return "no load points";
  for (double l : loads)
    if (!std::isfinite(l) || l <= 0 || l > 100)
      return "load " + std::to_string(l) + " is not a fraction of capacity in (0, 100]";
  if (!std::isfinite(sla_p99_us) || sla_p99_us < 0) return "the p99 SLA must be >= 0 us";
  if (!(service.frequency_mhz > 0)) return "the energy table's frequency must be > 0";
  for (uint32_t b = 1; b <= policy.max_batch; ++b)
    if (!service.runs[b - 1].passed)
      return "batch of " + std::to_string(b) + " failed on the RTL: " + service.runs[b - 1].failure;
  return {};
}

SweepResult sweep(const Service& service, const SweepSpec& spec) {
  SweepResult r;
  const uint32_t b_max = spec.policy.max_batch;
  const double hz = service.frequency_mhz * 1e6;
  r.capacity_rps = static_cast<double>(b_max) * hz /
                   static_cast<double>(service.times.batch(b_max));
  for (double load : spec.loads) {
    LoadPoint p;
    p.load = load;
    p.offered_rps = load * r.capacity_rps;
    ArrivalSpec a = spec.arrivals;
    a.rate_per_s = p.offered_rps;
    a.frequency_mhz = service.frequency_mhz;
    const ServingThermal thermal = service.serving_thermal();
    const ServeResult s =
        serve(arrivals(a), service.times, spec.policy, service.thermal ? &thermal : nullptr);
    p.latency = summarize(completed_latencies(s));
    p.completed = s.completed;
    p.dropped = s.dropped;
    p.batches_by_size = s.batches_by_size;
    p.busy_cycles = s.busy_cycles;
    p.end_cycle = s.end_cycle;
    const double seconds = static_cast<double>(s.end_cycle) / hz;
    if (seconds > 0) p.served_rps = static_cast<double>(s.completed) / seconds;
    // Energy: each batch's RTL run, each request's copies, and the NPU idle whenever it is not
    // running a batch (host work, micro-batching waits, no requests).
    uint64_t npu_cycles = 0;
    for (uint32_t b = 1; b <= b_max; ++b) {
      const uint64_t n = s.batches_by_size[b - 1];
      p.energy_fj += n * service.batch_fj(b);
      npu_cycles += n * service.runs[b - 1].npu_cycles;
    }
    p.energy_fj += s.completed * service.request_copy_fj;
    // The clamp's cycles are clock-gated, not idle (none without the thermal model).
    p.energy_fj += s.clamped_cycles * service.clamped_fj_per_cycle;
    if (s.end_cycle > npu_cycles + s.clamped_cycles)
      p.energy_fj += (s.end_cycle - npu_cycles - s.clamped_cycles) * service.idle_fj_per_cycle;
    p.clamp_events = s.clamp_events;
    p.clamped_cycles = s.clamped_cycles;
    p.clamped_fraction = s.end_cycle ? static_cast<double>(s.clamped_cycles) / s.end_cycle : 0;
    p.peak_mc = s.peak_mc;
    if (service.thermal) {
      const ClampSplit split = split_by_clamp(s);
      p.clamp_overlapping = summarize(split.overlapping);
      p.clamp_clear = summarize(split.clear);
    }
    const double joules = static_cast<double>(p.energy_fj) * 1e-15;
    if (s.completed > 0) p.joules_per_request = joules / static_cast<double>(s.completed);
    if (seconds > 0) p.watts = joules / seconds;
    if (joules > 0) p.requests_per_joule = static_cast<double>(s.completed) / joules;
    p.saturated = load >= 1;
    p.meets_sla = !p.saturated && spec.sla_p99_us > 0 && s.dropped == 0 && s.completed > 0 &&
                  to_us(service, p.latency.p99) <= spec.sla_p99_us;
    if (p.meets_sla && (!r.sustained || p.served_rps > r.points[*r.sustained].served_rps))
      r.sustained = r.points.size();
    r.points.push_back(std::move(p));
  }
  return r;
}

const char* knob_name(Knob knob) {
  switch (knob) {
    case Knob::Baseline:
      return "baseline";
    case Knob::MaxBatch:
      return "max_batch";
    case Knob::Window:
      return "window";
    case Knob::OperatingPoint:
      return "operating_point";
    case Knob::TileRows:
      return "tile_rows";
    case Knob::Precision:
      return "precision";
    case Knob::TileBlocks:
      return "tile_blocks";
  }
  return "?";
}

Intervention evaluate_intervention(std::string name, const Service& service, const SweepSpec& spec,
                                   Knob knob) {
  Intervention i;
  i.name = std::move(name);
  i.knob = knob;
  i.policy = spec.policy;
  i.point = service.point;
  i.frequency_mhz = service.frequency_mhz;
  i.tiles = service.tiles;
  if (!service.runs.empty()) {
    i.batch1_cycles = service.times.batch_cycles[0];
    i.batch1_fj = service.batch_fj(1);
  }
  i.result = sweep(service, spec);
  if (i.result.sustained) {
    const LoadPoint& p = i.result.points[*i.result.sustained];
    i.requests_per_joule = p.requests_per_joule;
    i.served_rps = p.served_rps;
    i.p99_us = to_us(service, p.latency.p99);
    i.watts = p.watts;
  }
  return i;
}

void rank_interventions(std::vector<Intervention>& plan) {
  std::stable_sort(plan.begin(), plan.end(), [](const Intervention& a, const Intervention& b) {
    const bool fa = a.failure.empty(), fb = b.failure.empty();
    if (fa != fb) return fa;
    const bool ma = a.result.sustained.has_value(), mb = b.result.sustained.has_value();
    if (ma != mb) return ma;
    return a.requests_per_joule > b.requests_per_joule;
  });
}

std::vector<Intervention> sweep_interventions(const Service& service, const SweepSpec& spec,
                                              const std::vector<double>& windows_us) {
  std::vector<Intervention> v;
  auto add = [&](std::string name, const ServerPolicy& policy, Knob knob) {
    for (const auto& i : v)
      if (i.policy.max_batch == policy.max_batch && i.policy.window_cycles == policy.window_cycles)
        return;  // the same policy as one already tried (e.g. the baseline)
    SweepSpec s = spec;
    s.policy = policy;
    v.push_back(evaluate_intervention(std::move(name), service, s, knob));
  };
  add("baseline", spec.policy, Knob::Baseline);
  const uint32_t measured = static_cast<uint32_t>(service.times.batch_cycles.size());
  for (uint32_t b = 1; b <= measured; b *= 2) {
    ServerPolicy p = spec.policy;
    p.max_batch = b;
    p.queue_bound = std::max(p.queue_bound, b);
    add("max batch " + std::to_string(b), p, Knob::MaxBatch);
  }
  for (double w : windows_us) {
    ServerPolicy p = spec.policy;
    p.window_cycles = static_cast<uint64_t>(std::llround(w * service.frequency_mhz));
    char name[64];
    std::snprintf(name, sizeof name, "window %g us", w);
    add(name, p, Knob::Window);
  }
  rank_interventions(v);
  return v;
}

}  // namespace bud::load
