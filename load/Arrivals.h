// Request arrivals for SLA serving (docs/serving.md): a Poisson stream, a bursty one (a
// two-state Markov-modulated Poisson process), a diurnal ramp (a non-homogeneous Poisson process
// whose rate follows a sine day curve) or a recorded trace, in cycles of the NPU clock, from a
// frozen seed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bud::load {

struct ArrivalSpec {
  enum class Kind : uint8_t { Poisson, Bursty, Trace, Diurnal };
  Kind kind = Kind::Poisson;
  double rate_per_s = 1000;    ///< mean offered load, requests per second
  double frequency_mhz = 1000; ///< the NPU clock the cycles count
  uint32_t count = 1000;       ///< requests
  uint64_t seed = 1;
  /// Bursty: during bursts the rate is `burst_factor` x the mean, bursts take `burst_fraction`
  /// of the time (burst_factor x burst_fraction < 1), and a burst plus the quiet time after it
  /// last `burst_period_us` on average (both exponential).
  double burst_factor = 4;
  double burst_fraction = 0.2;
  double burst_period_us = 2000;
  /// Diurnal: the rate at time t (us from the first request's stream start) is
  /// rate_per_s x (1 + diurnal_amplitude x sin(2 pi t / diurnal_period_us)), amplitude in
  /// [0, 1); drawn by thinning a Poisson stream at the peak rate.
  double diurnal_amplitude = 0.5;
  double diurnal_period_us = 20000;
  /// Trace: recorded timestamps (us, non-decreasing; load/ArrivalTrace.h). Its time axis is
  /// scaled so that its mean rate, size / (last - first), is `rate_per_s`; `count` is ignored
  /// (every timestamp is one request).
  std::vector<double> trace_us;

  /// Empty when usable, else which field is wrong and why.
  std::string validate() const;
};

/// `spec.count` arrival cycles, non-decreasing. The same spec gives the same cycles everywhere
/// (emu::Rng; exponential gaps by inversion, diurnal thinning by a uniform of the same Rng).
std::vector<uint64_t> arrivals(const ArrivalSpec& spec);

}  // namespace bud::load
