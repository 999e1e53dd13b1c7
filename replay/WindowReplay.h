// Window-parallel replay: a packet's checkpoint windows are independent (each starts from a
// recorded checkpoint and ends at the next), so `bud replay P -j N` verifies N of them at a time,
// each on an emulator of its own, and reports what the serial replay reports (docs/packets.md,
// "Window-parallel replay").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "replay/ReplayPlan.h"
#include "replay/Replayer.h"
#include "replay/ShardEnv.h"

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

/// One window's verification in a window shard.
struct WindowResult {
  uint32_t index = 0;    ///< among the windows from the replay's start
  uint64_t digests = 0;  ///< digest points and window ends checked in it (non-tail windows)
  uint64_t windows = 0;
  bool tail = false;   ///< the replay ends in this window's run: `outcome` holds its end
  bool whole = false;  ///< `outcome` is the whole replay's (serial: not window-parallel)
  /// A tail's outcome: counts of its own run only, message without the checks' summary
  /// (merge_window_shards() adds both).
  std::optional<ReplayOutcome> outcome;
};

/// What one window shard of a packet found.
struct WindowShardResult {
  std::string packet;                 ///< the packet, as named on the command line
  uint32_t windows = 0;               ///< windows the packet's replay is split into
  double seconds = 0;                 ///< wall clock of this shard (report only)
  std::vector<WindowResult> results;  ///< this shard's, in order, up to its first tail
};

/// Windows [first, last) of `windows` that shard `shard` verifies: contiguous, in order.
std::pair<size_t, size_t> window_shard_range(size_t windows, const Shard& shard);

/// Verifies the windows of `packet` that belong to `shard` (window_shard_range()), each from its
/// recorded checkpoint, `jobs` at a time: a packet split across machines. A window that diverges
/// or in which the run stops goes on to the end of the replay and concludes; the shard's later
/// windows are abandoned. A packet that is not window-parallel, or cannot be replayed, is one
/// window: the shard holding window 0 of 1 replays it serially (or gives its Incompatible outcome).
WindowShardResult replay_window_shard(const Packet& packet, const ReplayOptions& options,
                                      const Shard& shard, unsigned jobs);

/// The serial replay's outcome from every shard's results: counts summed in window order up to
/// the first window that ends the replay, whose outcome it is. nullopt and `error` when a window
/// before it has no result (a missing shard), a window is reported twice, or the shards disagree
/// on the number of windows.
std::optional<ReplayOutcome> merge_window_shards(
    const std::vector<const WindowShardResult*>& shards, std::string& error);

}  // namespace bud::replay
