#include "load/Arrivals.h"

#include <cmath>

#include "emu/core/Rng.h"

namespace bud::load {

namespace {

// An exponential variate of the given mean, by inversion of a 53-bit uniform in (0, 1].
double uniform(emu::Rng& rng) { return static_cast<double>((rng.next() >> 11) + 1) * 0x1.0p-53; }

double exponential(emu::Rng& rng, double mean) { return -std::log(uniform(rng)) * mean; }

// Lewis-Shedler thinning: candidates at the peak rate, each kept with probability
// rate(t) / peak, give a Poisson process of rate(t) exactly (no discretisation of the curve).
std::vector<uint64_t> diurnal(const ArrivalSpec& spec, emu::Rng& rng) {
  const double cycles_per_s = spec.frequency_mhz * 1e6;
  const double peak_gap = cycles_per_s / (spec.rate_per_s * (1 + spec.diurnal_amplitude));
  const double omega = 2 * M_PI / (spec.diurnal_period_us * spec.frequency_mhz);  // per cycle
  std::vector<uint64_t> out;
  out.reserve(spec.count);
  double t = 0;
  while (out.size() < spec.count) {
    t += exponential(rng, peak_gap);
    const double keep = (1 + spec.diurnal_amplitude * std::sin(omega * t)) /
                        (1 + spec.diurnal_amplitude);
    if (uniform(rng) <= keep) out.push_back(static_cast<uint64_t>(t));
  }
  return out;
}

}  // namespace

std::string ArrivalSpec::validate() const {
  if (!(rate_per_s > 0) || !std::isfinite(rate_per_s)) return "rate must be > 0 requests/s";
  if (!(frequency_mhz > 0) || !std::isfinite(frequency_mhz)) return "frequency must be > 0 MHz";
  if (count == 0) return "count must be > 0 requests";
  if (kind == Kind::Trace && (trace_us.size() < 2 || !(trace_us.back() > trace_us.front())))
    return "the arrival trace needs two or more distinct timestamps to have a rate";
  if (kind == Kind::Bursty) {
    if (!(burst_factor > 1)) return "burst factor must be > 1";
    if (!(burst_fraction > 0) || !(burst_fraction * burst_factor < 1))
      return "burst fraction must be > 0 and burst factor x burst fraction < 1";
    if (!(burst_period_us > 0)) return "burst period must be > 0 us";
  }
  if (kind == Kind::Diurnal) {
    if (!(diurnal_amplitude >= 0 && diurnal_amplitude < 1))
      return "diurnal amplitude must be in [0, 1)";
    if (!(diurnal_period_us > 0) || !std::isfinite(diurnal_period_us))
      return "diurnal period must be > 0 us";
  }
  return {};
}

std::vector<uint64_t> arrivals(const ArrivalSpec& spec) {
  emu::Rng rng(spec.seed);
  const double cycles_per_s = spec.frequency_mhz * 1e6;
  std::vector<uint64_t> out;
  out.reserve(spec.count);
  double t = 0;  // cycles
  if (spec.kind == ArrivalSpec::Kind::Trace) {
    // Scale the recorded time axis to the offered rate (docs/serving.md).
    const double trace_rate = static_cast<double>(spec.trace_us.size()) * 1e6 /
                              (spec.trace_us.back() - spec.trace_us.front());
    const double cycles_per_us = spec.frequency_mhz * trace_rate / spec.rate_per_s;
    out.reserve(spec.trace_us.size());
    for (double us : spec.trace_us)
      out.push_back(static_cast<uint64_t>((us - spec.trace_us.front()) * cycles_per_us));
    return out;
  }
  if (spec.kind == ArrivalSpec::Kind::Diurnal) return diurnal(spec, rng);
  if (spec.kind == ArrivalSpec::Kind::Poisson) {
    const double mean_gap = cycles_per_s / spec.rate_per_s;
    for (uint32_t i = 0; i < spec.count; ++i) {
      t += exponential(rng, mean_gap);
      out.push_back(static_cast<uint64_t>(t));
    }
    return out;
  }
  // Two states; the rate in each and the mean time spent in each per period.
  const double hi = spec.rate_per_s * spec.burst_factor;
  const double lo = spec.rate_per_s * (1 - spec.burst_factor * spec.burst_fraction) /
                    (1 - spec.burst_fraction);
  const double period = spec.burst_period_us * 1e-6 * cycles_per_s;
  const double mean_in[2] = {(1 - spec.burst_fraction) * period, spec.burst_fraction * period};
  const double rate_in[2] = {lo / cycles_per_s, hi / cycles_per_s};
  int state = 0;
  double state_end = exponential(rng, mean_in[0]);
  while (out.size() < spec.count) {
    // Memorylessness: draw the next arrival at the current rate; if the state ends first, move
    // to the state's end and draw again in the other state.
    const double next = rate_in[state] > 0 ? t + exponential(rng, 1 / rate_in[state]) : INFINITY;
    if (next < state_end) {
      t = next;
      out.push_back(static_cast<uint64_t>(t));
    } else {
      t = state_end;
      state ^= 1;
      state_end = t + exponential(rng, mean_in[state]);
    }
  }
  return out;
}

}  // namespace bud::load
