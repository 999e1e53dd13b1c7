// The analytic projection of each layer's cycles from its shape, the lowering's tiling and the
// memory configuration (docs/profiling.md "Roofline"): compute time, memory time and their
// overlap under double buffering, against the measured cycles (signed error, MAPE).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "emu/core/EmulatorConfig.h"
#include "emu/workload/Lowering.h"
#include "emu/workload/Workload.h"
#include "profile/Profile.h"

namespace bud::profile {

/// The machine the projection assumes (from EmulatorConfig and the ISA's facts).
struct MachineModel {
  uint32_t array_macs = 64;    ///< MACs per MAC-array iteration (one iteration per cycle)
  /// The array the program was lowered for (entry sizes, lanes; Program::array).
  isa::ArrayConfig array = isa::default_array();
  double latency = 0;          ///< mean DRAM read latency: base + jitter / 2 (cycles)
  double bytes_per_cycle = 0;  ///< DRAM response bandwidth
  uint32_t in_flight = 0;      ///< min(load tags (8), DRAM outstanding limit)
  uint32_t outstanding = 0;    ///< the DRAM outstanding limit (fetch reads share it with load)
  double clock_fraction = 1;   ///< 1 - throttled share of cycles (throttle on/period)
  /// Little's law: the read bandwidth `in_flight` requests of kMaxRequestBytes sustain when each
  /// waits `latency` cycles, capped by the channel's `bytes_per_cycle`. Below the channel's
  /// bandwidth, latency with bounded outstanding requests binds, not bandwidth.
  double effective_bytes_per_cycle() const;
};
MachineModel machine_model(const emu::EmulatorConfig& config, uint32_t array_macs);

/// What binds a layer: compute, or memory time that is mostly waiting on DRAM latency with
/// bounded requests in flight (the Little's-law term of a LOAD, a STORE's ack wait) or mostly
/// moving bytes (the response channel, the scratchpad write port).
enum class Bound : uint8_t { Compute, Latency, Bandwidth };
const char* bound_name(Bound b);  ///< "compute", "latency", "bandwidth"
inline bool memory_bound(Bound b) { return b != Bound::Compute; }

/// One layer's projection.
struct LayerProjection {
  std::string name, kind;
  int tiles = 0;
  uint64_t compute_cycles = 0;   ///< sum over tiles: GEMM iterations + POST entries + overheads
  uint64_t memory_cycles = 0;    ///< sum over tiles: LOAD and STORE time
  /// memory_cycles split within the term that binds each command: the DRAM latency it waits out
  /// (once, or once per round of requests for the tags term) and the rest (bytes moved).
  uint64_t latency_cycles = 0, bandwidth_cycles = 0;
  /// Little's law for the layer's own access pattern: min(bandwidth, min(tags, its LOADs' mean
  /// requests) x their mean bytes / latency). 0 without loads. Short LOADs of few requests
  /// cannot keep the tags busy: their layer is bound far below the machine's effective roof.
  double effective_bytes_per_cycle = 0;
  uint64_t projected = 0;        ///< fill + sum of per-tile max(compute, next load, previous store)
                                 ///< + drain (engine work scaled by the clock fraction)
  uint64_t measured = 0;         ///< the layer's measured cycles (first dispatch..last retire)
  double error = 0;              ///< (projected - measured) / measured
  Bound bound = Bound::Compute;  ///< compute if compute >= memory, else the larger memory part
  std::string residual;          ///< |error| > 10%: the top-down classes that explain it
};

/// Error of one layer type.
struct TypeError {
  std::string kind;
  int layers = 0;
  double mean_error = 0;  ///< mean signed error
  double mape = 0;        ///< mean absolute error
};

struct Roofline {
  MachineModel machine;
  std::vector<LayerProjection> layers;
  std::vector<TypeError> types;
  double mape = 0;       ///< over all layers
  int within_10pct = 0;  ///< layers with |error| <= 10%
};

/// Names latency-bound and bandwidth-bound separately in the ranking: every memory loss gets
/// the bound its layer's projected memory time has (LayerProjection latency/bandwidth cycles).
void annotate_bounds(std::vector<Bottleneck>& ranking, const std::vector<LayerProjection>& layers);

/// Projects every layer of `program` (lowered from `w`) and compares with `profile`.
Roofline project(const workload::Workload& w, const workload::Program& program,
                 const emu::EmulatorConfig& config, const Profile& profile);

}  // namespace bud::profile
