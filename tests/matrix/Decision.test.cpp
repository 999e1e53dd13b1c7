// The decision rule of `bud matrix` (docs/matrix.md, "Decision rule") over cells built by hand:
// the noise band and floor, each verdict, the severity order and the owner roles.
#include "load/matrix/Decision.h"

#include <catch2/catch.hpp>

using namespace bud::matrix;
using Catch::Matchers::WithinAbs;

namespace {

PerfCell cell(const std::string& w, Metric m, std::vector<double> base, std::vector<double> next,
              double floor = 0.01) {
  PerfCell c;
  c.workload = w;
  c.metric = m;
  c.base = std::move(base);
  c.next = std::move(next);
  classify(c, floor);
  return c;
}

CorrectnessCell passing(const std::string& w) { return {w, "", true, true, ""}; }

bool has_reason(const Decision& d, const std::string& text) {
  for (const auto& r : d.reasons)
    if (r.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("the noise band is BASE's spread over the seeds and a move must exceed it", "[matrix]") {
  // BASE 100, 104, 102: band 4, mean 102. NEW mean 97: 5 below, beyond the band.
  const auto moved = cell("mlp", Metric::Cycles, {100, 104, 102}, {97, 96, 98});
  CHECK_THAT(moved.band, WithinAbs(4, 1e-12));
  CHECK_THAT(moved.base_mean, WithinAbs(102, 1e-12));
  CHECK_THAT(moved.threshold, WithinAbs(4, 1e-12));
  CHECK(moved.movement == Movement::Better);  // fewer cycles
  CHECK_THAT(moved.change, WithinAbs(-5.0 / 102, 1e-12));
  // NEW mean 99: 3 below, inside the band.
  CHECK(cell("mlp", Metric::Cycles, {100, 104, 102}, {99, 99, 99}).movement == Movement::Same);
}

TEST_CASE("the floor counts when the band is narrower than it", "[matrix]") {
  // A deterministic figure (band 0): 0.5% is under the 1% floor, 2% beyond it.
  CHECK(cell("conv", Metric::EnergyUj, {10, 10}, {10.05, 10.05}).movement == Movement::Same);
  CHECK(cell("conv", Metric::EnergyUj, {10, 10}, {10.2, 10.2}).movement == Movement::Worse);
  // With no floor, any difference of a deterministic figure moves it; equal means never do.
  CHECK(cell("conv", Metric::EnergyUj, {10, 10}, {10.001, 10.001}, 0).movement == Movement::Worse);
  CHECK(cell("conv", Metric::EnergyUj, {10, 10}, {10, 10}, 0).movement == Movement::Same);
}

TEST_CASE("higher is better for peak fraction and requests per joule only", "[matrix]") {
  CHECK(cell("a", Metric::PeakFraction, {0.5, 0.5}, {0.6, 0.6}).movement == Movement::Better);
  CHECK(cell("a", Metric::RequestsPerJoule, {100, 100}, {80, 80}).movement == Movement::Worse);
  CHECK(cell("a", Metric::Cycles, {100, 100}, {120, 120}).movement == Movement::Worse);
  CHECK(cell("a", Metric::EnergyUj, {1, 1}, {0.8, 0.8}).movement == Movement::Better);
}

TEST_CASE("performance moves decide ship, rollback, bounded rollout or escalate", "[matrix]") {
  const DecisionRule rule;  // 1% floor, 5% rollout limit
  const std::vector<CorrectnessCell> ok{passing("a"), passing("b")};
  const auto better = cell("a", Metric::Cycles, {100, 100}, {90, 90});
  const auto same = cell("b", Metric::Cycles, {100, 100}, {100.5, 100.5});
  const auto worse3 = cell("b", Metric::EnergyUj, {100, 100}, {103, 103});
  const auto worse9 = cell("b", Metric::EnergyUj, {100, 100}, {109, 109});

  const auto nothing = decide(ok, {}, {same}, rule);
  CHECK(nothing.verdict == Verdict::Ship);
  CHECK(has_reason(nothing, "no performance cell moved"));

  const auto gain = decide(ok, {}, {better, same}, rule);
  CHECK(gain.verdict == Verdict::Ship);
  CHECK(gain.better == 1);

  const auto loss = decide(ok, {}, {worse3, same}, rule);
  CHECK(loss.verdict == Verdict::Rollback);
  CHECK(loss.worse == 1);

  const auto mixed_small = decide(ok, {}, {better, worse3}, rule);
  CHECK(mixed_small.verdict == Verdict::BoundedRollout);
  CHECK_THAT(mixed_small.worst_regression, WithinAbs(0.03, 1e-12));

  const auto mixed_large = decide(ok, {}, {better, worse3, worse9}, rule);
  CHECK(mixed_large.verdict == Verdict::Escalate);
  CHECK_THAT(mixed_large.worst_regression, WithinAbs(0.09, 1e-12));
  CHECK(has_reason(mixed_large, "b energy_uj +9.0%"));
}

TEST_CASE("a correctness regression rolls back whatever the performance", "[matrix]") {
  const auto better = cell("a", Metric::Cycles, {100, 100}, {50, 50});
  CorrectnessCell broken{"b", "", true, false, "stage load: transactions differ"};
  const auto d = decide({passing("a"), broken}, {}, {better}, DecisionRule{});
  CHECK(d.verdict == Verdict::Rollback);
  REQUIRE_FALSE(d.reasons.empty());
  // Most severe first, the ship reason of the faster cell still listed after it.
  CHECK(d.reasons.front().find("rollback: b: bit-exact on BASE, fails on NEW") == 0);
  CHECK(d.reasons.back().find("ship:") == 0);

  CorrectnessCell failing_before{"c", "", false, false, "hang"};
  CHECK(decide({failing_before}, {}, {}, DecisionRule{}).verdict == Verdict::Escalate);
}

TEST_CASE("quality: a top-1 drop rolls back, an SNR drop alone escalates", "[matrix]") {
  DecisionRule rule;
  QualityCell top1{"m.onnx", "int8", {30, 1.0}, {29.9, 0.9375}, false, false};
  classify(top1, rule);
  CHECK(top1.top1_dropped);
  CHECK_FALSE(top1.snr_dropped);
  CHECK(decide({}, {top1}, {}, rule).verdict == Verdict::Rollback);

  QualityCell snr{"m.onnx", "bf16", {40, 1.0}, {38, 1.0}, false, false};
  classify(snr, rule);
  CHECK(snr.snr_dropped);
  CHECK_FALSE(snr.top1_dropped);
  CHECK(decide({}, {snr}, {}, rule).verdict == Verdict::Escalate);

  QualityCell within{"m.onnx", "bf16", {40, 1.0}, {39.6, 1.0}, false, false};
  classify(within, rule);
  CHECK_FALSE(within.snr_dropped);
  CHECK(decide({}, {within}, {}, rule).verdict == Verdict::Ship);
}

TEST_CASE("corpus cells: regressed, unusable, fixed, failing differently, still failing",
          "[matrix]") {
  const DecisionRule rule;
  CorpusCell clean{"a.bpk", "mlp", false, true, true, "", "", ""};
  CorpusCell regressed{"b.bpk", "mlp", false, true, false, "", "stage load differs", ""};
  CorpusCell unusable{"c.bpk", "conv", true, false, false, "", "", "3 prompt interventions"};
  CorpusCell fixed{"d.bpk", "conv", true, false, true, "stage post differs", "", ""};
  CorpusCell still{"e.bpk", "conv", true, false, false, "hang", "hang", ""};
  CorpusCell differs{"f.bpk", "conv", true, false, false, "hang", "stage load differs", ""};

  CHECK(regressed.regressed());
  CHECK_FALSE(unusable.regressed());
  CHECK(fixed.fixed());
  CHECK_FALSE(still.fixed());

  CHECK(decide({}, {}, {}, rule, {clean}).verdict == Verdict::Ship);
  CHECK(decide({}, {}, {}, rule, {clean, regressed}).verdict == Verdict::Rollback);
  CHECK(decide({}, {}, {}, rule, {clean, unusable}).verdict == Verdict::Escalate);
  CHECK(decide({}, {}, {}, rule, {differs}).verdict == Verdict::Escalate);

  const auto f = decide({}, {}, {}, rule, {fixed, still});
  CHECK(f.verdict == Verdict::Ship);
  CHECK(has_reason(f, "corpus d.bpk (conv): fails on BASE, clean on NEW"));
  // The escaped failure that stays open changes nothing and adds no reason.
  CHECK_FALSE(has_reason(f, "e.bpk"));
}

TEST_CASE("owner roles follow the metric, then the mechanism", "[matrix]") {
  using bud::profile::TopClass;
  CHECK(owner_for(Metric::EnergyUj, TopClass::Memory) == Owner::PowerModel);
  CHECK(owner_for(Metric::RequestsPerJoule, TopClass::Useful) == Owner::Capacity);
  CHECK(owner_for(Metric::Cycles, TopClass::Scheduling) == Owner::RuntimeScheduler);
  CHECK(owner_for(Metric::Cycles, TopClass::Host) == Owner::RuntimeScheduler);
  CHECK(owner_for(Metric::PeakFraction, TopClass::Throttled) == Owner::PowerModel);
  CHECK(owner_for(Metric::Cycles, TopClass::Memory) == Owner::Performance);
  CHECK(std::string(verdict_name(Verdict::BoundedRollout)) == "bounded rollout");
}
