#include "load/matrix/Decision.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace bud::matrix {

const char* metric_name(Metric m) {
  switch (m) {
    case Metric::Cycles:
      return "cycles";
    case Metric::PeakFraction:
      return "peak_fraction";
    case Metric::EnergyUj:
      return "energy_uj";
    case Metric::RequestsPerJoule:
      return "requests_per_joule";
    case Metric::Count:
      break;
  }
  return "?";
}

bool higher_is_better(Metric m) {
  return m == Metric::PeakFraction || m == Metric::RequestsPerJoule;
}

const char* owner_name(Owner o) {
  switch (o) {
    case Owner::Performance:
      return "performance";
    case Owner::RuntimeScheduler:
      return "runtime scheduler";
    case Owner::PowerModel:
      return "power model";
    case Owner::Capacity:
      return "capacity";
  }
  return "?";
}

Owner owner_for(Metric metric, profile::TopClass mechanism) {
  if (metric == Metric::EnergyUj) return Owner::PowerModel;
  if (metric == Metric::RequestsPerJoule) return Owner::Capacity;
  switch (mechanism) {
    case profile::TopClass::Scheduling:
    case profile::TopClass::Host:
      return Owner::RuntimeScheduler;
    case profile::TopClass::Throttled:
      return Owner::PowerModel;
    default:
      return Owner::Performance;
  }
}

const char* movement_name(Movement m) {
  switch (m) {
    case Movement::Same:
      return "same";
    case Movement::Better:
      return "better";
    case Movement::Worse:
      return "worse";
  }
  return "?";
}

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Ship:
      return "ship";
    case Verdict::BoundedRollout:
      return "bounded rollout";
    case Verdict::Escalate:
      return "escalate";
    case Verdict::Rollback:
      return "rollback";
  }
  return "?";
}

namespace {

double mean(const std::vector<double>& v) {
  return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

std::string percent(double fraction) {
  char b[32];
  std::snprintf(b, sizeof b, "%+.1f%%", 100 * fraction);
  return b;
}

}  // namespace

void classify(PerfCell& c, double floor_fraction) {
  c.base_mean = mean(c.base);
  c.next_mean = mean(c.next);
  c.band = 0;
  if (!c.base.empty()) {
    const auto [lo, hi] = std::minmax_element(c.base.begin(), c.base.end());
    c.band = *hi - *lo;
  }
  c.threshold = std::max(c.band, floor_fraction * std::fabs(c.base_mean));
  const double diff = c.next_mean - c.base_mean;
  c.change = c.base_mean != 0 ? diff / std::fabs(c.base_mean) : 0;
  c.movement = Movement::Same;
  // Strictly beyond the threshold: a band of 0 (a deterministic figure) with a floor of 0 still
  // needs the means to differ.
  if (std::fabs(diff) > c.threshold) {
    const bool up = diff > 0;
    c.movement = up == higher_is_better(c.metric) ? Movement::Better : Movement::Worse;
  }
}

void classify(QualityCell& c, const DecisionRule& rule) {
  c.snr_dropped = c.next.snr_db < c.base.snr_db - rule.snr_tolerance_db;
  c.top1_dropped = c.next.top1 < c.base.top1 - rule.top1_tolerance;
}

Decision decide(const std::vector<CorrectnessCell>& correctness,
                const std::vector<QualityCell>& quality, const std::vector<PerfCell>& performance,
                const DecisionRule& rule, const std::vector<CorpusCell>& corpus) {
  Decision d;
  struct Reason {
    Verdict verdict;
    std::string text;
  };
  std::vector<Reason> reasons;
  const auto add = [&](Verdict v, std::string text) { reasons.push_back({v, std::move(text)}); };
  const auto label = [](const std::string& w, const std::string& precision) {
    return precision.empty() ? w : w + " (" + precision + ")";
  };
  for (const auto& c : correctness) {
    if (c.regressed())
      add(Verdict::Rollback,
          label(c.workload, c.precision) + ": bit-exact on BASE, fails on NEW: " + c.failure);
    else if (!c.base_passed)
      add(Verdict::Escalate,
          label(c.workload, c.precision) +
              ": fails on BASE already, the matrix cannot judge it: " + c.failure);
  }
  for (const auto& c : corpus) {
    const std::string name = "corpus " + c.packet + " (" + c.workload + ")";
    if (!c.unusable.empty())
      add(Verdict::Escalate, name + ": cannot be re-run under both configurations: " + c.unusable);
    else if (c.regressed())
      add(Verdict::Rollback, name + ": clean on BASE, fails on NEW: " + c.next_failure);
    else if (c.fixed())
      add(Verdict::Ship,
          name + ": fails on BASE, clean on NEW (NEW fixes or masks it): " + c.base_failure);
    else if (!c.base_passed && c.base_failure != c.next_failure)
      add(Verdict::Escalate,
          name + ": fails differently: BASE " + c.base_failure + "; NEW " + c.next_failure);
  }
  for (const auto& q : quality) {
    char b[160];
    std::snprintf(b, sizeof b, "SNR %.1f -> %.1f dB, top-1 %.1f%% -> %.1f%%", q.base.snr_db,
                  q.next.snr_db, 100 * q.base.top1, 100 * q.next.top1);
    if (q.top1_dropped)
      add(Verdict::Rollback, label(q.model, q.precision) + ": top-1 dropped (" + b + ")");
    else if (q.snr_dropped)
      add(Verdict::Escalate, label(q.model, q.precision) +
                                 ": SNR dropped beyond the tolerance, top-1 kept (" + b + ")");
  }
  std::string worst_cell;
  for (const auto& p : performance) {
    if (p.movement == Movement::Better) ++d.better;
    if (p.movement != Movement::Worse) continue;
    ++d.worse;
    if (std::fabs(p.change) >= d.worst_regression) {
      d.worst_regression = std::fabs(p.change);
      worst_cell = p.workload + " " + metric_name(p.metric) + " " + percent(p.change);
    }
  }
  if (d.worse > 0 && d.better == 0)
    add(Verdict::Rollback,
        std::to_string(d.worse) +
            " performance cells worse beyond noise and none better (worst: " + worst_cell + ")");
  else if (d.worse > 0 && d.worst_regression <= rule.rollout_limit)
    add(Verdict::BoundedRollout, std::to_string(d.better) + " performance cells better, " +
                                     std::to_string(d.worse) + " worse, the worst (" + worst_cell +
                                     ") within the rollout limit of " +
                                     percent(rule.rollout_limit).substr(1));
  else if (d.worse > 0)
    add(Verdict::Escalate, std::to_string(d.better) + " performance cells better, " +
                               std::to_string(d.worse) + " worse, the worst (" + worst_cell +
                               ") beyond the rollout limit of " +
                               percent(rule.rollout_limit).substr(1));
  else if (d.better > 0)
    add(Verdict::Ship,
        std::to_string(d.better) + " performance cells better beyond noise, none worse");
  else
    add(Verdict::Ship, "no performance cell moved beyond noise");
  std::stable_sort(reasons.begin(), reasons.end(),
                   [](const Reason& a, const Reason& b) { return a.verdict > b.verdict; });
  d.verdict = reasons.front().verdict;
  for (const auto& r : reasons)
    d.reasons.push_back(std::string(verdict_name(r.verdict)) + ": " + r.text);
  return d;
}

}  // namespace bud::matrix
