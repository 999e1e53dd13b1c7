#include "replay/dashboard/EvidenceDb.h"

#include <sqlite3.h>

#include <iterator>
#include <map>

#include "debugger/json/Json.h"

namespace bud::replay {

namespace {

// Writers wait this long for another writer's transaction (shards finishing together).
constexpr int kBusyTimeoutMs = 60000;

const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,  -- order of first record: the trend's time axis
  name TEXT NOT NULL UNIQUE,
  revision TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS results (
  run_id INTEGER NOT NULL REFERENCES runs(id),
  packet TEXT NOT NULL,
  verdict TEXT NOT NULL,
  cycles INTEGER NOT NULL,
  seconds REAL NOT NULL,
  stage TEXT NOT NULL,
  triggers_armed TEXT NOT NULL DEFAULT '[]',  -- JSON arrays of names, from schema version 2
  triggers_hit TEXT NOT NULL DEFAULT '[]',
  counters TEXT NOT NULL DEFAULT '[]',
  counters_observed TEXT NOT NULL DEFAULT '[]',
  PRIMARY KEY (run_id, packet)
);
)sql";

// The step from each version to the next, in order: kMigrations[v - 1] takes version v to v + 1.
// Rows recorded before a column existed read as empty lists.
const char* const kMigrations[] = {
    R"sql(
ALTER TABLE results ADD COLUMN triggers_armed TEXT NOT NULL DEFAULT '[]';
ALTER TABLE results ADD COLUMN triggers_hit TEXT NOT NULL DEFAULT '[]';
ALTER TABLE results ADD COLUMN counters TEXT NOT NULL DEFAULT '[]';
ALTER TABLE results ADD COLUMN counters_observed TEXT NOT NULL DEFAULT '[]';
)sql",
};
static_assert(std::size(kMigrations) == EvidenceDb::kSchemaVersion - 1);

std::string names_json(const std::vector<std::string>& v) { return bud::json::Json(v).dump(); }

// A column written by names_json(); anything else reads as no names.
std::vector<std::string> names_from(const std::string& text) {
  const auto j = bud::json::Json::parse(text, nullptr, false);
  std::vector<std::string> out;
  if (j.is_array())
    for (const auto& x : j)
      if (x.is_string()) out.push_back(x.get<std::string>());
  return out;
}

// A prepared statement, finalized on scope exit.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) { sqlite3_prepare_v2(db, sql, -1, &s_, nullptr); }
  ~Statement() { sqlite3_finalize(s_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  sqlite3_stmt* get() const { return s_; }
  void text(int i, const std::string& v) {
    sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }

 private:
  sqlite3_stmt* s_ = nullptr;
};

std::string column_text(sqlite3_stmt* s, int i) {
  const auto* t = sqlite3_column_text(s, i);
  return t ? reinterpret_cast<const char*>(t) : "";
}

}  // namespace

std::unique_ptr<EvidenceDb> EvidenceDb::open(const std::string& path, bool create,
                                             std::string& error) {
  sqlite3* raw = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
  if (sqlite3_open_v2(path.c_str(), &raw, flags, nullptr) != SQLITE_OK) {
    error = path +
            ": cannot open the evidence database: " + (raw ? sqlite3_errmsg(raw) : "out of memory");
    sqlite3_close(raw);
    return nullptr;
  }
  std::unique_ptr<EvidenceDb> db(new EvidenceDb(raw, path));
  sqlite3_busy_timeout(raw, kBusyTimeoutMs);
  // WAL lets readers run beside the one writer; concurrent writers queue on the busy timeout.
  if (auto e = db->exec("PRAGMA journal_mode=WAL"); !e.empty()) return error = e, nullptr;
  if (auto e = db->exec("BEGIN IMMEDIATE"); !e.empty()) return error = e, nullptr;
  std::string e = db->exec(kSchema);
  if (e.empty()) {
    Statement get(raw, "SELECT value FROM meta WHERE key = 'schema_version'");
    if (sqlite3_step(get.get()) == SQLITE_ROW) {
      const std::string v = column_text(get.get(), 0);
      int version = 0;
      for (int k = 1; k <= kSchemaVersion; ++k)
        if (v == std::to_string(k)) version = k;
      if (version == 0)
        e = path + ": evidence database schema version " + v + ", this bud reads versions 1 to " +
            std::to_string(kSchemaVersion);
      // In the same IMMEDIATE transaction as the check: one writer migrates, the others wait
      // and then find the new version.
      for (; e.empty() && version > 0 && version < kSchemaVersion; ++version)
        e = db->exec(kMigrations[version - 1]);
      if (e.empty() && v != std::to_string(kSchemaVersion))
        e = db->exec(("UPDATE meta SET value = '" + std::to_string(kSchemaVersion) +
                      "' WHERE key = 'schema_version'")
                         .c_str());
    } else {
      e = db->exec(
          ("INSERT INTO meta VALUES ('schema_version', '" + std::to_string(kSchemaVersion) + "')")
              .c_str());
    }
  }
  if (!e.empty()) {
    db->exec("ROLLBACK");
    error = e;
    return nullptr;
  }
  if (auto c = db->exec("COMMIT"); !c.empty()) return error = c, nullptr;
  return db;
}

