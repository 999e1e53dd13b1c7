#include "tools/bud/ReplayCommand.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "debugger/json/Json.h"
#include "replay/Corpus.h"
#include "replay/PacketRun.h"

namespace bud::cli {

using json::Json;

namespace {

Json symptom_json(const std::optional<replay::pb::Symptom>& s) {
  if (!s) return nullptr;
  Json j = Json::object();
  j.set("kind", replay::symptom_kind_name(s->kind()));
  j.set("cycle", s->cycle());
  j.set("message", s->message());
  return j;
}

Json outcome_json(const replay::ReplayOutcome& o) {
  Json j = Json::object();
  j.set("packet", o.packet);
  j.set("verdict", replay::verdict_name(o.verdict));
  j.set("exit_code", o.exit_code());
  j.set("message", o.message);
  Json notes = Json::array();
  for (const auto& n : o.notes) notes.push(n);
  j.set("notes", std::move(notes));
  j.set("recorded_revision", o.recorded_revision);
  j.set("start_cycle", o.start_cycle);
  j.set("end_cycle", o.end_cycle);
  j.set("digests_checked", o.digests_checked);
  j.set("windows_checked", o.windows_checked);
  if (o.divergence) {
    Json d = Json::object();
    d.set("window", o.divergence->window);
    d.set("window_start", o.divergence->window_start);
    d.set("window_end", o.divergence->window_end);
    d.set("cycle", o.divergence->cycle);
    Json st = Json::array();
    for (const auto& s : o.divergence->stages) st.push(s);
    d.set("stages", std::move(st));
    j.set("divergence", std::move(d));
  } else {
    j.set("divergence", nullptr);
  }
  j.set("recorded_symptom", symptom_json(o.recorded_symptom));
  j.set("replay_symptom", symptom_json(o.replay_symptom));
  return j;
}

int aggregate(const std::vector<replay::ReplayOutcome>& outcomes) {
  bool untestable = false;
  for (const auto& o : outcomes) {
    if (o.exit_code() == 1) return 1;
    if (o.exit_code() == 125) untestable = true;
  }
  return untestable ? 125 : 0;
}

}  // namespace

void setup_replay(CLI::App& app, ReplayCommandOptions& options) {
  auto* sub = app.add_subcommand(
      "replay", "Re-execute replay packets bit-exactly; did the recorded symptom come back?");
  sub->footer(
      "Examples:\n"
      "  bud run conv --fault memflip:dram:0x100[3]@0 --record fail.bpk; bud replay fail.bpk\n"
      "  bud replay fail.bpk --at 900000          # start from the checkpoint before 900000\n"
      "  git bisect run /tmp/git-bisect-rtl.sh fail.bpk   # copy of tools/git-bisect-rtl.sh\n"
      "  bud replay corpus/ --junit replay.xml -j 4 --shard 0/8   # CI corpus mode\n"
      "Verdicts: reproduced, fixed (symptom gone, results match the golden model), passed,\n"
      "new-symptom, diverged (digests differ on the same model revision), incompatible.\n"
      "Exit status (git bisect run): 0 symptom absent, 1 symptom present, 125 cannot test\n"
      "(unreadable, incomplete or incompatible packet, other model revision, divergence), 2 "
      "usage.\n"
      "Corpus mode shards with --shard I/N or Bazel's TEST_SHARD_INDEX/TEST_TOTAL_SHARDS.");
  sub->add_option("packets", options.packets, "Packet files (.bpk) or directories of them")
      ->required();
  sub->add_option("--at", options.at, "Start from the latest checkpoint at or before CYCLE");
  sub->add_flag("--allow-revision-mismatch", options.allow_revision_mismatch,
                "Replay packets recorded with another model revision");
  sub->add_flag("--allow-incomplete", options.allow_incomplete,
                "Replay the recorded prefix of a packet whose recording was interrupted");
  sub->add_flag("--json", options.json, "Print one JSON object");
  sub->add_option("--junit", options.junit, "Write a JUnit XML report to FILE (corpus mode)");
  sub->add_option("-j,--jobs", options.jobs, "Packets replayed in parallel")->capture_default_str();
  sub->add_option("--shard", options.shard, "Replay only shard I of N (0-based): I/N");
}

int run_replay(const ReplayCommandOptions& options) {
  if (options.jobs == 0) {
    std::cerr << "bud replay: --jobs must be positive\n";
    return 2;
  }
  replay::CorpusOptions co;
  co.jobs = options.jobs;
  co.replay.at = options.at;
  co.replay.allow_revision_mismatch = options.allow_revision_mismatch;
  co.replay.allow_incomplete = options.allow_incomplete;
  std::string error;
  bool corpus = !options.junit.empty() || !options.shard.empty();
  if (!options.shard.empty()) {
    auto s = replay::parse_shard(options.shard, error);
    if (!s) {
      std::cerr << "bud replay: --shard: " << error << "\n";
      return 2;
    }
    co.shard = *s;
  } else if (auto s = replay::shard_from_environment(error)) {
    co.shard = *s;
    corpus = true;
  } else if (!error.empty()) {
    std::cerr << "bud replay: TEST_SHARD_INDEX/TEST_TOTAL_SHARDS: " << error << "\n";
    return 2;
  }
  std::vector<std::string> paths;
  for (const auto& p : options.packets) {
    if (std::filesystem::is_directory(p)) {
      corpus = true;
      auto list = replay::list_packets(p, error);
      if (!list) {
        std::cerr << "bud replay: " << error << "\n";
        return 2;
      }
      if (list->empty()) {
        std::cerr << "bud replay: " << p << ": no *.bpk packets in this directory\n";
        return 2;
      }
      paths.insert(paths.end(), list->begin(), list->end());
    } else {
      paths.push_back(p);
    }
  }
  const auto t0 = std::chrono::steady_clock::now();
  const auto result = replay::replay_corpus(paths, co);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!options.junit.empty()) {
    std::ofstream out(options.junit);
    out << replay::junit_xml(result, "bud-replay");
    if (!out) {
      std::cerr << "bud replay: " << options.junit << ": cannot write\n";
      return 2;
    }
  }
  const int code = aggregate(result.outcomes);
  if (options.json) {
    Json j = Json::object();
    j.set("exit_code", code);
    j.set("seconds", seconds);
    j.set("total_packets", result.total_packets);
    j.set("shard", std::to_string(co.shard.index) + "/" + std::to_string(co.shard.total));
    Json arr = Json::array();
    for (const auto& o : result.outcomes) arr.push(outcome_json(o));
    j.set("packets", std::move(arr));
    std::cout << j.dump() << "\n";
    return code;
  }
  for (const auto& o : result.outcomes) {
    for (const auto& n : o.notes)
      std::cerr << "bud replay: note: " << o.packet << ": " << n << "\n";
    if (o.verdict == replay::Verdict::Incompatible)
      std::cerr << "bud replay: " << o.message << "\n";
    else
      std::cout << o.packet << ": " << replay::verdict_name(o.verdict) << ": " << o.message
                << " [cycles " << o.start_cycle << ".." << o.end_cycle << "]\n";
  }
  if (corpus) {
    size_t counts[6] = {};
    for (const auto& o : result.outcomes) counts[static_cast<int>(o.verdict)]++;
    std::cout << "corpus: " << result.outcomes.size() << " of " << result.total_packets
              << " packets (shard " << co.shard.index << "/" << co.shard.total << "): ";
    for (int v = 0; v < 6; ++v)
      std::cout << (v ? ", " : "") << counts[v] << " "
                << replay::verdict_name(static_cast<replay::Verdict>(v));
    std::cout << "\n";
  }
  return code;
}

}  // namespace bud::cli
