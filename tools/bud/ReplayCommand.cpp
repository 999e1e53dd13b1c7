#include "tools/bud/ReplayCommand.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "bud/ModelRevision.h"
#include "debugger/bisect/GoldenPrefixChecker.h"
#include "debugger/json/Json.h"
#include "design/DesignReplay.h"
#include "replay/Corpus.h"
#include "replay/InputFile.h"
#include "replay/PacketReader.h"
#include "replay/PacketRun.h"
#include "replay/ShardResults.h"
#include "replay/WindowReplay.h"
#include "tools/bud/Output.h"

namespace bud::cli {

using json::Json;

namespace {

int aggregate(const std::vector<replay::ReplayOutcome>& outcomes) {
  bool untestable = false;
  for (const auto& o : outcomes) {
    if (o.exit_code() == 1) return 1;
    if (o.exit_code() == 125) untestable = true;
  }
  return untestable ? 125 : 0;
}

// Verifies this shard's windows of one packet and writes them to --results for bud corpus merge.
int run_window_shard(const ReplayCommandOptions& options, const std::string& path,
                     const replay::CorpusOptions& co, const std::string& source) {
  if (options.results.empty())
    return fail_command("replay", options.json, 2,
                        "a window shard of one packet needs --results DIR (for bud corpus merge)");
  const auto t0 = std::chrono::steady_clock::now();
  std::string error;
  replay::ShardResults shard{co.shard, source, build::kModelRevision, {}, std::nullopt};
  shard.result.total_packets = 1;
  if (auto p = replay::read_packet(path, error)) {
    shard.window_shard = replay::replay_window_shard(*p, co.replay, co.shard, options.jobs);
  } else {
    // Unreadable: one window, whose shard says why (as replay_window_shard() does).
    replay::ReplayOutcome o;
    o.packet = path;
    o.message = error;
    shard.window_shard = replay::WindowShardResult{path, 1, 0, {}};
    if (const auto [first, last] = replay::window_shard_range(1, co.shard); first < last)
      shard.window_shard->results.push_back({0, 0, 0, true, true, o});
  }
  auto& ws = *shard.window_shard;
  ws.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto stem = (std::filesystem::path(options.results) / co.shard.file_stem()).string();
  if (auto e = replay::write_file_atomically(
          stem + ".json",
          shard.to_json().dump(1, ' ', false, Json::error_handler_t::replace) + "\n");
      !e.empty())
    return fail_command("replay", options.json, 2, e);
  const auto [first, last] = replay::window_shard_range(ws.windows, co.shard);
  const bool ends = !ws.results.empty() && ws.results.back().tail;
  if (options.json) {
    std::cout << Json{{"packet", path},        {"shard", co.shard.text()},
                      {"windows", ws.windows}, {"first_window", first},
                      {"end_window", last},    {"verified", ws.results.size()},
                      {"ends_replay", ends},   {"results", stem + ".json"}}
                     .dump(-1, ' ', false, Json::error_handler_t::replace)
              << "\n";
  } else {
    std::cout << replay::printable(path) << ": shard " << co.shard.text() << ": "
              << (first < last
                      ? "windows " + std::to_string(first) + ".." + std::to_string(last - 1)
                      : std::string("no windows"))
              << " of " << ws.windows << ", " << ws.results.size() << " verified"
              << (ends ? ", the replay ends in this shard" : "") << "; results in "
              << replay::printable(stem) << ".json (bud corpus merge)\n";
  }
  return 0;
}

}  // namespace

void setup_replay(CLI::App& app, ReplayCommandOptions& options) {
  auto* sub = app.add_subcommand(
      "replay", "Re-execute replay packets bit-exactly; did the recorded symptom come back?");
  sub->footer(
      "Examples:\n"
      "  bud run conv --fault memflip:dram:0x100[3]@0 --record fail.bpk; bud replay fail.bpk\n"
      "  bud replay fail.bpk --at 900000          # start from the checkpoint before 900000\n"
      "  bud replay long.bpk -j 2                 # verify its checkpoint windows 2 at a time\n"
      "  git bisect run /tmp/git-bisect-rtl.sh fail.bpk   # copy of tools/git-bisect-rtl.sh\n"
      "  bud replay corpus/ --junit replay.xml -j 4 --shard 0/8   # CI corpus mode\n"
      "  bud replay long.bpk --shard 3/8 --results res/  # windows of one packet on 8 machines\n"
      "  bud design run fir.toml --record fir.bpk; bud replay fir.bpk   # a design packet\n"
      "Verdicts: reproduced, fixed (symptom gone, results match the golden model), passed,\n"
      "new-symptom, diverged (digests differ on the same model revision), incompatible.\n"
      "Exit status (git bisect run): 0 symptom absent, 1 symptom present, 125 cannot test\n"
      "(unreadable, incomplete or incompatible packet, other model revision, divergence), 2 "
      "usage.\n"
      "Corpus mode shards with --shard I/N or the scheduler's variables (Slurm and LSF job\n"
      "arrays, Bazel, GitLab parallel jobs; docs/packets.md), and\n"
      "replays each packet in its own process: a crash or a limit is that packet's error\n"
      "(verdict crashed, exit 125) and the report is still written.");
  sub->add_option("packets", options.packets, "Packet files (.bpk) or directories of them")
      ->required();
  sub->add_option("--at", options.at, "Start from the latest checkpoint at or before CYCLE");
  sub->add_flag("--allow-revision-mismatch", options.allow_revision_mismatch,
                "Replay packets recorded with another model revision");
  sub->add_flag("--allow-incomplete", options.allow_incomplete,
                "Replay the recorded prefix of a packet whose recording was interrupted");
  sub->add_flag("--json", options.json, "Print one JSON object");
  sub->add_option("--design-cache", options.design_cache,
                  "Design packets: where their files are written and their models cached "
                  "(default as `bud design build`)");
  sub->add_option("--junit", options.junit, "Write a JUnit XML report to FILE (corpus mode)");
  sub->add_option("-j,--jobs", options.jobs,
                  "Packets replayed in parallel; with one packet, its checkpoint windows")
      ->capture_default_str();
  sub->add_option("--shard", options.shard,
                  "Replay only shard I of N (0-based): I/N (else from Slurm, LSF, Bazel or "
                  "GitLab variables)");
  sub->add_option("--results", options.results,
                  "Corpus mode: write this shard's results to DIR/shard-I-of-N.{xml,json} (for "
                  "bud corpus merge)");
  sub->add_option("--limit-memory-mb", options.limit_memory_mb,
                  "Corpus mode: address-space limit of each packet's replay process (0: none)")
      ->capture_default_str();
  sub->add_option("--limit-cpu-s", options.limit_cpu_s,
                  "Corpus mode: CPU-time limit of each packet's replay process (0: none)")
      ->capture_default_str();
  sub->add_flag("--no-isolation", options.no_isolation,
                "Corpus mode: replay every packet in this process (a crash ends the run)");
}

int run_replay(const ReplayCommandOptions& options) {
  if (options.jobs == 0) {
    return fail_command("replay", options.json, 2, "--jobs must be positive");
  }
  replay::CorpusOptions co;
  co.jobs = options.jobs;
  co.replay.at = options.at;
  co.replay.allow_revision_mismatch = options.allow_revision_mismatch;
  co.replay.allow_incomplete = options.allow_incomplete;
  co.replay.prefix_check = debugger::golden_prefix_check();
  co.replay.design_replay = [cache = options.design_cache](const replay::Packet& p,
                                                           const replay::ReplayOptions& ro) {
    return design::replay_design_packet(p, ro, cache);
  };
  std::string error;
  bool corpus = !options.junit.empty() || !options.shard.empty();
  bool sharded = !options.shard.empty();
  std::string source = options.shard.empty() ? "" : "--shard";
  if (!options.shard.empty()) {
    auto s = replay::parse_shard(options.shard, error);
    if (!s) {
      return fail_command("replay", options.json, 2, "--shard: " + error);
    }
    co.shard = *s;
  } else if (auto s = replay::shard_from_environment(error)) {
    co.shard = s->shard;
    source = s->source;
    corpus = true;
    sharded = true;
  } else if (!error.empty()) {
    return fail_command("replay", options.json, 2, "shard from the environment: " + error);
  }
  if (!options.results.empty()) {
    corpus = true;
    std::error_code ec;
    std::filesystem::create_directories(options.results, ec);
    if (ec || !std::filesystem::is_directory(options.results))
      return fail_command("replay", options.json, 2,
                          "--results " + replay::printable(options.results) +
                              ": cannot create the directory" +
                              (ec ? ": " + ec.message() : std::string()));
  }
  std::vector<std::string> paths;
  for (const auto& p : options.packets) {
    if (std::filesystem::is_directory(p)) {
      corpus = true;
      auto list = replay::list_packets(p, error);
      if (!list) {
        return fail_command("replay", options.json, 2, error);
      }
      // An empty corpus is a valid state (a new corpus, a shard of nothing): it gets a valid
      // report with tests="0", and says so.
      if (list->empty())
        std::cerr << "bud replay: " << p << ": no *.bpk packets in this directory\n";
      paths.insert(paths.end(), list->begin(), list->end());
    } else {
      paths.push_back(p);
    }
  }
  // One packet file with a shard (--shard or the scheduler's variables): a window shard, the
  // packet's windows split across machines; bud corpus merge combines the shards' results into
  // the serial replay's outcome (docs/packets.md, "Window shards").
  if (sharded && paths.size() == 1 && !std::filesystem::is_directory(options.packets.front()))
    return run_window_shard(options, paths.front(), co, source);
  // One packet outside corpus mode: -j verifies its checkpoint windows in parallel (the same
  // outcome as -j 1, docs/packets.md "Window-parallel replay").
  if (!corpus && paths.size() == 1) {
    co.replay.window_jobs = options.jobs;
    co.jobs = 1;
  }
  // Corpus mode isolates each packet: a crash or a resource limit becomes that packet's
  // "crashed" verdict and the report is still written.
  co.isolation.enabled = corpus && !options.no_isolation;
  co.isolation.memory_bytes = options.limit_memory_mb << 20;
  co.isolation.cpu_seconds = options.limit_cpu_s;
  const auto t0 = std::chrono::steady_clock::now();
  const auto result = replay::replay_corpus(paths, co);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!options.junit.empty()) {
    const std::string xml = replay::junit_xml(result, "bud-replay");
    if (xml.empty())
      return fail_command("replay", options.json, 2, options.junit + ": cannot render the report");
    std::ofstream out(options.junit);
    out << xml;
    out.close();
    if (!out) return fail_command("replay", options.json, 2, options.junit + ": cannot write");
  }
  if (!options.results.empty()) {
    // One shard's results, named by the shard, for `bud corpus merge`.
    replay::ShardResults shard{co.shard, source, build::kModelRevision, result, std::nullopt};
    const auto stem = (std::filesystem::path(options.results) / co.shard.file_stem()).string();
    const std::string xml = replay::junit_xml(result, "bud-replay");
    auto e = replay::write_file_atomically(stem + ".xml", xml);
    if (e.empty())
      e = replay::write_file_atomically(
          stem + ".json",
          shard.to_json().dump(1, ' ', false, Json::error_handler_t::replace) + "\n");
    if (!e.empty()) return fail_command("replay", options.json, 2, e);
  }
  const int code = aggregate(result.outcomes);
  if (options.json) {
    Json j = Json::object();
    j["exit_code"] = code;
    // Untestable packets (unreadable, truncated, incompatible, diverged) are errors of the
    // command: the first one is named at the top, as every --json error is.
    for (const auto& o : result.outcomes) {
      if (o.verdict == replay::Verdict::Incompatible || o.verdict == replay::Verdict::Diverged ||
          o.verdict == replay::Verdict::Crashed) {
        j["error"] = replay::verdict_name(o.verdict);
        j["message"] = o.message;
        break;
      }
    }
    j["seconds"] = seconds;
    j["total_packets"] = result.total_packets;
    j["shard"] = std::to_string(co.shard.index) + "/" + std::to_string(co.shard.total);
    Json arr = Json::array();
    for (const auto& o : result.outcomes) arr.push_back(replay::outcome_json(o));
    j["packets"] = std::move(arr);
    std::cout << j.dump(-1, ' ', false, json::Json::error_handler_t::replace) << "\n";
    return code;
  }
  // Messages quote packet strings (symptoms): printable, never raw, on a terminal.
  using replay::printable;
  for (const auto& o : result.outcomes) {
    for (const auto& n : o.notes)
      std::cerr << "bud replay: note: " << printable(o.packet) << ": " << printable(n) << "\n";
    if (o.verdict == replay::Verdict::Incompatible)
      std::cerr << "bud replay: " << printable(o.message) << "\n";
    else if (o.verdict == replay::Verdict::Crashed)
      std::cerr << "bud replay: " << printable(o.packet) << ": crashed: " << printable(o.message)
                << "\n";
    else
      std::cout << printable(o.packet) << ": " << replay::verdict_name(o.verdict) << ": "
                << printable(o.message) << " [cycles " << o.start_cycle << ".." << o.end_cycle
                << "]\n";
  }
  if (corpus) {
    size_t counts[replay::kNumVerdicts] = {};
    for (const auto& o : result.outcomes) counts[static_cast<int>(o.verdict)]++;
    std::cout << "corpus: " << result.outcomes.size() << " of " << result.total_packets
              << " packets (shard " << co.shard.index << "/" << co.shard.total << "): ";
    for (int v = 0; v < replay::kNumVerdicts; ++v)
      std::cout << (v ? ", " : "") << counts[v] << " "
                << replay::verdict_name(static_cast<replay::Verdict>(v));
    std::cout << "\n";
  }
  return code;
}

}  // namespace bud::cli
