// `bud corpus report DB [--json] [--html OUT]` (alias `dashboard`): the bring-up evidence per
// model revision from the evidence database (docs/packets.md, "Evidence report").
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace bud::cli {

struct CorpusReportOptions {
  std::string db;
  std::string html;
  bool json = false;
};

void setup_corpus_report(CLI::App& corpus, CorpusReportOptions& options);
/// Exit code: 0 shown, 2 bad input (no such database, a newer schema version, OUT not
/// writable, the page cannot be rendered: no results yet, no matplotlib).
int run_corpus_report(const CorpusReportOptions& options);

}  // namespace bud::cli
