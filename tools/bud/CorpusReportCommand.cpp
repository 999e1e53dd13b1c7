#include "tools/bud/CorpusReportCommand.h"

#include <iostream>

#include "replay/dashboard/EvidenceReport.h"
#include "tools/bud/Output.h"
#include "tools/plots/HtmlReport.h"

namespace bud::cli {

void setup_corpus_report(CLI::App& corpus, CorpusReportOptions& options) {
  auto* sub = corpus.add_subcommand(
      "report", "Bring-up evidence per model revision from the evidence database");
  // The name bud used before `report`, kept for existing CI scripts.
  sub->alias("dashboard");
  sub->footer(
      "Examples:\n"
      "  bud corpus report evidence.db\n"
      "  bud corpus report evidence.db --json\n"
      "  bud corpus report evidence.db --html evidence.html   # one page of trend plots\n"
      "Per revision, in the order first recorded: replay success rate, failing packets (the\n"
      "escape-risk trend), still failing, newly failing, newly fixed, flaky (verdict changed\n"
      "between runs of the same revision), trigger coverage (armed triggers that hit) and\n"
      "counter completeness (documented counters seen counting). Also `bud corpus dashboard`.\n"
      "Exit status: 0, or 2 bad input.");
  sub->add_option("db", options.db, "The evidence database (bud corpus record)")->required();
  sub->add_option("--html", options.html, "Also write the report as a self-contained HTML page of trend plots to FILE");
  sub->add_flag("--json", options.json, "Print one JSON object");
}

int run_corpus_report(const CorpusReportOptions& options) {
  const char* cmd = "corpus report";
  std::string error;
  auto db = replay::EvidenceDb::open(options.db, false, error);
  if (!db) return fail_command(cmd, options.json, 2, error);
  auto rows = db->rows(error);
  if (!rows) return fail_command(cmd, options.json, 2, error);
  const auto d = replay::EvidenceReport::from(*rows);
  // The page's plots come from matplotlib (tools/plots/corpus_report.py), never drawn here.
  if (!options.html.empty())
    if (auto e = plots::render_html("corpus_report", nlohmann::json::parse(d.json().dump()),
                                    options.html);
        !e.empty())
      return fail_command(cmd, options.json, 2, options.html + ": " + e);
  if (options.json)
    std::cout << d.json().dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
  else
    std::cout << d.text();
  return 0;
}

}  // namespace bud::cli
