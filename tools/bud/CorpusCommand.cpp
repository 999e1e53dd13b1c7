#include "tools/bud/CorpusCommand.h"

namespace bud::cli {

void setup_corpus(CLI::App& app, CorpusOptions& options) {
  auto* sub = app.add_subcommand(
      "corpus",
      "Replay corpora at scale: merge shard results, submit to a scheduler, evidence report");
  sub->require_subcommand(1);
  sub->footer(
      "Examples:\n"
      "  bud corpus submit --slurm corpus/ --out runs/r1    # a job array and a merge job\n"
      "  bud corpus merge merged/ runs/r1/results           # the shards' results in one report\n"
      "  bud corpus record evidence.db runs/r1/results --run r1; bud corpus report evidence.db\n"
      "See docs/packets.md, \"Corpora on a cluster\".");
  setup_corpus_merge(*sub, options.merge_options);
  setup_corpus_submit(*sub, options.submit_options);
  setup_corpus_record(*sub, options.record_options);
  setup_corpus_report(*sub, options.report_options);
  options.merge = sub->get_subcommand("merge");
  options.submit = sub->get_subcommand("submit");
  options.record = sub->get_subcommand("record");
  options.report = sub->get_subcommand("report");
}

int run_corpus(const CorpusOptions& options) {
  if (options.merge->parsed()) return run_corpus_merge(options.merge_options);
  if (options.submit->parsed()) return run_corpus_submit(options.submit_options);
  if (options.record->parsed()) return run_corpus_record(options.record_options);
  if (options.report->parsed()) return run_corpus_report(options.report_options);
  return 2;
}

}  // namespace bud::cli
