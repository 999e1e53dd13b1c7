// `bud corpus merge OUT_DIR RESULTS...`: the shards' results files of one corpus replay (written by
// `bud replay DIR --results D`) combined into one JUnit report and one summary; missing,
// duplicated and mismatched shards are named (docs/packets.md, "Merging shards").
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace bud::cli {

struct CorpusMergeOptions {
  std::string out_dir;
  std::vector<std::string> results;  ///< shard-*.json files or directories of them
  bool json = false;
  uint32_t expect_shards = 0;  ///< 0: as many as the files say
};

void setup_corpus_merge(CLI::App& corpus, CorpusMergeOptions& options);
/// Exit code: 0/1/125 as `bud replay` in corpus mode, 2 bad input (unreadable or malformed
/// results, OUT_DIR not writable), 4 shards missing (the report is still written, with an error
/// test case per missing shard), duplicated or from different replays (nothing written).
int run_corpus_merge(const CorpusMergeOptions& options);

}  // namespace bud::cli
