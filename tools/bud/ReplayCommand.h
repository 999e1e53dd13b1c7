// `bud replay`: re-execute replay packets bit-exactly and say whether their symptom reproduced;
// exit codes follow `git bisect run`. With a directory or --junit, CI corpus mode.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bud::cli {

struct ReplayCommandOptions {
  std::vector<std::string> packets;  ///< files or directories of *.bpk
  std::optional<uint64_t> at;
  bool allow_revision_mismatch = false;
  bool allow_incomplete = false;
  bool json = false;
  std::string design_cache;  ///< design packets: the model cache (design/ModelBuild.h)
  std::string junit;
  unsigned jobs = 1;
  std::string shard;    ///< "I/N"
  std::string results;  ///< directory for this shard's results files (bud corpus merge)
  /// Corpus mode: each packet in its own process under these limits (0: none).
  bool no_isolation = false;
  uint64_t limit_memory_mb = 16384;
  uint64_t limit_cpu_s = 3600;
};

void setup_replay(CLI::App& app, ReplayCommandOptions& options);
/// Exit code: 0 symptom absent (good), 1 symptom reproduced (bad), 125 cannot test, 2 usage.
/// With several packets: 1 if any is bad, else 125 if any cannot be tested, else 0.
int run_replay(const ReplayCommandOptions& options);

}  // namespace bud::cli
