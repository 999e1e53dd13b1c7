// Window-parallel replay: a packet's checkpoint windows are independent (each starts from a
// recorded checkpoint and ends at the next), so `bud replay P -j N` verifies N of them at a time,
// each on an emulator of its own, and reports what the serial replay reports (docs/packets.md,
// "Window-parallel replay").
#pragma once

#include "replay/ReplayPlan.h"
#include "replay/Replayer.h"

namespace bud::replay {

/// Whether `plan` can be verified window by window: its checkpoints restore on this model (same
/// revision), it has at least two windows from its start, every one of them starts at a recorded
/// checkpoint and every one but the last ends at a digest point where the next one starts.
bool window_parallel(const ReplayPlan& plan);

/// Replays `plan` with its windows verified `jobs` at a time (threads, one emulator per window),
/// each from its recorded checkpoint. The first window that diverges or in which the run stops
/// continues to the end of the replay, as the serial replay would from there, and later windows
/// are abandoned; the outcome (verdict, message, counts, first divergent window, report) is the
/// serial replay's, whatever `jobs`. A window whose checkpoint does not restore makes the whole
/// replay run serially (the serial replay never reads that checkpoint). `o` holds what the plan
/// filled in (packet, revision, notes).
ReplayOutcome replay_windows(const ReplayPlan& plan, unsigned jobs, ReplayOutcome o);

}  // namespace bud::replay