EvidenceDb::~EvidenceDb() { sqlite3_close(db_); }

std::string EvidenceDb::exec(const char* sql) {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &message) == SQLITE_OK) return {};
  std::string e = path_ + ": " + (message ? message : sqlite3_errmsg(db_));
  sqlite3_free(message);
  return e;
}

std::string EvidenceDb::record(const std::vector<EvidenceRow>& rows) {
  // IMMEDIATE takes the write lock up front, so two writers never both read and then fail to
  // upgrade (SQLITE_BUSY inside a transaction, which the busy timeout cannot resolve).
  if (auto e = exec("BEGIN IMMEDIATE"); !e.empty()) return e;
  std::string e;
  Statement run(db_,
                "INSERT INTO runs (name, revision) VALUES (?1, ?2) ON CONFLICT(name) DO NOTHING");
  Statement run_id(db_, "SELECT id, revision FROM runs WHERE name = ?1");
  Statement put(db_,
                "INSERT OR REPLACE INTO results (run_id, packet, verdict, cycles, seconds, stage, "
                "triggers_armed, triggers_hit, counters, counters_observed) "
                "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
  for (const auto& r : rows) {
    sqlite3_reset(run.get());
    run.text(1, r.run);
    run.text(2, r.revision);
    if (sqlite3_step(run.get()) != SQLITE_DONE) {
      e = path_ + ": " + sqlite3_errmsg(db_);
      break;
    }
    sqlite3_reset(run_id.get());
    run_id.text(1, r.run);
    if (sqlite3_step(run_id.get()) != SQLITE_ROW) {
      e = path_ + ": " + sqlite3_errmsg(db_);
      break;
    }
    const sqlite3_int64 id = sqlite3_column_int64(run_id.get(), 0);
    if (const std::string rev = column_text(run_id.get(), 1); rev != r.revision) {
      e = path_ + ": run '" + r.run + "' was recorded with model revision " + rev + ", not " +
          r.revision + ": a run tests one revision";
      break;
    }
    sqlite3_reset(put.get());
    sqlite3_bind_int64(put.get(), 1, id);
    put.text(2, r.packet);
    put.text(3, r.verdict);
    sqlite3_bind_int64(put.get(), 4, static_cast<sqlite3_int64>(r.cycles));
    sqlite3_bind_double(put.get(), 5, r.seconds);
    put.text(6, r.stage);
    put.text(7, names_json(r.evidence.triggers_armed));
    put.text(8, names_json(r.evidence.triggers_hit));
    put.text(9, names_json(r.evidence.counters));
    put.text(10, names_json(r.evidence.counters_observed));
    if (sqlite3_step(put.get()) != SQLITE_DONE) {
      e = path_ + ": " + sqlite3_errmsg(db_);
      break;
    }
  }
  if (!e.empty()) {
    exec("ROLLBACK");
    return e;
  }
  return exec("COMMIT");
}

std::optional<std::vector<EvidenceRow>> EvidenceDb::rows(std::string& error) const {
  Statement q(db_,
              "SELECT runs.name, runs.revision, packet, verdict, cycles, seconds, stage, runs.id, "
              "triggers_armed, triggers_hit, counters, counters_observed "
              "FROM results JOIN runs ON runs.id = results.run_id ORDER BY runs.id, packet");
  if (!q.get()) {
    error = path_ + ": " + sqlite3_errmsg(db_);
    return std::nullopt;
  }
  std::vector<EvidenceRow> out;
  // Packets of a corpus mostly carry the same lists (every packet the same counters): each
  // distinct text is parsed once (a 100,000-row history: 1.5 s of CPU without this).
  std::map<std::string, std::vector<std::string>> parsed;
  auto names = [&parsed](const std::string& text) -> const std::vector<std::string>& {
    auto it = parsed.find(text);
    if (it == parsed.end()) it = parsed.emplace(text, names_from(text)).first;
    return it->second;
  };
  int rc;
  while ((rc = sqlite3_step(q.get())) == SQLITE_ROW) {
    EvidenceRow r;
    r.run = column_text(q.get(), 0);
    r.revision = column_text(q.get(), 1);
    r.packet = column_text(q.get(), 2);
    r.verdict = column_text(q.get(), 3);
    r.cycles = static_cast<uint64_t>(sqlite3_column_int64(q.get(), 4));
    r.seconds = sqlite3_column_double(q.get(), 5);
    r.stage = column_text(q.get(), 6);
    r.run_order = static_cast<uint64_t>(sqlite3_column_int64(q.get(), 7));
    r.evidence.triggers_armed = names(column_text(q.get(), 8));
    r.evidence.triggers_hit = names(column_text(q.get(), 9));
    r.evidence.counters = names(column_text(q.get(), 10));
    r.evidence.counters_observed = names(column_text(q.get(), 11));
    out.push_back(std::move(r));
  }
  if (rc != SQLITE_DONE) {
    error = path_ + ": " + sqlite3_errmsg(db_);
    return std::nullopt;
  }
  return out;
}

}  // namespace bud::replay
