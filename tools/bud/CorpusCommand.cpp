#include "tools/bud/CorpusCommand.h"

namespace bud::cli {

void setup_corpus(CLI::App& app, CorpusOptions& options) {
  auto* sub = app.add_subcommand(
      "corpus", "Replay corpora at scale: merge shard results, submit to a cluster scheduler");
  sub->require_subcommand(1);
  sub->footer(
      "Examples:\n"
      "  bud corpus submit --slurm corpus/ --out runs/r1    # a job array and a merge job\n"
      "  bud corpus merge merged/ runs/r1/results           # the shards' results in one report\n"
      "See docs/packets.md, \"Corpora on a cluster\".");
  setup_corpus_merge(*sub, options.merge_options);
  setup_corpus_submit(*sub, options.submit_options);
  options.merge = sub->get_subcommand("merge");
  options.submit = sub->get_subcommand("submit");
}

int run_corpus(const CorpusOptions& options) {
  if (options.merge->parsed()) return run_corpus_merge(options.merge_options);
  if (options.submit->parsed()) return run_corpus_submit(options.submit_options);
  return 2;
}

}  // namespace bud::cli
