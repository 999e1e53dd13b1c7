// A profiled run: the same checked run as `bud run` (run::finish through one driver), with the
// attribution observer taking part. Nothing else steps the emulator.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "emu/drive/Intervention.h"
#include "emu/run/RunJob.h"
#include "profile/Attribution.h"
#include "profile/HostTrack.h"
#include "profile/Trace.h"

namespace bud::profile {

/// The outcome of one profiled run.
struct ProfiledRun {
  run::RunReport report;  ///< the checked run's report, exactly as `bud run` would give it
  std::unique_ptr<Attribution> attribution;  ///< finished; null when the run could not start
  std::unique_ptr<TraceWindows> windows;     ///< counter samples, when a trace window was asked
  std::unique_ptr<HostTrack> host;           ///< the host's CSR accesses (null: no host CSR port)
  uint64_t end_cycle = 0;           ///< the emulator's cycle when the run stopped
  emu::DesignInfo design;                    ///< what the design said about itself
  std::string error;       ///< why it could not start or be profiled (bad_input says which)
  bool bad_input = false;  ///< the run's options were rejected (fault on no signal, ...)
};

/// Changes from outside the design to apply during the run (a packet's recorded deposits,
/// forces, memory writes), resolved against the started emulator: nullopt and `error` when one
/// cannot apply to it.
using InterventionSource = std::function<std::optional<std::vector<drive::Intervention>>(
    const emu::Emulator&, std::string& error)>;

/// Runs `prepared` on a fresh emulator of the design the options name, profiling it; with
/// `trace_window` > 0 it also samples the counters every that many cycles (for --trace); it
/// always records the host's CSR accesses (a design without a host CSR port gets no host
/// track), and
/// with `interventions` it applies them at their cycles (as a replay does).
/// A design the profiler cannot read (not the NPU ISA) is an error, not bad input.
/// `at_end`, when given, sees the emulator once the run has stopped (before it is destroyed).
ProfiledRun run_profiled(const run::PreparedRun& prepared, const run::RunOptions& options,
                         uint64_t trace_window = 0, const InterventionSource& interventions = {},
                         const std::function<void(const emu::Emulator&)>& at_end = {});

}  // namespace bud::profile
