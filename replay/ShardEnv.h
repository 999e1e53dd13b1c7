// Which shard of a corpus this process replays: an explicit `--shard I/N`, or the variables of the
// engine that runs the job — Slurm job arrays, LSF job arrays, Bazel test sharding, GitLab
// parallel jobs (docs/packets.md, "Shards from the scheduler").
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace bud::replay {

/// Shard `index` of `total` (0-based index): packet i (in sorted name order) belongs to shard
/// i % total.
struct Shard {
  uint32_t index = 0;
  uint32_t total = 1;
  /// "I/N"
  std::string text() const { return std::to_string(index) + "/" + std::to_string(total); }
  /// "shard-0003-of-0008": names a shard's result files so that they sort in shard order.
  std::string file_stem() const;
  bool operator==(const Shard&) const = default;
};

/// Parses "I/N" (0 <= I < N). nullopt and `error` on bad text.
std::optional<Shard> parse_shard(const std::string& text, std::string& error);

/// A shard and where it came from ("--shard", "Slurm: SLURM_ARRAY_TASK_ID=3 ...").
struct ShardChoice {
  Shard shard;
  std::string source;
};

/// Looks a variable up (null: unset). Tests pass a map; bud passes getenv.
using Getenv = std::function<const char*(const char*)>;

/// The shard from the environment's scheduler variables, in this order of engines:
///   Slurm   SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_COUNT, or SLURM_ARRAY_TASK_MIN/MAX
///           (and SLURM_ARRAY_TASK_STEP): index (ID - MIN) / STEP, total COUNT
///   LSF     LSB_JOBINDEX (1-based; 0 means not an array job) with LSB_JOBINDEX_END (an array
///           submitted as NAME[1-N], optionally with :STEP in LSB_JOBINDEX_STEP) or BUD_LSF_SHARDS
///   Bazel   TEST_SHARD_INDEX, TEST_TOTAL_SHARDS (0-based); TEST_SHARD_STATUS_FILE is touched
///   GitLab  CI_NODE_INDEX (1-based), CI_NODE_TOTAL (CI_NODE_TOTAL alone: not a parallel job)
/// nullopt with an empty `error` when no engine's variables are set. nullopt and one `error`
/// line naming the variable when one is malformed, incomplete or out of range, or when two
/// engines name different shards.
std::optional<ShardChoice> shard_from_environment(std::string& error, const Getenv& getenv);
/// The same with the process environment.
std::optional<ShardChoice> shard_from_environment(std::string& error);

}  // namespace bud::replay
