// `bud corpus submit --slurm DIR`: writes a Slurm job-array script that replays the corpus DIR one
// shard per task and a merge script, submits the array and then the merge job with
// --dependency=afterany on it, and prints what it submitted (docs/packets.md, "Corpora on a
// cluster"). --dry-run writes the scripts only.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace bud::cli {

struct CorpusSubmitOptions {
  std::string slurm;                   ///< the corpus directory
  std::string out = "bud-corpus-run";  ///< scripts, logs, results, merged report
  uint32_t shards = 0;                 ///< array tasks; 0: one per packet, at most 1000
  std::string partition;
  std::string time_limit;
  std::string sbatch = "sbatch";
  bool dry_run = false;
  bool json = false;
  std::vector<std::string> replay_args;  ///< after --: passed to each task's bud replay
};

void setup_corpus_submit(CLI::App& corpus, CorpusSubmitOptions& options);
/// Exit code: 0 submitted (or, with --dry-run, written), 2 bad input (no such corpus, no
/// packets, bad options, OUT not writable), 3 sbatch failed (its message is printed).
int run_corpus_submit(const CorpusSubmitOptions& options);

}  // namespace bud::cli
