// The reading of a design's handshake profile (docs/designs.md, "Profiling a design"): each
// handshake's dominant condition, the bottleneck verdict over the stages in pipeline order, and
// the profile rendered as a table, as JSON and as a Chrome trace (Perfetto, chrome://tracing).
// Percentages are computed here, from the integer counts, never in the per-cycle path.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "debugger/json/Json.h"
#include "design/HandshakeProfile.h"

namespace bud::design {

/// What a handshake did on the cycles either side was engaged (valid or ready), over the
/// profile's reading_cycles() (the run without its quiet end): Flowing when it stalled (starved
/// or back-pressured) on less than 10% of them, else whichever stall was the more frequent (ties
/// go to back-pressure); Idle when it was never engaged.
enum class Reading : uint8_t { Flowing, BackPressured, Starved, Idle };
/// "flowing", "backpressured", "starved", "idle".
const char* reading_name(Reading r);
Reading reading(const HandshakeProfile& p, const HandshakeProfile::Handshake& h);

/// Where the pipeline's throughput is limited, as far as its handshakes show it.
enum class BottleneckKind : uint8_t {
  Downstream,  ///< a chain of back-pressured stages: what consumes the last one is slow
  Upstream,    ///< no stage back-pressured, one starved: what feeds the first starved one is slow
  None,        ///< every engaged stage mostly transfers
  Idle,        ///< no stage was ever engaged
  /// most of the run came after the last transfer and its quiet cycles: the run ended waiting
  /// (the pipeline's own reading, of the cycles before, is in first/last/limiter)
  Waiting,
};
/// "downstream", "upstream", "none", "idle", "waiting".
const char* bottleneck_name(BottleneckKind k);

struct Bottleneck {
  BottleneckKind kind = BottleneckKind::None;
  std::optional<size_t> first, last;  ///< handshake indices: the chain (Downstream), or the
                                      ///< starved handshake (Upstream, first == last)
  std::string limiter;                ///< who limits: "sink 'sums'", "memory port 'mem'", ...
  /// Cycles after the last transfer beyond the harness's quiet cycles, when no handshake was
  /// back-pressured on any of them: the run ended waiting (on an interrupt, the firmware, a
  /// timer) rather than finishing. (Back-pressure there is a stall the readings show.)
  uint64_t waiting_cycles = 0;
  bool mostly_waiting = false;  ///< waiting_cycles is at least half of the run
  std::string message;          ///< one or two sentences: the verdict
};

/// The verdict over the declared stages in pipeline order (every handshake when none is
/// declared), from their readings: the first back-pressured stage and the back-pressured stages
/// right after it point past the last of them (its consumer limits throughput); else a starved
/// stage points to its producer (the first starved stage fed by a source, memory or the
/// firmware, else the first starved stage). A reading of the handshakes, not a proof:
/// docs/designs.md says what it can miss.
Bottleneck find_bottleneck(const HandshakeProfile& p);

/// "sink 'sums'", "source 'samples'", "memory port 'mem'", "the firmware", "the design".
std::string party_name(Party party, const std::string& port);

/// The table: a row per handshake (percent of cycles per state, transfers, reading), the
/// counters' totals, the verdict.
std::string handshake_text(const HandshakeProfile& p, const Bottleneck& b);
/// {"cycles", "all_idle_cycles", "handshakes": [{name, kind, stage, producer, consumer, valid,
/// ready, cycles: {busy, starved, backpressured, idle}, percent: {...}, transfers, reading}],
/// "counters": {interval, requested_interval, cycles: [...], series: [{name, total, values}]},
/// "bottleneck": {kind, first, last, limiter, waiting_cycles, mostly_waiting, message}}.
json::Json handshake_json(const HandshakeProfile& p, const Bottleneck& b);
/// Chrome trace-event JSON: a track (thread) per handshake with a complete event ("X") per span
/// of equal state, an instant event where a track's spans were truncated, and a counter track
/// ("C") per counter at every sample. 1 cycle is 1 microsecond on the trace's clock.
json::Json handshake_trace(const HandshakeProfile& p, const std::string& design);

}  // namespace bud::design
