#include "tools/bud/CorpusSubmitCommand.h"

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "replay/Corpus.h"
#include "replay/InputFile.h"
#include "replay/PacketReader.h"
#include "replay/ShardResults.h"
#include "replay/SlurmScripts.h"
#include "tools/bud/Output.h"
#include "tools/bud/SlurmSubmit.h"

namespace bud::cli {

namespace fs = std::filesystem;

namespace {

constexpr int kExitSchedulerFailed = 3;
// Slurm's default MaxArraySize is 1001 (task ids 0..1000).
constexpr uint32_t kMaxDefaultShards = 1000;

}  // namespace

void setup_corpus_submit(CLI::App& corpus, CorpusSubmitOptions& options) {
  auto* sub = corpus.add_subcommand(
      "submit", "Submit a corpus replay to a cluster scheduler: a job array and a merge job");
  sub->footer(
      "Examples:\n"
      "  bud corpus submit --slurm corpus/ --out runs/r1             # one task per packet\n"
      "  bud corpus submit --slurm corpus/ --out runs/r1 --shards 16 --partition ci --time "
      "1:00:00\n"
      "  bud corpus submit --slurm corpus/ --dry-run                 # write the scripts only\n"
      "  bud corpus submit --slurm corpus/ -- --allow-revision-mismatch   # bud replay options\n"
      "  bud corpus submit --slurm long.bpk --shards 8     # one packet's windows on 8 tasks\n"
      "OUT gets replay.sbatch (the array: task I replays shard I/N and writes\n"
      "results/shard-I-of-N.{xml,json}), merge.sbatch (bud corpus merge, after any end of the\n"
      "array), logs/, and, when the merge job ran, merged/replay.xml and merged/summary.json.\n"
      "Exit status: 0 submitted (or written), 2 bad input, 3 sbatch failed.");
  sub->add_option("--slurm", options.slurm,
                  "The corpus directory (*.bpk), or one packet split by its windows, submitted to "
                  "Slurm")
      ->required();
  sub->add_option("--out", options.out, "Run directory: scripts, logs, results, merged report")
      ->capture_default_str();
  sub->add_option("--shards", options.shards,
                  "Array tasks (default: one per packet, at most 1000)");
  sub->add_option("--partition", options.partition, "sbatch --partition");
  sub->add_option("--time", options.time_limit, "sbatch --time of each task and the merge");
  sub->add_option("--sbatch", options.sbatch, "The sbatch program")->capture_default_str();
  sub->add_flag("--dry-run", options.dry_run, "Write the scripts, submit nothing");
  sub->add_flag("--json", options.json, "Print one JSON object");
  sub->add_option("replay_args", options.replay_args, "After --: options for each bud replay");
}

int run_corpus_submit(const CorpusSubmitOptions& options) {
  const char* cmd = "corpus submit";
  std::string error;
  // A corpus directory is split by packets; one packet file by its checkpoint windows (each
  // array task a window shard, docs/packets.md "Window shards").
  size_t units = 0;
  const bool one_packet = fs::is_regular_file(options.slurm);
  if (one_packet) {
    auto packet = replay::read_packet(options.slurm, error);
    if (!packet) return fail_command(cmd, options.json, 2, "--slurm " + replay::printable(error));
    units = std::max<size_t>(1, packet->windows.size());
  } else {
    auto packets = replay::list_packets(options.slurm, error);
    if (!packets) return fail_command(cmd, options.json, 2, "--slurm " + replay::printable(error));
    if (packets->empty())
      return fail_command(
          cmd, options.json, 2,
          "--slurm " + replay::printable(options.slurm) + ": no *.bpk packets in this directory");
    units = packets->size();
  }
  replay::SlurmScripts s;
  std::error_code ec;
  s.bud = fs::read_symlink("/proc/self/exe", ec).string();
  if (ec)
    return fail_command(cmd, options.json, 2, "cannot find the bud executable: " + ec.message());
  s.corpus = fs::absolute(options.slurm).lexically_normal().string();
  s.run_dir = fs::absolute(options.out).lexically_normal().string();
  while (s.run_dir.size() > 1 && s.run_dir.back() == '/') s.run_dir.pop_back();
  s.shards = options.shards ? options.shards
                            : static_cast<uint32_t>(std::min<size_t>(units, kMaxDefaultShards));
  s.partition = options.partition;
  s.time_limit = options.time_limit;
  s.replay_args = options.replay_args;
  for (const auto& dir : {s.run_dir, s.logs_dir(), s.results_dir()}) {
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir))
      return fail_command(cmd, options.json, 2,
                          replay::printable(dir) + ": cannot create the directory" +
                              (ec ? ": " + ec.message() : std::string()));
  }
  const std::pair<std::string, std::string> scripts[] = {
      {s.replay_script_path(), s.replay_script()}, {s.merge_script_path(), s.merge_script()}};
  for (const auto& [path, text] : scripts) {
    if (auto e = replay::write_file_atomically(path, text); !e.empty())
      return fail_command(cmd, options.json, 2, e);
  }
  SlurmSubmission sub =
      slurm_commands(options.sbatch, s.replay_script_path(), s.merge_script_path());
  const std::string what = one_packet ? "1 packet of " + std::to_string(units) + " windows"
                                      : std::to_string(units) + " packets";
  Json j = Json::object();
  j["corpus"] = s.corpus;
  j["packets"] = one_packet ? size_t{1} : units;
  if (one_packet) j["windows"] = units;
  j["shards"] = s.shards;
  j["replay_script"] = s.replay_script_path();
  j["merge_script"] = s.merge_script_path();
  j["report"] = s.merged_dir() + "/replay.xml";
  if (options.dry_run) {
    j["dry_run"] = true;
    j["commands"] = {joined_command(sub.array_command), joined_command(sub.merge_command)};
    if (options.json) {
      std::cout << j.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
    } else {
      std::cout << "wrote " << s.replay_script_path() << " (" << s.shards << " tasks, " << what
                << ") and " << s.merge_script_path() << "\nto submit:\n  "
                << joined_command(sub.array_command) << "\n  " << joined_command(sub.merge_command)
                << "\n";
    }
    return 0;
  }
  if (auto e = submit(sub, s.merge_script_path()); !e.empty())
    return fail_command(cmd, options.json, kExitSchedulerFailed, e);
  const std::string& array_id = sub.array_job;
  const std::string& merge_id = sub.merge_job;
  j["array_job"] = array_id;
  j["merge_job"] = merge_id;
  if (options.json) {
    std::cout << j.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
  } else {
    std::cout << "submitted replay array job " << array_id << " (" << s.shards << " tasks, " << what
              << "): " << s.replay_script_path() << "\n"
              << "submitted merge job " << merge_id << " (after any end of " << array_id
              << "): " << s.merge_script_path() << "\n"
              << "report: " << s.merged_dir() << "/replay.xml\n";
  }
  return 0;
}

}  // namespace bud::cli
