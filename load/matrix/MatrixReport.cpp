#include "load/matrix/MatrixReport.h"

#include <cstdio>

namespace bud::matrix {

namespace {

using json::Json;

std::string flags_text(const Json& c) {
  std::string s;
  for (const auto& f : c.at("flags")) {
    if (!s.empty()) s += ' ';
    s += f.get<std::string>();
  }
  return s.empty() ? "(defaults)" : s;
}

/// A figure in its metric's units, for the tables.
std::string value_text(Metric m, double v) {
  char b[64];
  switch (m) {
    case Metric::Cycles:
      std::snprintf(b, sizeof b, "%.0f", v);
      break;
    case Metric::PeakFraction:
      std::snprintf(b, sizeof b, "%.2f%%", 100 * v);
      break;
    case Metric::EnergyUj:
      std::snprintf(b, sizeof b, "%.3f", v);
      break;
    case Metric::RequestsPerJoule:
      // 0: no load point of the search met the SLA.
      if (v == 0) return "misses";
      std::snprintf(b, sizeof b, "%.0f", v);
      break;
    default:
      std::snprintf(b, sizeof b, "%.0f", v);
      break;
  }
  return b;
}

const char* metric_label(Metric m) {
  switch (m) {
    case Metric::Cycles:
      return "cycles";
    case Metric::PeakFraction:
      return "% peak";
    case Metric::EnergyUj:
      return "uJ/inference";
    case Metric::RequestsPerJoule:
      return "req/J at SLA";
    case Metric::Count:
      break;
  }
  return "?";
}

std::string passed_text(bool passed) { return passed ? "bit-exact" : "FAIL"; }

}  // namespace

std::string matrix_text(const Matrix& m, const Json& header) {
  std::string out;
  char b[512];
  const Json& base = header.at("base");
  const Json& next = header.at("new");
  const Json& rule = header.at("rule");
  out +=
      "bud matrix: BASE " + base.at("origin").get<std::string>() + ": " + flags_text(base) + "\n";
  out +=
      "            NEW  " + next.at("origin").get<std::string>() + ": " + flags_text(next) + "\n";
  std::snprintf(b, sizeof b,
                "  %zu workloads x %zu memory seeds per configuration, %zu models x %zu "
                "precisions, %zu corpus packets; noise band = BASE's spread over the seeds, "
                "floor %.1f%%; %u RTL runs\n",
                header.at("workloads").size(), m.mem_seeds.size(), header.at("models").size(),
                m.precisions.size(), m.corpus.size(), 100 * rule.at("floor_fraction").get<double>(),
                m.rtl_runs);
  out += b;

  out += "\nCorrectness (every run checked bit-exactly against the golden model)\n";
  std::snprintf(b, sizeof b, "  %-28s %-11s %-10s %-10s %s\n", "workload", "precision", "BASE",
                "NEW", "");
  out += b;
  for (const auto& c : m.correctness) {
    std::snprintf(b, sizeof b, "  %-28s %-11s %-10s %-10s %s\n", c.workload.c_str(),
                  c.precision.empty() ? "own" : c.precision.c_str(),
                  passed_text(c.base_passed).c_str(), passed_text(c.next_passed).c_str(),
                  c.regressed() ? "REGRESSED" : "");
    out += b;
  }

  if (!m.corpus.empty()) {
    out += "\nReplay corpus (each packet's recorded run under both configurations, checked)\n";
    std::snprintf(b, sizeof b, "  %-28s %-16s %-9s %-10s %-10s %s\n", "packet", "workload",
                  "recorded", "BASE", "NEW", "");
    out += b;
    for (const auto& c : m.corpus) {
      const char* note = !c.unusable.empty()                                  ? "CANNOT RE-RUN"
                         : c.regressed()                                      ? "REGRESSED"
                         : c.fixed()                                          ? "FIXED ON NEW"
                         : !c.base_passed && c.base_failure != c.next_failure ? "FAILS DIFFERENTLY"
                         : !c.base_passed                                     ? "still fails"
                                                                              : "";
      const bool ran = c.unusable.empty();
      std::snprintf(b, sizeof b, "  %-28s %-16s %-9s %-10s %-10s %s\n", c.packet.c_str(),
                    c.workload.c_str(), c.recorded_failure ? "failure" : "clean",
                    ran ? passed_text(c.base_passed).c_str() : "-",
                    ran ? passed_text(c.next_passed).c_str() : "-", note);
      out += b;
      if (!c.unusable.empty()) out += "    " + c.unusable + "\n";
    }
  }

  if (!m.quality.empty()) {
    std::snprintf(b, sizeof b,
                  "\nQuality (output against the ONNX model's fp32 network; tolerance %.1f dB "
                  "SNR, %.1f%% top-1)\n",
                  rule.at("snr_tolerance_db").get<double>(),
                  100 * rule.at("top1_tolerance").get<double>());
    out += b;
    std::snprintf(b, sizeof b, "  %-28s %-11s %20s %22s %s\n", "model", "precision",
                  "SNR dB BASE -> NEW", "top-1 BASE -> NEW", "");
    out += b;
    for (const auto& q : m.quality) {
      std::snprintf(b, sizeof b, "  %-28s %-11s %9.1f -> %7.1f %9.1f%% -> %6.1f%% %s\n",
                    q.model.c_str(), q.precision.c_str(), q.base.snr_db, q.next.snr_db,
                    100 * q.base.top1, 100 * q.next.top1,
                    q.top1_dropped  ? "TOP-1 DROPPED"
                    : q.snr_dropped ? "SNR DROPPED"
                                    : "");
      out += b;
    }
  }

  out +=
      "\nPerformance (mean over the seeds; band = BASE's max - min; moved = beyond "
      "max(band, floor))\n";
  std::snprintf(b, sizeof b, "  %-16s %-13s %12s %12s %8s %11s %-7s %s\n", "workload", "metric",
                "BASE", "NEW", "change", "band", "moved", "owner (mechanism)");
  out += b;
  for (const auto& p : m.performance) {
    const std::string owner = p.movement == Movement::Same
                                  ? ""
                                  : std::string(owner_name(p.owner)) +
                                        (p.mechanism.empty() ? "" : " (" + p.mechanism + ")");
    std::snprintf(b, sizeof b, "  %-16s %-13s %12s %12s %+7.1f%% %11s %-7s %s\n",
                  p.workload.c_str(), metric_label(p.metric),
                  value_text(p.metric, p.base_mean).c_str(),
                  value_text(p.metric, p.next_mean).c_str(), 100 * p.change,
                  value_text(p.metric, p.band).c_str(),
                  p.movement == Movement::Same ? "-" : movement_name(p.movement), owner.c_str());
    out += b;
  }
  for (const auto& s : m.slas) {
    std::snprintf(b, sizeof b, "  SLA %s: p99 <= %.1f us%s\n", s.workload.c_str(), s.p99_us,
                  s.derived ? " (derived: BASE's time of one inference x the SLA factor)" : "");
    out += b;
  }

  const Decision& d = m.decision;
  std::snprintf(b, sizeof b, "\nDecision: %s (%u cells better, %u worse beyond noise)\n",
                verdict_name(d.verdict), d.better, d.worse);
  out += b;
  for (const auto& r : d.reasons) out += "  " + r + "\n";
  return out;
}

}  // namespace bud::matrix
