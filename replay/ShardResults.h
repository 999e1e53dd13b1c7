// One shard's corpus results as a file: what `bud replay DIR --results OUT` writes beside its
// JUnit report (OUT/shard-I-of-N.json), and what `bud corpus merge` reads back
// (docs/packets.md, "Shard results"). JSON, versioned by its "format" and "version" fields.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "debugger/json/Json.h"
#include "replay/Corpus.h"
#include "replay/ShardEnv.h"
#include "replay/WindowReplay.h"

namespace bud::replay {

/// The JSON form of one outcome (what `bud replay --json` prints per packet).
json::Json outcome_json(const ReplayOutcome& o);

/// A shard's results.
struct ShardResults {
  static constexpr const char* kFormat = "bud-corpus-shard";
  static constexpr int kVersion = 1;

  Shard shard;
  std::string source;    ///< where the shard came from ("--shard", "Slurm: ...")
  std::string revision;  ///< model revision of the bud that replayed it
  CorpusResult result;   ///< outcomes in corpus order, with their corpus indices
  /// A window shard of one packet (then `result` is empty, total_packets 1).
  std::optional<WindowShardResult> window_shard;

  /// {"format", "version", "shard": {"index", "total"}, "source", "revision", "total_packets",
  ///  "exit_code", "packets": [outcome_json + "corpus_index" + "seconds"]}, and for a window
  ///  shard "windows": {"packet", "total", "seconds", "results": [{"index", "digests",
  ///  "windows", "tail", "whole", "outcome": outcome_json or null}]}
  json::Json to_json() const;
  /// Parses `text` (the file `file`, named in errors): nullopt and one line naming the file and
  /// the field at fault.
  static std::optional<ShardResults> parse(const std::string& text, const std::string& file,
                                           std::string& error);
};

/// Writes `text` to `path` through a temporary file and a rename, so that a reader (a merge job
/// started by the scheduler) never sees half a file. A path that exists and is not a regular file
/// (/dev/null, a FIFO) is written in place instead. Error naming the path, or empty.
std::string write_file_atomically(const std::string& path, const std::string& text);

}  // namespace bud::replay
