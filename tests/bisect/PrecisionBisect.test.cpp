// The precision bisect: two precision assignments of one workload, the change that breaks the
// SNR guardrail, the first layer below it, and a reproducer that breaks it again; through the
// library (assignments and packets) and checked against an independent evaluation of the
// reproducer.
#include <cmath>

#include "BisectTestSupport.h"
#include "debugger/bisect/DiffBisector.h"
#include "emu/run/Designs.h"
#include "emu/workload/Quality.h"

using namespace bud;

namespace {

const std::string kNeedsBf16 = std::string(BUD_SOURCE_DIR) + "/examples/precision/needs_bf16.textpb";

/// A chain of `n` dense layers, all calibrated but layer `needy`, whose factor 2^-14 puts its
/// outputs below int8's resolution (as in needs_bf16), guardrail 20 dB.
std::string chain(int n, int needy) {
  std::string s = "name: \"chain\"\nseed: 5\ninput_shape: [8, 16]\nmin_snr_db: 20\n";
  for (int i = 0; i < n; ++i) {
    s += "layer { name: \"fc" + std::to_string(i) + "\" dense { m: 8 k: 16 n: 16" +
         (i + 1 < n ? " relu: true" : "") + " }";
    if (i == needy) s += " quant { mult: 1 shift: 14 }";
    s += " }\n";
  }
  return s;
}

/// Each layer's SNR under `assignment` (a precision file's text), evaluated independently of
/// the bisector.
std::vector<double> snrs(const std::string& workload, const std::string& assignment) {
  run::RunOptions o;
  o.workload = workload;
  auto loaded = run::load_workload(o);
  REQUIRE(loaded);
  workload::Workload w = std::move(loaded).value();
  REQUIRE_FALSE(workload::assign_precision(w, assignment, "test"));
  const auto array = isa::default_array();
  const auto q = workload::network_quality(w, workload::run_reference(w, array),
                                           workload::float_network(w));
  std::vector<double> out;
  for (const auto& l : q) out.push_back(l.snr_db);
  return out;
}

}  // namespace

TEST_CASE("precision bisect: the reader that makes a layer's output int8 is the culprit",
          "[bisect][precision]") {
  const auto r = debugger::bisect_assignments(test::options_with(kNeedsBf16), "auto", "int8", {});
  INFO(r.text());
  REQUIRE(r.verdict == debugger::DiffVerdict::Quality);
  REQUIRE(r.mechanism);
  CHECK(*r.mechanism == debugger::Mechanism::Precision);
  REQUIRE(r.precision);
  const auto& p = *r.precision;
  CHECK(p.regressed);
  CHECK(p.min_snr_db == 20);  // the workload's guardrail
  CHECK(p.changed == std::vector<std::string>{"fc2", "fc3"});
  // fc2 runs BF16 or int8 alike: what breaks it is the rounding of its output to int8, which
  // its reader fc3 decides.
  CHECK(*p.first_layer == "fc2");
  CHECK(*p.culprit == "fc3");
  CHECK(p.reproducer_alone);
  CHECK(p.reproducer_layer == "fc2");
  REQUIRE(p.reproducer_layer_out);
  CHECK(*p.reproducer_layer_out == workload::Precision::Int8);
  // The reproducer, evaluated on its own, breaks the guardrail at fc2 where auto met it.
  const auto good = snrs(kNeedsBf16, "* int8\nfc2 bf16\nfc3 bf16\n");
  const auto repro = snrs(kNeedsBf16, p.reproducer);
  REQUIRE(repro.size() == 3);
  CHECK(good[1] >= 20);
  CHECK(repro[1] < 20);
  CHECK(repro[1] == Approx(p.reproducer_snr_db));
  CHECK(p.layers[1].bad_snr_db < 20);
  CHECK(p.layers[1].good_snr_db == Approx(good[1]));
  // --json carries it all.
  const auto j = r.to_json();
  CHECK(j.at("verdict") == "quality");
  CHECK(j.at("mechanism") == "precision");
  CHECK(j.at("precision").at("culprit") == "fc3");
  CHECK(j.at("precision").at("first_layer") == "fc2");
}

