// The timeline of a profiled run as Chrome trace-event JSON (Perfetto, chrome://tracing): one
// track per command holder with a slice per command (and idle slices between, so each track
// tiles the run), the host driver's track, flow arrows from each dependency token's push to its
// pop, and counter tracks sampled per window.
// Timestamps are cycles (1 cycle = 1 "microsecond" of the format). docs/profiling.md "Timeline".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "debugger/json/Json.h"
#include "emu/drive/Driver.h"
#include "profile/Attribution.h"
#include "profile/HostTrack.h"

namespace bud::profile {

/// Samples the design's counters every `window` cycles of a run (at pauses it asks for; nothing
/// per cycle), for the trace's counter tracks. Memory is bounded: when kMaxSamples samples are
/// held, the window doubles and every other sample is dropped, so a run of any length keeps
/// between kMaxSamples / 2 and kMaxSamples samples (window() says the final window).
class TraceWindows final : public drive::Participant {
 public:
  static constexpr size_t kMaxSamples = 8192;
  TraceWindows(const emu::Emulator& emu, uint64_t window);
  uint64_t next_pause(uint64_t now) const override { return (now / window_ + 1) * window_; }
  void on_start(uint64_t cycle) override { sample(cycle); }
  drive::PauseAction on_pause(uint64_t cycle) override {
    sample(cycle);
    return drive::PauseAction::Continue;
  }
  /// Takes the last sample at the end of the run (call once the driver has stopped).
  void finish(uint64_t cycle) { sample(cycle); }

  struct Sample {
    uint64_t cycle = 0;
    std::vector<uint64_t> counters;  ///< every counter, the design's order
    /// The harness's thermal model (signals thermal.temp_mc, thermal.clamped): the die
    /// temperature in milli-degrees C (0 when the model is off) and the clamp.
    int64_t temp_mc = 0;
    bool clamped = false;
  };
  const std::vector<Sample>& samples() const { return samples_; }
  uint64_t window() const { return window_; }

 private:
  void sample(uint64_t cycle);
  const emu::Emulator& emu_;
  std::optional<emu::SignalId> temp_, clamped_;
  uint64_t window_;
  std::vector<Sample> samples_;
};

/// The trace of a run that ended at edge cycle `end`: metadata; per holder one slice ("X") per
/// command (fetch: from the cycle after the previous dispatch to its own dispatch) and an idle
/// slice for every gap, so that each holder's slices tile cycles 1..end exactly; with `host` the
/// host's track (its activities, waits between them, instant events for the interrupt and the
/// output read-back), tiling 1..end too; a flow ("s" -> "f", one id per token) from the command
/// that pushed each dependency token to the one that popped it; counter ("C") events per window:
/// each engine's stall rate, DRAM read/write bytes per cycle and the MAC array's utilisation, and
/// with the thermal model on, the die temperature (degrees C) and the clamp (0/1).
json::Json trace_json(const Attribution& a, const workload::Program& program,
                      const emu::DesignInfo& design, const TraceWindows& windows,
                      const HostTrack* host, uint64_t end);

/// Track ids of the trace: the holders are 1..4 (fetch, load, compute, store), the host 5.
inline constexpr int kHostTid = kNumHolders + 1;

/// A trace in a few numbers, for reports: {"end_cycle", "tokens", "tracks": [{tid, name, slices
/// (command slices; host: activities), busy_cycles, first, last}], "host": [{name, ts, dur}]
/// (the host's activities and instants, in order)}.
json::Json timeline_summary(const json::Json& trace);

/// Writes `trace` to `path`. Error message or empty.
std::string write_trace(const json::Json& trace, const std::string& path);

}  // namespace bud::profile
