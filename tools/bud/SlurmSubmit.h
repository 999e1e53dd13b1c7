// Submitting a job array and its merge job to Slurm (`bud corpus submit --slurm`, `bud matrix
// --slurm`): `sbatch --parsable ARRAY`, then `sbatch --parsable --dependency=afterany:ID
// MERGE`, so the merge runs after every task ended however it ended.
#pragma once

#include <string>
#include <vector>

namespace bud::cli {

struct SlurmSubmission {
  std::vector<std::string> array_command;
  /// The merge's command line with the array's job id (ARRAY_JOB_ID before it is known).
  std::vector<std::string> merge_command;
  std::string array_job, merge_job;  ///< job ids, once submitted
};

/// The commands that submit `array_script` and then `merge_script` with `sbatch`.
SlurmSubmission slurm_commands(const std::string& sbatch, const std::string& array_script,
                               const std::string& merge_script);
/// Runs them. Empty, or one line naming the command that failed, its status and its message.
std::string submit(SlurmSubmission& s, const std::string& merge_script);
/// A command line, each argument quoted for a POSIX shell.
std::string joined_command(const std::vector<std::string>& argv);

}  // namespace bud::cli
