// The evidence database and report: per-revision metrics from known histories, trigger coverage
// and counter completeness from recorded packets, the schema version and its migration, and many
// concurrent `bud corpus record` processes losing no row.
#include "replay/dashboard/EvidenceReport.h"

#include <sqlite3.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ReplayTestSupport.h"
#include "replay/ShardResults.h"

using namespace bud;
using namespace bud::replay;

namespace {

EvidenceRow row(const std::string& run, const std::string& rev, const std::string& packet,
                const std::string& verdict) {
  EvidenceRow r;
  r.run = run;
  r.revision = rev;
  r.packet = packet;
  r.verdict = verdict;
  r.cycles = 1000;
  return r;
}

}  // namespace

TEST_CASE("evidence report: still failing, newly failing, newly fixed, flaky per revision",
          "[replay][evidence]") {
  const auto dir = test::temp_dir("evidence_metrics");
  std::string error;
  auto db = EvidenceDb::open((dir / "e.db").string(), true, error);
  INFO(error);
  REQUIRE(db);
  // r1: a and b fail, c passes. r2 (two runs): a still fails, b fixed, c newly fails, d flaky.
  REQUIRE(
      db->record({row("ci-1", "r1", "a.bpk", "reproduced"),
                  row("ci-1", "r1", "b.bpk", "reproduced"), row("ci-1", "r1", "c.bpk", "passed")})
          .empty());
  REQUIRE(
      db->record({row("ci-2", "r2", "a.bpk", "reproduced"), row("ci-2", "r2", "b.bpk", "fixed"),
                  row("ci-2", "r2", "c.bpk", "new-symptom"), row("ci-2", "r2", "d.bpk", "passed")})
          .empty());
  REQUIRE(db->record({row("ci-3", "r2", "d.bpk", "reproduced")}).empty());
  // A run tests one revision.
  CHECK(db->record({row("ci-3", "r9", "d.bpk", "passed")}).find("one revision") !=
        std::string::npos);
  auto rows = db->rows(error);
  REQUIRE(rows);
  CHECK(rows->size() == 8);
  const auto d = EvidenceReport::from(*rows);
  REQUIRE(d.revisions.size() == 2);
  const auto& r1 = d.revisions[0];
  CHECK(r1.revision == "r1");
  CHECK(r1.failing == 2);
  CHECK(r1.newly_failing == std::vector<std::string>{"a.bpk", "b.bpk"});
  const auto& r2 = d.revisions[1];
  CHECK(r2.runs == 2);
  CHECK(r2.packets == 4);
  CHECK(r2.still_failing == std::vector<std::string>{"a.bpk"});
  CHECK(r2.newly_failing == std::vector<std::string>{"c.bpk", "d.bpk"});
  CHECK(r2.newly_fixed == std::vector<std::string>{"b.bpk"});
  CHECK(r2.flaky == std::vector<std::string>{"d.bpk"});
  CHECK(r2.success_rate == Approx(0.25));
  const auto j = d.json();
  CHECK(j["escape_risk_trend"] == json::Json::array({2, 3}));
}