TEST_CASE("precision bisect: no regression when the bad side meets the guardrail where good does",
          "[bisect][precision]") {
  const auto o = test::options_with(kNeedsBf16);
  // All BF16 keeps every layer above 20 dB: nothing breaks.
  auto r = debugger::bisect_assignments(o, "auto", "bf16", {});
  INFO(r.text());
  CHECK(r.verdict == debugger::DiffVerdict::Same);
  REQUIRE(r.precision);
  CHECK_FALSE(r.precision->regressed);
  CHECK_FALSE(r.precision->culprit);
  // The other way round int8 is the good side: fc2 below the guardrail there is not a
  // regression of auto's.
  r = debugger::bisect_assignments(o, "int8", "auto", {});
  CHECK(r.verdict == debugger::DiffVerdict::Same);
  // A guardrail above what int8 reaches anywhere makes fc1 the first layer.
  debugger::DiffOptions strict;
  strict.min_snr_db = 45;
  r = debugger::bisect_assignments(o, "bf16", "int8", strict);
  INFO(r.text());
  REQUIRE(r.verdict == debugger::DiffVerdict::Quality);
  CHECK(*r.precision->first_layer == "fc1");
  CHECK(r.precision->min_snr_db == 45);
}

TEST_CASE("precision bisect: a chain takes log2 steps to the needy layer's reader",
          "[bisect][precision]") {
  const auto dir = test::temp_dir("precision_chain");
  for (int needy : {0, 3, 6}) {
    DYNAMIC_SECTION("needy fc" << needy) {
      const std::string file = (dir / ("chain" + std::to_string(needy) + ".textpb")).string();
      std::ofstream(file) << chain(8, needy);
      const auto r = debugger::bisect_assignments(test::options_with(file), "bf16", "int8", {});
      INFO(r.text());
      REQUIRE(r.verdict == debugger::DiffVerdict::Quality);
      const auto& p = *r.precision;
      CHECK(p.changed.size() == 8);
      CHECK(*p.first_layer == "fc" + std::to_string(needy));
      CHECK(*p.culprit == "fc" + std::to_string(needy + 1));
      // Both ends, three halvings of eight changes, one reproducer.
      CHECK(p.evaluations == 2 + 3 + 1);
      const auto repro = snrs(file, p.reproducer);
      CHECK(repro[static_cast<size_t>(needy)] < 20);
    }
  }
}

TEST_CASE("precision bisect from two packets of one workload", "[bisect][precision]") {
  const auto dir = test::temp_dir("precision_packets");
  auto o = test::options_with(kNeedsBf16);
  o.precision = "auto";
  const std::string good = (dir / "good.bpk").string();
  test::record(good, o);
  o.precision = "int8";
  const std::string bad = (dir / "bad.bpk").string();
  test::record(bad, o);
  const auto r = debugger::bisect_pair(good, bad, {});
  INFO(r.text());
  REQUIRE(r.verdict == debugger::DiffVerdict::Quality);
  CHECK(*r.precision->culprit == "fc3");
  CHECK(r.good_cycles > r.bad_cycles);  // BF16 costs cycles: auto is slower than int8
  // Another data seed is not one workload's two assignments: the functional bisect answers.
  o.seed = 99;
  const std::string other = (dir / "other.bpk").string();
  test::record(other, o);
  const auto f = debugger::bisect_pair(good, other, {});
  CHECK_FALSE(f.precision);
  CHECK(f.verdict == debugger::DiffVerdict::Diverged);
}

TEST_CASE("precision bisect: bad assignments and workloads are errors naming them",
          "[bisect][precision]") {
  const auto o = test::options_with(kNeedsBf16);
  auto r = debugger::bisect_assignments(o, "int4", "int8", {});
  CHECK(r.verdict == debugger::DiffVerdict::Error);
  CHECK(r.message.find("--good") != std::string::npos);
  CHECK(r.message.find("int4") != std::string::npos);
  const auto dir = test::temp_dir("precision_bad");
  const std::string file = (dir / "bad.prec").string();
  std::ofstream(file) << "fc1 int8\nfc9 bf16\n";
  r = debugger::bisect_assignments(o, "int8", file, {});
  CHECK(r.verdict == debugger::DiffVerdict::Error);
  CHECK(r.message.find("bad.prec:2:1") != std::string::npos);
  r = debugger::bisect_assignments(test::options_with("no_such_workload"), "int8", "bf16", {});
  CHECK(r.verdict == debugger::DiffVerdict::Error);
  CHECK(r.message.find("no_such_workload") != std::string::npos);
}
