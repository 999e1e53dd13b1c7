// `bud profile P.bpk`: the run a replay packet recorded, ready to profile - the same workload
// (the text embedded in the packet), seeds, emulator configuration, faults and cycle budget,
// and the interventions recorded in it - so its profile is the profile of the original run
// (docs/profiling.md, "Profiling a packet").
#pragma once

#include <string>

#include "emu/run/RunJob.h"
#include "emu/workload/Result.h"
#include "profile/Profiler.h"
#include "replay/PacketReader.h"

namespace bud::profile {

/// A packet's run, prepared with the checks `bud run` makes.
struct RecordedRun {
  replay::Packet packet;
  run::RunOptions options;  ///< as recorded; max_cycles is the recorded end for a prefix
  run::PreparedRun prepared;
  bool prefix = false;  ///< the packet holds only the first cycles of the run (recording stopped)
};

/// True when the file at `path` starts with a replay packet's magic.
bool is_packet_file(const std::string& path);

/// Reads the packet at `path` and prepares the run it recorded. Errors (bad input) name the
/// file: unreadable or incomplete packet, another model revision or packet format, a recording
/// that does not start at cycle 0, an embedded workload that no longer generates the stimulus.
workload::Result<RecordedRun> load_recorded_run(const std::string& path);

/// Profiles the recorded run on a fresh emulator, applying the recorded interventions at their
/// cycles.
ProfiledRun run_recorded(const RecordedRun& recorded, uint64_t trace_window = 0);

}  // namespace bud::profile
