// `bud corpus dashboard DB [--json] [--html OUT]`: the bring-up evidence per model revision from
// the evidence database (docs/packets.md, "Evidence dashboard").
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace bud::cli {

struct CorpusDashboardOptions {
  std::string db;
  std::string html;
  bool json = false;
};

void setup_corpus_dashboard(CLI::App& corpus, CorpusDashboardOptions& options);
/// Exit code: 0 shown, 2 bad input (no such database, another schema version, OUT not
/// writable).
int run_corpus_dashboard(const CorpusDashboardOptions& options);

}  // namespace bud::cli
