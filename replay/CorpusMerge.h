// `bud corpus merge`: the shards' results files of one corpus replay combined into one JUnit report
// and one summary, with missing, duplicated and mismatched shards found and named
// (docs/packets.md, "Merging shards").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "debugger/json/Json.h"
#include "replay/ShardResults.h"

namespace bud::replay {

/// One shard's results and the file they came from.
struct ShardFile {
  std::string path;
  ShardResults results;
};

/// The merged corpus.
struct MergedCorpus {
  uint32_t shards = 0;             ///< N, as every shard file says
  CorpusResult result;             ///< every present shard's outcomes, in corpus order
  std::vector<Shard> missing;      ///< shards without a results file
  std::vector<std::string> files;  ///< the results files, by shard
  /// 0/1/125 as CorpusResult::exit_code, or kExitInconsistent when shards are missing.
  int exit_code() const;
  /// {"shards", "missing": ["I/N"...], "total_packets", "replayed", "verdicts": {name: count},
  ///  "not_passing": [{"packet", "verdict", "message"}], "exit_code"}
  json::Json summary_json() const;
  /// JUnit XML: junit_xml() of the outcomes, and an <error type="missing-shard"> test case per
  /// missing shard, so that CI shows a lost shard red.
  std::string junit() const;
};

/// Exit status of `bud corpus merge` when shards are missing, duplicated or disagree.
inline constexpr int kExitInconsistent = 4;

/// The results files among `args`: files as given, directories by their shard-*.json (sorted).
/// nullopt and `error` (naming the argument) if one is unreadable, or if none is found unless
/// `allow_none` (a merge told how many shards to expect: then every one is missing).
std::optional<std::vector<std::string>> shard_result_files(const std::vector<std::string>& args,
                                                           bool allow_none, std::string& error);
/// Reads the files (one line naming the file and field on the first bad one).
std::optional<std::vector<ShardFile>> read_shard_files(const std::vector<std::string>& paths,
                                                       std::string& error);
/// Merges. nullopt and one `error` line when two files hold the same shard (naming both), when
/// the files disagree on the number of shards or of packets (naming the files), or when a
/// shard's packets are not the ones that shard holds. Missing shards are not an error here:
/// they are listed in MergedCorpus::missing. `expected_shards` (0: as the files say) is the
/// number of shards the replay was submitted with: a file that says otherwise is an error.
std::optional<MergedCorpus> merge_shards(const std::vector<ShardFile>& files,
                                         uint32_t expected_shards, std::string& error);

}  // namespace bud::replay
