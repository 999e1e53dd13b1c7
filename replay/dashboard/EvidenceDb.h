// The bring-up evidence database: corpus replay results kept across CI runs in one SQLite file
// (Debian libsqlite3), per packet, run and model revision (docs/packets.md, "Evidence
// dashboard"). Safe for concurrent writers (shards finishing together): WAL journal, a busy
// timeout, and each record in one IMMEDIATE transaction.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "replay/PacketEvidence.h"

struct sqlite3;

namespace bud::replay {

/// One packet's result in one run, as stored.
struct EvidenceRow {
  std::string run;       ///< the CI run (pipeline id, job array id)
  std::string revision;  ///< model revision that replayed it
  std::string packet;    ///< file name
  std::string verdict;   ///< verdict_name()
  uint64_t cycles = 0;   ///< cycles replayed (end - start)
  double seconds = 0;
  std::string stage;       ///< first failing stage (divergence stages, else empty)
  uint64_t run_order = 0;  ///< order in which runs were first recorded (1, 2, ...)
  PacketEvidence evidence;  ///< armed and hit triggers, recorded and counting counters
};

/// An open evidence database.
class EvidenceDb {
 public:
  /// Schema version this bud writes and reads (table `meta`, key `schema_version`). Bump it on
  /// any change to the tables (docs/packets.md, "Evidence database schema") and add the step
  /// from the previous version to open(): older databases are migrated in place when opened,
  /// newer ones refused.
  ///   1  runs, results (verdict, cycles, seconds, stage)
  ///   2  results.triggers_armed, triggers_hit, counters, counters_observed (JSON arrays)
  static constexpr int kSchemaVersion = 2;

  /// Opens (creating if needed) the database at `path`, migrating an older schema. nullptr and
  /// `error` naming the file.
  static std::unique_ptr<EvidenceDb> open(const std::string& path, bool create, std::string& error);
  ~EvidenceDb();
  EvidenceDb(const EvidenceDb&) = delete;
  EvidenceDb& operator=(const EvidenceDb&) = delete;

  /// Adds (or replaces, per run and packet) `rows` in one transaction. Error or empty.
  std::string record(const std::vector<EvidenceRow>& rows);
  /// Every row, in run order then packet name. nullopt and `error` on a read failure.
  std::optional<std::vector<EvidenceRow>> rows(std::string& error) const;

 private:
  EvidenceDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  std::string exec(const char* sql);
  sqlite3* db_;
  std::string path_;
};

}  // namespace bud::replay
