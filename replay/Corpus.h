// CI corpus mode: replay every packet of a directory (a shard of them), classify each as
// reproduced / fixed / passed / diverged / incompatible, and write a JUnit XML report.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "replay/Replayer.h"
#include "replay/ShardEnv.h"

namespace bud::replay {

/// Per-packet isolation in corpus mode: each packet is replayed in a child process (fork) under
/// these resource limits, so a crash, an abort or a limit becomes that packet's Crashed verdict
/// and the report is still written (docs/packets.md, "Corpus mode").
struct Isolation {
  bool enabled = true;
  /// RLIMIT_AS of the child in bytes (0: none). Not applied under AddressSanitizer, which
  /// reserves terabytes of address space.
  uint64_t memory_bytes = 16ull << 30;
  /// RLIMIT_CPU of the child in seconds (0: none).
  uint64_t cpu_seconds = 3600;
};

struct CorpusOptions {
  ReplayOptions replay;
  unsigned jobs = 1;  ///< packets replayed in parallel
  Shard shard;
  Isolation isolation;
};

struct CorpusResult {
  std::vector<ReplayOutcome> outcomes;  ///< this shard's packets, sorted by name
  /// Each outcome's index in the whole corpus (sorted by name, before sharding).
  std::vector<uint64_t> corpus_index;
  /// Wall-clock seconds per outcome (same order), for the report only: never part of a verdict.
  std::vector<double> seconds;
  uint64_t total_packets = 0;  ///< in the directory, before sharding
  /// 0 all fixed/passed, 1 any reproduced/new symptom/diverged, 125 otherwise incompatible.
  int exit_code() const;
};

/// The *.bpk files directly in `dir`, sorted by name. Error if `dir` is unreadable.
std::optional<std::vector<std::string>> list_packets(const std::string& dir, std::string& error);
/// Replays one packet in a child process under `isolation`'s limits. The outcome is the
/// child's (without `report`), or Crashed naming the signal or limit that ended it.
ReplayOutcome replay_isolated(const std::string& path, const ReplayOptions& options,
                              const Isolation& isolation);
/// Replays this shard's packets of `paths`, `options.jobs` at a time: as child processes run
/// from the calling thread when options.isolation.enabled, else on that many threads.
CorpusResult replay_corpus(const std::vector<std::string>& paths, const CorpusOptions& options);
/// JUnit XML (written with libxml2): one <testcase> per packet with name, classname and time;
/// reproduced/new-symptom = <failure>, diverged and incompatible (unreadable, truncated, other
/// revision) = <error>, each with type (the verdict), message and text; the verdict is also in
/// the system-out. Suite totals: tests, failures, errors, skipped (always 0), time. An empty
/// result is a valid report with tests="0". Text that is not valid UTF-8/XML is replaced (U+FFFD).
/// Empty only if libxml2 fails.
/// `missing_shards` (bud corpus merge): one test case per shard whose results never arrived,
/// named by the shard (shard-0002-of-0004), with <error type="missing-shard">.
std::string junit_xml(const CorpusResult& result, const std::string& suite_name,
                      const std::vector<Shard>& missing_shards = {});

}  // namespace bud::replay
