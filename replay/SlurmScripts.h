// The batch scripts `bud corpus submit --slurm` writes: a Slurm job array whose task I replays
// shard I of the corpus (bud replay reads SLURM_ARRAY_TASK_ID/COUNT itself) and writes its
// results, and a merge job, submitted with --dependency=afterany on the array, that combines them
// (docs/packets.md, "Corpora on a cluster").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bud::replay {

/// What the scripts run and where they write. Paths should be absolute: the jobs run wherever
/// the scheduler starts them.
struct SlurmScripts {
  std::string bud;         ///< the bud executable
  std::string corpus;      ///< the corpus directory
  std::string run_dir;     ///< scripts, logs/, results/, merged/
  uint32_t shards = 1;     ///< array tasks
  std::string partition;   ///< empty: the cluster's default
  std::string time_limit;  ///< per task (sbatch --time), empty: the partition's default
  std::vector<std::string> replay_args;  ///< extra `bud replay` arguments

  std::string results_dir() const { return run_dir + "/results"; }
  std::string merged_dir() const { return run_dir + "/merged"; }
  std::string logs_dir() const { return run_dir + "/logs"; }
  std::string replay_script_path() const { return run_dir + "/replay.sbatch"; }
  std::string merge_script_path() const { return run_dir + "/merge.sbatch"; }

  /// The job array script (#SBATCH --array=0-(shards-1)).
  std::string replay_script() const;
  /// The merge script: bud corpus merge --expect-shards N merged/ results/.
  std::string merge_script() const;
};

/// The #SBATCH lines every bud job starts with: job name, output file (LOGS_DIR/LOG, with
/// Slurm's %A/%a/%j patterns), one task of one CPU, and the partition and time limit when given.
std::string sbatch_header(const std::string& name, const std::string& logs_dir,
                          const std::string& log, const std::string& partition,
                          const std::string& time_limit);

/// `s` quoted for a POSIX shell (single quotes; a quote inside becomes '\'').
std::string shell_quote(const std::string& s);

}  // namespace bud::replay
