// One NPU serving a request stream (docs/serving.md): a bounded queue with admission control,
// micro-batching, and batch service times measured on the RTL. A discrete-event replay of the
// arrivals against those service times: deterministic, integer cycles.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "emu/core/Thermal.h"

namespace bud::load {

/// What serving a batch costs, in NPU cycles.
struct ServiceTimes {
  /// NPU cycles of a batch of b requests at index b - 1 (from RTL runs); its size is the largest
  /// batch the server forms.
  std::vector<uint64_t> batch_cycles;
  uint64_t host_per_batch = 0;    ///< driver work, doorbell and interrupt per batch
  uint64_t host_per_request = 0;  ///< input and output copies per request
  /// Cycles from the start of a batch to its completion.
  uint64_t batch(uint32_t b) const {
    return host_per_batch + host_per_request * b + batch_cycles[b - 1];
  }
};

struct ServerPolicy {
  enum class Admission : uint8_t { Drop, Delay };
  uint32_t max_batch = 1;       ///< <= ServiceTimes::batch_cycles.size()
  uint64_t window_cycles = 0;   ///< micro-batching: wait up to this long for a full batch
  uint32_t queue_bound = 64;    ///< requests waiting in the queue
  Admission admission = Admission::Drop;  ///< a request arriving at a full queue
  std::string validate(const ServiceTimes& service) const;
};

struct RequestOutcome {
  uint64_t arrival = 0;
  uint64_t start = 0;  ///< its batch started
  uint64_t done = 0;   ///< its batch completed
  uint32_t batch = 0;  ///< its batch's size (0: dropped)
  bool dropped = false;
  uint64_t latency() const { return done - arrival; }
};

/// The die's thermal model over the serving timeline (docs/serving.md, "Thermal clamp under
/// load"): the harness's lumped RC model (emu/core/Thermal: thermal_window) stepped every
/// config.window_cycles of the timeline, driven by the on-die energy spent in each window. A
/// batch spends its energy evenly over its service cycles, an idle NPU its idle energy. At a
/// window where the temperature reaches the trip point the clamp holds the NPU (its throttle
/// input, as in a run): a batch makes no progress and the die spends the clock-gated energy,
/// until the temperature falls below trip - hysteresis.
struct ServingThermal {
  emu::ThermalConfig config;              ///< enabled; its counter prices are not used
  int64_t start_mc = 0;                   ///< the temperature at cycle 0
  std::vector<uint64_t> batch_die_fj;     ///< index b - 1: a batch of b over ServiceTimes::batch(b)
  uint64_t idle_die_fj_per_cycle = 0;     ///< no batch running
  uint64_t clamped_die_fj_per_cycle = 0;  ///< the clamp holding the NPU
};

struct ServeResult {
  std::vector<RequestOutcome> requests;  ///< in arrival order
  std::vector<uint64_t> batches_by_size;  ///< index b - 1: batches of b requests
  uint64_t busy_cycles = 0;   ///< serving a batch
  uint64_t end_cycle = 0;     ///< the last completion (or arrival)
  uint64_t completed = 0, dropped = 0;
  /// With a thermal model (else 0): clamp events, cycles the clamp held (exact), and the
  /// highest and final temperature (milli-degrees C).
  uint64_t clamp_events = 0, clamped_cycles = 0;
  int64_t peak_mc = 0, end_mc = 0;
  /// With a thermal model: the clamp's engagements, [first, last) cycles each, in time order
  /// (one per clamp event; the last ends at end_cycle if the clamp was still held there).
  std::vector<std::pair<uint64_t, uint64_t>> clamp_spans;
};

/// The completed requests of a served stream split by whether their time in the system,
/// [arrival, done), overlaps a thermal clamp engagement (ServeResult::clamp_spans): the latency
/// tail under the clamp against the rest (docs/serving.md, "Clamp events and the tail").
struct ClampSplit {
  std::vector<uint64_t> overlapping;  ///< latencies (cycles), arrival order
  std::vector<uint64_t> clear;        ///< latencies of those overlapping no clamp
};
/// Splits `r`'s completed requests by clamp overlap (all clear without clamp spans).
ClampSplit split_by_clamp(const ServeResult& r);

/// The latencies (cycles) of `r`'s completed requests, in arrival order.
std::vector<uint64_t> completed_latencies(const ServeResult& r);

/// Serves `arrivals` (non-decreasing cycles). A batch starts when the NPU is free and either
/// max_batch requests wait or the oldest waiting one has waited window_cycles; it takes every
/// waiting request up to max_batch. A request that finds queue_bound requests waiting is
/// dropped, or (Delay) waits outside the queue, first come first served, for a place. With
/// `thermal`, a batch takes its service cycles plus every cycle the clamp held it.
ServeResult serve(const std::vector<uint64_t>& arrivals, const ServiceTimes& service,
                  const ServerPolicy& policy, const ServingThermal* thermal = nullptr);

}  // namespace bud::load
