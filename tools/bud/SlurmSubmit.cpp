#include "tools/bud/SlurmSubmit.h"

#include <algorithm>

#include "replay/SlurmScripts.h"
#include "tools/process/Subprocess.h"

namespace bud::cli {

namespace {

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

// `sbatch --parsable` prints "JOBID" or "JOBID;CLUSTER".
std::string job_id(const std::string& out) {
  std::string id = trimmed(out);
  if (auto semi = id.find(';'); semi != std::string::npos) id.resize(semi);
  const bool digits = !id.empty() && std::all_of(id.begin(), id.end(), ::isdigit);
  return digits ? id : std::string();
}

std::vector<std::string> merge_argv(const std::string& sbatch, const std::string& id,
                                    const std::string& merge_script) {
  return {sbatch, "--parsable", "--dependency=afterany:" + id, merge_script};
}

}  // namespace

std::string joined_command(const std::vector<std::string>& argv) {
  std::string t;
  for (const auto& a : argv) {
    if (!t.empty()) t += ' ';
    t += replay::shell_quote(a);
  }
  return t;
}

SlurmSubmission slurm_commands(const std::string& sbatch, const std::string& array_script,
                               const std::string& merge_script) {
  SlurmSubmission s;
  s.array_command = {sbatch, "--parsable", array_script};
  s.merge_command = merge_argv(sbatch, "ARRAY_JOB_ID", merge_script);
  return s;
}

std::string submit(SlurmSubmission& s, const std::string& merge_script) {
  const process::Finished array = process::run(s.array_command);
  s.array_job = array.status == 0 ? job_id(array.out) : "";
  if (s.array_job.empty())
    return joined_command(s.array_command) + " failed (status " + std::to_string(array.status) +
           "): " + trimmed(array.err.empty() ? array.out : array.err);
  s.merge_command = merge_argv(s.array_command.front(), s.array_job, merge_script);
  const process::Finished merge = process::run(s.merge_command);
  s.merge_job = merge.status == 0 ? job_id(merge.out) : "";
  if (s.merge_job.empty())
    return "the array is job " + s.array_job + ", but " + joined_command(s.merge_command) +
           " failed (status " + std::to_string(merge.status) +
           "): " + trimmed(merge.err.empty() ? merge.out : merge.err);
  return {};
}

}  // namespace bud::cli
