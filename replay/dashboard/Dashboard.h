// The bring-up evidence dashboard: per model revision, in the order revisions were first
// recorded, the replay success rate, packets still failing, newly failing, newly fixed, flaky
// (verdict changed between runs of the same revision) and the escape-risk trend (failing packets
// per revision), from the evidence database; as a table, JSON and a self-contained HTML page
// (docs/packets.md, "Evidence dashboard").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "debugger/json/Json.h"
#include "replay/dashboard/EvidenceDb.h"

namespace bud::replay {

/// One revision's evidence.
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
};

/// The dashboard over every row of the database.
struct Dashboard {
  std::vector<RevisionEvidence> revisions;  ///< in order of their first recorded run

  static Dashboard from(const std::vector<EvidenceRow>& rows);
  json::Json json() const;
  std::string text() const;
  /// One HTML page with its styles and an inline SVG chart of failing packets and success rate
  /// per revision; no script, nothing fetched.
  std::string html() const;
};

}  // namespace bud::replay