TEST_CASE("evidence report: another schema version is refused naming the file",
          "[replay][evidence]") {
  const auto dir = test::temp_dir("evidence_schema");
  const auto path = (dir / "e.db").string();
  std::string error;
  REQUIRE(EvidenceDb::open(path, true, error));
  sqlite3* raw = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &raw) == SQLITE_OK);
  REQUIRE(sqlite3_exec(raw, "UPDATE meta SET value = '99' WHERE key = 'schema_version'", nullptr,
                       nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(raw);
  CHECK_FALSE(EvidenceDb::open(path, false, error));
  CHECK(error.find("schema version 99") != std::string::npos);
  CHECK(error.find("versions 1 to " + std::to_string(EvidenceDb::kSchemaVersion)) !=
        std::string::npos);
  CHECK(error.find(path) != std::string::npos);
  CHECK_FALSE(EvidenceDb::open((dir / "missing.db").string(), false, error));
  CHECK(error.find("missing.db") != std::string::npos);
}

TEST_CASE("bud corpus record: 16 concurrent writers lose no row", "[replay][evidence][cli]") {
  const auto dir = test::temp_dir("evidence_concurrent");
  const int writers = 16, packets = 40;
  std::string cmd;
  for (int w = 0; w < writers; ++w) {
    ShardResults r;
    r.shard = {0, 1};
    r.revision = "rev" + std::to_string(w % 3);
    r.result.total_packets = packets;
    for (int i = 0; i < packets; ++i) {
      ReplayOutcome o;
      o.packet = "p" + std::to_string(i) + ".bpk";
      o.verdict = (i + w) % 5 == 0 ? Verdict::Reproduced : Verdict::Passed;
      r.result.outcomes.push_back(o);
      r.result.corpus_index.push_back(static_cast<uint64_t>(i));
      r.result.seconds.push_back(0.1);
    }
    const auto file = dir / ("shard-" + std::to_string(w) + ".json");
    REQUIRE(write_file_atomically(file.string(), r.to_json().dump()).empty());
    cmd += test::bud_exe() + " corpus record '" + (dir / "e.db").string() + "' '" + file.string() +
           "' --run run-" + std::to_string(w) + " >/dev/null 2>>'" + (dir / "err.txt").string() +
           "' & ";
  }
  cmd += "wait";
  CHECK(test::shell(cmd) == 0);
  CHECK(test::slurp((dir / "err.txt").string()).empty());
  std::string error;
  auto db = EvidenceDb::open((dir / "e.db").string(), false, error);
  REQUIRE(db);
  auto rows = db->rows(error);
  REQUIRE(rows);
  CHECK(rows->size() == static_cast<size_t>(writers * packets));
  // `dashboard` is the report's old name, kept as an alias.
  CHECK(test::shell(test::bud_exe() + " corpus dashboard '" + (dir / "e.db").string() +
                    "' --json --html '" + (dir / "d.html").string() + "' >'" +
                    (dir / "d.json").string() + "'") == 0);
  CHECK(test::slurp((dir / "d.json").string()).find("\"revision\":\"rev2\"") != std::string::npos);
  CHECK(test::slurp((dir / "d.html").string()).find("</html>") != std::string::npos);
}

TEST_CASE("evidence report: trigger coverage and counter completeness per revision",
          "[replay][evidence]") {
  auto with = [](EvidenceRow r, std::vector<std::string> armed, std::vector<std::string> hit,
                 std::vector<std::string> observed) {
    r.evidence.triggers_armed = std::move(armed);
    r.evidence.triggers_hit = std::move(hit);
    r.evidence.counters = {"cycles", "load.stall_mem", "made.up"};
    r.evidence.counters_observed = std::move(observed);
    return r;
  };
  const auto dir = test::temp_dir("evidence_coverage");
  std::string error;
  auto db = EvidenceDb::open((dir / "e.db").string(), true, error);
  REQUIRE(db);
  // r1: a arms t1, t2 and hits t1; b arms t3, hits nothing (and names a hit it did not arm).
  REQUIRE(db->record({with(row("ci-1", "r1", "a.bpk", "passed"), {"t1", "t2"}, {"t1"}, {"cycles"}),
                      with(row("ci-1", "r1", "b.bpk", "passed"), {"t3"}, {"t9"},
                           {"cycles", "load.stall_mem"})})
              .empty());
  // r2: a's latest run hits both of its triggers; b is not replayed.
  REQUIRE(db->record({with(row("ci-2", "r2", "a.bpk", "passed"), {"t1", "t2"}, {"t1", "t2"}, {})})
              .empty());
  auto rows = db->rows(error);
  REQUIRE(rows);
  REQUIRE(rows->at(0).evidence.triggers_armed == std::vector<std::string>{"t1", "t2"});
  const auto d = EvidenceReport::from(*rows);
  REQUIRE(d.revisions.size() == 2);
  const auto& r1 = d.revisions[0];
  CHECK(r1.triggers_armed == std::vector<std::string>{"t1", "t2", "t3"});
  CHECK(r1.triggers_hit == std::vector<std::string>{"t1"});
  CHECK(r1.trigger_coverage == Approx(1.0 / 3));
  CHECK(r1.counters_recorded == std::vector<std::string>{"cycles", "load.stall_mem"});
  CHECK(r1.counters_observed == std::vector<std::string>{"cycles", "load.stall_mem"});
  CHECK(r1.counters_undocumented == std::vector<std::string>{"made.up"});
  CHECK(d.documented_counters > 2);
  CHECK(r1.counter_completeness == Approx(2.0 / d.documented_counters));
  CHECK(r1.counters_never_observed.size() == d.documented_counters - 2);
  const auto& r2 = d.revisions[1];
  CHECK(r2.trigger_coverage == Approx(1.0));
  CHECK(r2.counters_observed.empty());
  CHECK(r2.counter_completeness == 0.0);
  const auto j = d.json();
  CHECK(j["revisions"][0]["triggers_hit"] == json::Json::array({"t1"}));
  CHECK(d.text().find("1/3") != std::string::npos);
}

TEST_CASE("evidence report: a schema version 1 database is migrated in place, its rows kept",
          "[replay][evidence]") {
  const auto dir = test::temp_dir("evidence_migrate");
  const auto path = (dir / "e.db").string();
  // The version 1 layout, as an older bud wrote it.
  sqlite3* raw = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &raw) == SQLITE_OK);
  REQUIRE(sqlite3_exec(raw,
                       "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                       "INSERT INTO meta VALUES ('schema_version', '1');"
                       "CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT "
                       "NULL UNIQUE, revision TEXT NOT NULL);"
                       "CREATE TABLE results (run_id INTEGER NOT NULL REFERENCES runs(id), packet "
                       "TEXT NOT NULL, verdict TEXT NOT NULL, cycles INTEGER NOT NULL, seconds "
                       "REAL NOT NULL, stage TEXT NOT NULL, PRIMARY KEY (run_id, packet));"
                       "INSERT INTO runs (name, revision) VALUES ('ci-1', 'r1');"
                       "INSERT INTO results VALUES (1, 'old.bpk', 'reproduced', 10, 0.5, 'load');",
                       nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(raw);
  std::string error;
  auto db = EvidenceDb::open(path, false, error);
  INFO(error);
  REQUIRE(db);
  REQUIRE(db->record({row("ci-2", "r1", "new.bpk", "passed")}).empty());
  auto rows = db->rows(error);
  REQUIRE(rows);
  REQUIRE(rows->size() == 2);
  CHECK(rows->at(0).packet == "old.bpk");
  CHECK(rows->at(0).stage == "load");
  CHECK(rows->at(0).evidence.triggers_armed.empty());
  db.reset();
  REQUIRE(sqlite3_open(path.c_str(), &raw) == SQLITE_OK);
  sqlite3_stmt* q = nullptr;
  REQUIRE(sqlite3_prepare_v2(raw, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &q,
                             nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(q) == SQLITE_ROW);
  CHECK(std::string(reinterpret_cast<const char*>(sqlite3_column_text(q, 0))) ==
        std::to_string(EvidenceDb::kSchemaVersion));
  sqlite3_finalize(q);
  sqlite3_close(raw);
}

TEST_CASE("bud corpus report: triggers armed and hit, counters from recorded packets",
          "[replay][evidence][cli]") {
  const auto dir = test::temp_dir("evidence_e2e");
  const auto trig = (dir / "t.trig").string();
  {
    std::ofstream f(trig);
    f << "# one trigger hits, one never does\n"
         "trigger early when cycles > 100 do log \"early\"\n"
         "trigger never when cycles > 4000000000 do log \"never\"\n";
  }
  std::filesystem::create_directories(dir / "corpus");
  const std::string cd = "cd '" + dir.string() + "' && ";
  REQUIRE(test::shell(cd + test::bud_exe() + " run gemm_small --triggers t.trig --record " +
                      "corpus/t.bpk >/dev/null 2>&1") == 0);
  REQUIRE(test::shell(cd + test::bud_exe() + " replay corpus --results res >/dev/null 2>&1") == 0);
  REQUIRE(test::shell(cd + test::bud_exe() + " corpus record e.db res --run ci-1 >/dev/null") == 0);
  REQUIRE(test::shell(cd + test::bud_exe() + " corpus report e.db --json >r.json") == 0);
  const auto j = nlohmann::json::parse(test::slurp((dir / "r.json").string()));
  const auto& rev = j.at("revisions").at(0);
  CHECK(rev.at("triggers_armed") == nlohmann::json::array({"early", "never"}));
  CHECK(rev.at("triggers_hit") == nlohmann::json::array({"early"}));
  CHECK(rev.at("trigger_coverage") == 0.5);
  // gemm_small counts cycles and retires commands; an idle engine's stall counters stay 0.
  const auto observed = rev.at("counters_observed");
  CHECK(std::find(observed.begin(), observed.end(), "cycles") != observed.end());
  CHECK(rev.at("counters_recorded").size() == j.at("documented_counters"));
  CHECK(rev.at("counter_completeness") > 0.0);
  CHECK(rev.at("counter_completeness") < 1.0);
  CHECK(rev.at("counters_undocumented").empty());
}
