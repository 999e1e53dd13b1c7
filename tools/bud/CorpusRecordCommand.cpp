#include "tools/bud/CorpusRecordCommand.h"

#include <filesystem>
#include <iostream>

#include "replay/CorpusMerge.h"
#include "replay/InputFile.h"
#include "replay/dashboard/EvidenceDb.h"
#include "tools/bud/Output.h"

namespace bud::cli {

void setup_corpus_record(CLI::App& corpus, CorpusRecordOptions& options) {
  auto* sub = corpus.add_subcommand(
      "record", "Add shard results to the evidence database (SQLite) for bud corpus report");
  sub->footer(
      "Examples:\n"
      "  bud corpus record evidence.db res/ --run pipeline-4711\n"
      "  bud corpus record evidence.db res/shard-0003-of-0008.json --run $SLURM_ARRAY_JOB_ID\n"
      "Each packet's verdict, cycles, time and first failing stage is kept per run and model\n"
      "revision; many shards may record into one database at once.\n"
      "Exit status: 0 recorded, 2 bad input, 3 the database cannot be opened or written.");
  sub->add_option("db", options.db, "The evidence database (created if missing)")->required();
  sub->add_option("results", options.results, "Shard results files or directories of them")
      ->required();
  sub->add_option("--run", options.run, "The CI run these results belong to (e.g. pipeline id)")
      ->required();
  sub->add_flag("--json", options.json, "Print one JSON object");
}

int run_corpus_record(const CorpusRecordOptions& options) {
  const char* cmd = "corpus record";
  std::string error;
  if (options.run.empty()) return fail_command(cmd, options.json, 2, "--run must not be empty");
  auto paths = replay::shard_result_files(options.results, false, error);
  if (!paths) return fail_command(cmd, options.json, 2, error);
  auto files = replay::read_shard_files(*paths, error);
  if (!files) return fail_command(cmd, options.json, 2, error);
  std::vector<replay::EvidenceRow> rows;
  for (const auto& f : *files) {
    if (f.results.revision.empty())
      return fail_command(
          cmd, options.json, 2,
          replay::printable(f.path) + ": no revision (written by an older bud replay --results)");
    const auto& r = f.results.result;
    for (size_t i = 0; i < r.outcomes.size(); ++i) {
      const auto& o = r.outcomes[i];
      replay::EvidenceRow row;
      row.run = options.run;
      row.revision = f.results.revision;
      row.packet = std::filesystem::path(o.packet).filename().string();
      row.verdict = replay::verdict_name(o.verdict);
      row.cycles = o.end_cycle >= o.start_cycle ? o.end_cycle - o.start_cycle : 0;
      row.seconds = i < r.seconds.size() ? r.seconds[i] : 0.0;
      if (o.divergence && !o.divergence->stages.empty()) row.stage = o.divergence->stages.front();
      row.evidence = o.evidence;
      rows.push_back(std::move(row));
    }
  }
  auto db = replay::EvidenceDb::open(options.db, true, error);
  if (!db) return fail_command(cmd, options.json, 3, error);
  if (auto e = db->record(rows); !e.empty()) return fail_command(cmd, options.json, 3, e);
  if (options.json)
    std::cout << Json{{"db", options.db}, {"run", options.run}, {"recorded", rows.size()}}.dump(
                     -1, ' ', false, Json::error_handler_t::replace)
              << "\n";
  else
    std::cout << "recorded " << rows.size() << " packet results of run "
              << replay::printable(options.run) << " in " << replay::printable(options.db) << "\n";
  return 0;
}

}  // namespace bud::cli
