#include "load/streams/StreamSweep.h"

#include <cmath>

#include "load/Sweep.h"

namespace bud::load {

namespace {

/// Each stream's share of the offered rate, normalised to sum to 1 (one stream: exactly 1).
std::vector<double> fractions(const std::vector<StreamSpec>& streams) {
  double total = 0;
  for (const auto& s : streams) total += s.share;
  std::vector<double> f;
  for (const auto& s : streams) f.push_back(s.share / total);
  return f;
}

}  // namespace

std::string StreamSweepSpec::validate(const std::vector<const Service*>& services) const {
  if (streams.empty()) return "no streams";
  if (services.size() != streams.size()) return "one measured service per stream";
  if (arrivals.kind == ArrivalSpec::Kind::Trace)
    return "--arrivals trace replays one recorded stream: not with --stream";
  if (loads.empty()) return "no load points";
  for (double l : loads)
    if (!std::isfinite(l) || l <= 0 || l > 100)
      return "load " + std::to_string(l) + " is not a fraction of capacity in (0, 100]";
  for (size_t i = 0; i < streams.size(); ++i) {
    const StreamSpec& s = streams[i];
    for (size_t j = 0; j < i; ++j)
      if (streams[j].name == s.name) return "stream " + s.name + " is given twice";
    if (!(s.share > 0) || !std::isfinite(s.share))
      return "stream " + s.name + ": share must be > 0";
    if (!std::isfinite(s.sla_p99_us) || s.sla_p99_us < 0)
      return "stream " + s.name + ": the p99 SLA must be >= 0 us";
    if (s.weight == 0) return "stream " + s.name + ": weight must be >= 1";
    const Service& svc = *services[i];
    if (auto e = policy.validate(svc.times); !e.empty()) return "stream " + s.name + ": " + e;
    if (svc.thermal)
      return "the thermal model over the timeline serves one stream: not with --stream";
    if (!(svc.frequency_mhz > 0)) return "the energy table's frequency must be > 0";
    if (svc.frequency_mhz != services[0]->frequency_mhz)
      return "stream " + s.name + " is priced at another clock than " + streams[0].name;
    for (uint32_t b = 1; b <= policy.max_batch; ++b)
      if (!svc.runs[b - 1].passed)
        return "stream " + s.name + ": batch of " + std::to_string(b) +
               " failed on the RTL: " + svc.runs[b - 1].failure;
  }
  return {};
}

StreamSweepResult sweep_streams(const std::vector<const Service*>& services,
                                const StreamSweepSpec& spec) {
  StreamSweepResult r;
  const uint32_t b_max = spec.policy.max_batch;
  const double mhz = services[0]->frequency_mhz;
  const double hz = mhz * 1e6;
  const std::vector<double> frac = fractions(spec.streams);
  // A request of the mix takes, on average, the share-weighted batch time / max_batch.
  double batch_time = 0;
  for (size_t i = 0; i < services.size(); ++i)
    batch_time += frac[i] * static_cast<double>(services[i]->times.batch(b_max));
  r.capacity_rps = static_cast<double>(b_max) * hz / batch_time;
  for (double load : spec.loads) {
    StreamsLoadPoint p;
    p.load = load;
    p.offered_rps = load * r.capacity_rps;
    p.saturated = load >= 1;
    std::vector<StreamQueue> queues(spec.streams.size());
    for (size_t i = 0; i < queues.size(); ++i) {
      ArrivalSpec a = spec.arrivals;
      a.rate_per_s = p.offered_rps * frac[i];
      a.frequency_mhz = mhz;
      a.count = static_cast<uint32_t>(
          std::max(1.0, std::round(static_cast<double>(spec.arrivals.count) * frac[i])));
      a.seed = spec.arrivals.seed + i;
      queues[i].service = &services[i]->times;
      queues[i].arrivals = arrivals(a);
      queues[i].priority = spec.streams[i].priority;
      queues[i].weight = spec.streams[i].weight;
    }
    const StreamsResult s = serve_streams(queues, spec.policy, spec.queue_policy);
    p.busy_cycles = s.busy_cycles;
    p.end_cycle = s.end_cycle;
    const double seconds = static_cast<double>(s.end_cycle) / hz;
    bool any_sla = false, all_meet = true;
    uint64_t completed = 0;
    for (size_t i = 0; i < queues.size(); ++i) {
      const ServeResult& q = s.streams[i];
      StreamPoint sp;
      sp.offered_rps = p.offered_rps * frac[i];
      sp.arrived = q.requests.size();
      sp.completed = q.completed;
      sp.dropped = q.dropped;
      if (sp.arrived) sp.rejected_fraction = static_cast<double>(q.dropped) / sp.arrived;
      sp.latency = summarize(completed_latencies(q));
      sp.batches_by_size = q.batches_by_size;
      sp.busy_cycles = q.busy_cycles;
      if (s.busy_cycles) sp.service_share = static_cast<double>(q.busy_cycles) / s.busy_cycles;
      if (seconds > 0) sp.served_rps = static_cast<double>(q.completed) / seconds;
      const double sla = spec.streams[i].sla_p99_us;
      sp.meets_sla = !p.saturated && sla > 0 && q.dropped == 0 && q.completed > 0 &&
                     static_cast<double>(sp.latency.p99) / mhz <= sla;
      if (sla > 0) {
        any_sla = true;
        all_meet = all_meet && sp.meets_sla;
      }
      completed += q.completed;
      p.streams.push_back(std::move(sp));
    }
    if (seconds > 0) p.served_rps = static_cast<double>(completed) / seconds;
    p.meets_sla = any_sla && all_meet;
    if (p.meets_sla && (!r.sustained || p.served_rps > r.points[*r.sustained].served_rps))
      r.sustained = r.points.size();
    r.points.push_back(std::move(p));
  }
  return r;
}

}  // namespace bud::load
