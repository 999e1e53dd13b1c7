// `bud corpus ...`: a replay corpus run at scale — merging the shards' results (merge) and
// submitting the corpus to a cluster scheduler (submit), the evidence database (record, report).
// Each verb has its own file pair.
#pragma once

#include <CLI/CLI.hpp>

#include "tools/bud/CorpusMergeCommand.h"
#include "tools/bud/CorpusRecordCommand.h"
#include "tools/bud/CorpusReportCommand.h"
#include "tools/bud/CorpusSubmitCommand.h"

namespace bud::cli {

struct CorpusOptions {
  CLI::App* merge = nullptr;
  CLI::App* submit = nullptr;
  CLI::App* record = nullptr;
  CLI::App* report = nullptr;
  CorpusMergeOptions merge_options;
  CorpusSubmitOptions submit_options;
  CorpusRecordOptions record_options;
  CorpusReportOptions report_options;
};

void setup_corpus(CLI::App& app, CorpusOptions& options);
/// The exit code of the verb that was given.
int run_corpus(const CorpusOptions& options);

}  // namespace bud::cli
