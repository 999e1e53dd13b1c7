#include "tools/bud/CorpusDashboardCommand.h"

#include <iostream>

#include "replay/ShardResults.h"
#include "replay/dashboard/Dashboard.h"
#include "tools/bud/Output.h"

namespace bud::cli {

void setup_corpus_dashboard(CLI::App& corpus, CorpusDashboardOptions& options) {
  auto* sub = corpus.add_subcommand(
      "dashboard", "Bring-up evidence per model revision from the evidence database");
  sub->footer(
      "Examples:\n"
      "  bud corpus dashboard evidence.db\n"
      "  bud corpus dashboard evidence.db --json\n"
      "  bud corpus dashboard evidence.db --html evidence.html   # one self-contained page\n"
      "Per revision, in the order first recorded: replay success rate, failing packets (the\n"
      "escape-risk trend), still failing, newly failing, newly fixed, flaky (verdict changed\n"
      "between runs of the same revision). Exit status: 0, or 2 bad input.");
  sub->add_option("db", options.db, "The evidence database (bud corpus record)")->required();
  sub->add_option("--html", options.html, "Also write the dashboard as an HTML page to FILE");
  sub->add_flag("--json", options.json, "Print one JSON object");
}

int run_corpus_dashboard(const CorpusDashboardOptions& options) {
  const char* cmd = "corpus dashboard";
  std::string error;
  auto db = replay::EvidenceDb::open(options.db, false, error);
  if (!db) return fail_command(cmd, options.json, 2, error);
  auto rows = db->rows(error);
  if (!rows) return fail_command(cmd, options.json, 2, error);
  const auto d = replay::Dashboard::from(*rows);
  if (!options.html.empty())
    if (auto e = replay::write_file_atomically(options.html, d.html()); !e.empty())
      return fail_command(cmd, options.json, 2, e);
  if (options.json)
    std::cout << d.json().dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
  else
    std::cout << d.text();
  return 0;
}

}  // namespace bud::cli
