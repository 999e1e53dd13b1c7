// The evidence database and dashboard: per-revision metrics from known histories, the schema
// version, and many concurrent `bud corpus record` processes losing no row.
#include "replay/dashboard/Dashboard.h"

#include <sqlite3.h>

#include <catch2/catch.hpp>
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

TEST_CASE("dashboard: still failing, newly failing, newly fixed, flaky per revision",
          "[replay][dashboard]") {
  const auto dir = test::temp_dir("dashboard_metrics");
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
  const auto d = Dashboard::from(*rows);
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
  const auto html = d.html();
  CHECK(html.find("<svg") != std::string::npos);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("<td>b.bpk</td>") != std::string::npos);
}

TEST_CASE("dashboard: another schema version is refused naming the file", "[replay][dashboard]") {
  const auto dir = test::temp_dir("dashboard_schema");
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
  CHECK(error.find(path) != std::string::npos);
  CHECK_FALSE(EvidenceDb::open((dir / "missing.db").string(), false, error));
  CHECK(error.find("missing.db") != std::string::npos);
}

TEST_CASE("bud corpus record: 16 concurrent writers lose no row", "[replay][dashboard][cli]") {
  const auto dir = test::temp_dir("dashboard_concurrent");
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
  CHECK(test::shell(test::bud_exe() + " corpus dashboard '" + (dir / "e.db").string() +
                    "' --json --html '" + (dir / "d.html").string() + "' >'" +
                    (dir / "d.json").string() + "'") == 0);
  CHECK(test::slurp((dir / "d.json").string()).find("\"revision\":\"rev2\"") != std::string::npos);
  CHECK(test::slurp((dir / "d.html").string()).find("</html>") != std::string::npos);
}
