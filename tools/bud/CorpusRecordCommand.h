// `bud corpus record DB RESULTS... --run NAME`: adds shard results (bud replay --results) to the
// evidence database, one row per packet of the run (docs/packets.md, "Evidence report").
// Safe to run from many shards at once.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace bud::cli {

struct CorpusRecordOptions {
  std::string db;
  std::vector<std::string> results;
  std::string run;
  bool json = false;
};

void setup_corpus_record(CLI::App& corpus, CorpusRecordOptions& options);
/// Exit code: 0 recorded, 2 bad input (results unreadable or malformed, no revision in them),
/// 3 the database could not be opened or written.
int run_corpus_record(const CorpusRecordOptions& options);

}  // namespace bud::cli
