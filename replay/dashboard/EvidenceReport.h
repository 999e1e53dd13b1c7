// The bring-up evidence report (`bud corpus report`): per model revision, in the order revisions
// were first recorded, the replay success rate, packets still failing, newly failing, newly
// fixed, flaky (verdict changed between runs of the same revision), the escape-risk trend
// (failing packets per revision), trigger coverage (armed triggers that hit) and counter
// completeness (documented PMU counters the packets recorded and saw count), from the evidence
// database; as a table and JSON, which tools/plots/corpus_report.py turns into a self-contained
// HTML page of trend plots (docs/packets.md, "Evidence report").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "debugger/json/Json.h"
#include "replay/dashboard/EvidenceDb.h"

namespace bud::replay {

/// One revision's evidence. Each packet counts with its latest run on the revision.
struct RevisionEvidence {
  std::string revision;
  uint64_t runs = 0;
  uint64_t packets = 0;     ///< distinct packets replayed on it
  uint64_t passing = 0;     ///< latest verdict passed or fixed
  uint64_t failing = 0;     ///< latest verdict reproduced, new-symptom or diverged (escape risk)
  double success_rate = 0;  ///< passing / packets
  std::vector<std::string> still_failing;  ///< failing here and on the previous revision
  std::vector<std::string> newly_failing;  ///< failing here, not on the previous revision
  std::vector<std::string> newly_fixed;    ///< failing on the previous revision, passing here
  std::vector<std::string> flaky;          ///< more than one verdict among this revision's runs

  std::vector<std::string> triggers_armed;  ///< armed by at least one packet's trigger files
  std::vector<std::string> triggers_hit;    ///< of those, hit in at least one packet
  double trigger_coverage = 0;              ///< hit / armed (0 when nothing is armed)
  /// Documented counters (rtl/npu_facts.toml) recorded by at least one packet, and of those the
  /// ones that counted something in at least one packet; documented ones never seen counting.
  std::vector<std::string> counters_recorded;
  std::vector<std::string> counters_observed;
  std::vector<std::string> counters_never_observed;
  std::vector<std::string> counters_undocumented;  ///< recorded but not in the facts table
  double counter_completeness = 0;                 ///< observed / documented
};

/// The report over every row of the database.
struct EvidenceReport {
  std::vector<RevisionEvidence> revisions;  ///< in order of their first recorded run
  uint64_t documented_counters = 0;         ///< the facts table's counter count

  static EvidenceReport from(const std::vector<EvidenceRow>& rows);
  /// {"revisions": [...], "escape_risk_trend": [failing per revision], "documented_counters"}
  json::Json json() const;
  std::string text() const;
  // The HTML page is json() laid out by tools/plots/corpus_report.py (bud corpus report --html).
};

}  // namespace bud::replay
