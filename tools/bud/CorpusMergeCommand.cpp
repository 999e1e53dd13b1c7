#include "tools/bud/CorpusMergeCommand.h"

#include <filesystem>
#include <iostream>

#include "replay/CorpusMerge.h"
#include "replay/InputFile.h"
#include "tools/bud/Output.h"

namespace bud::cli {

void setup_corpus_merge(CLI::App& corpus, CorpusMergeOptions& options) {
  auto* sub = corpus.add_subcommand(
      "merge", "Combine the shards' results of a corpus replay into one JUnit report and summary");
  sub->footer(
      "Examples:\n"
      "  bud replay corpus/ --shard 0/2 --results res/; bud replay corpus/ --shard 1/2 --results "
      "res/\n"
      "  bud corpus merge merged/ res/            # merged/replay.xml, merged/summary.json\n"
      "  bud corpus merge merged/ res/shard-0000-of-0002.json res/shard-0001-of-0002.json --json\n"
      "Exit status: 0 every packet passed or fixed, 1 a symptom reproduced or a packet diverged,\n"
      "125 a packet could not be tested, 2 bad input, 4 shards missing (the report is written,\n"
      "with an error per missing shard), duplicated, or from different replays.");
  sub->add_option("out_dir", options.out_dir, "Directory for replay.xml and summary.json")
      ->required();
  sub->add_option("results", options.results,
                  "Shard results files (shard-I-of-N.json) or directories of them")
      ->required();
  sub->add_flag("--json", options.json, "Print the summary as one JSON object");
  sub->add_option("--expect-shards", options.expect_shards,
                  "The number of shards the replay ran as: shards without results are missing "
                  "even if none wrote any (what the Slurm merge job passes)");
}

int run_corpus_merge(const CorpusMergeOptions& options) {
  const char* cmd = "corpus merge";
  std::string error;
  auto paths = replay::shard_result_files(options.results, options.expect_shards > 0, error);
  if (!paths) return fail_command(cmd, options.json, 2, error);
  auto files = replay::read_shard_files(*paths, error);
  if (!files) return fail_command(cmd, options.json, 2, error);
  auto merged = replay::merge_shards(*files, options.expect_shards, error);
  if (!merged) return fail_command(cmd, options.json, replay::kExitInconsistent, error);
  std::error_code ec;
  std::filesystem::create_directories(options.out_dir, ec);
  if (ec || !std::filesystem::is_directory(options.out_dir))
    return fail_command(cmd, options.json, 2,
                        replay::printable(options.out_dir) + ": cannot create the directory");
  const auto out = std::filesystem::path(options.out_dir);
  const std::string xml = merged->junit();
  if (xml.empty()) return fail_command(cmd, options.json, 2, "cannot render the JUnit report");
  const Json summary = merged->summary_json();
  const std::string summary_text =
      summary.dump(1, ' ', false, Json::error_handler_t::replace) + "\n";
  const std::pair<const char*, std::string> outputs[] = {{"replay.xml", xml},
                                                         {"summary.json", summary_text}};
  for (const auto& [name, text] : outputs)
    if (auto e = replay::write_file_atomically((out / name).string(), text); !e.empty())
      return fail_command(cmd, options.json, 2, e);
  const int code = merged->exit_code();
  std::string missing;
  for (const auto& s : merged->missing) missing += (missing.empty() ? "" : ", ") + s.text();
  if (!missing.empty())
    std::cerr << "bud corpus merge: shards missing (no results file): " << missing
              << "; the report has an error for each\n";
  if (options.json) {
    Json j = summary;
    if (!missing.empty()) {
      j["error"] = "missing_shards";
      j["message"] = "bud corpus merge: shards missing (no results file): " + missing;
    }
    j["report"] = (out / "replay.xml").string();
    std::cout << j.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
    return code;
  }
  for (const auto& o : merged->result.outcomes)
    if (o.exit_code() != 0)
      std::cout << replay::printable(std::filesystem::path(o.packet).filename().string()) << ": "
                << replay::verdict_name(o.verdict) << ": " << replay::printable(o.message) << "\n";
  std::cout << "corpus: " << merged->result.outcomes.size() << " of "
            << merged->result.total_packets << " packets from " << merged->files.size() << " of "
            << merged->shards << " shards: ";
  const auto& verdicts = summary["verdicts"];
  bool first = true;
  for (auto it = verdicts.begin(); it != verdicts.end(); ++it, first = false)
    std::cout << (first ? "" : ", ") << it.value().get<uint64_t>() << " " << it.key();
  std::cout << "\nreport: " << (out / "replay.xml").string() << ", "
            << (out / "summary.json").string() << "\n";
  return code;
}

}  // namespace bud::cli
