// `bisect --good G --bad B` on the mock design (tests/core/MockEmulator): two recorded mock runs,
// one with a fault injected, part at the exact cycle the fault acted, and the first differing
// state element is the one it flipped. The bisector builds the design the packets name through
// make_emulator; nothing here has an NPU behind it.
#include <catch2/catch.hpp>

#include "debugger/bisect/DiffBisector.h"
#include "tests/bisect/BisectTestSupport.h"
#include "tests/core/MockDesign.h"

namespace {

using namespace bud;

const auto kIntervals = test::mock_intervals<replay::RecordConfig>();

run::RunOptions mock_with(const std::vector<std::string>& faults) {
  test::use_mock_design();
  auto o = test::options_with("mlp", faults);
  o.emulator.design = "mock";
  return o;
}

}  // namespace

TEST_CASE("good/bad bisect finds the cycle and element of an injected mock fault",
          "[bisect][mock]") {
  const auto dir = test::temp_dir("mock_goodbad");
  const auto good = (dir / "good.bpk").string();
  const auto bad = (dir / "bad.bpk").string();
  const uint64_t at = GENERATE(300, 777);
  test::record(good, mock_with({}), kIntervals);
  test::record(bad, mock_with({"flip:acc[5]@" + std::to_string(at)}), kIntervals);
  const auto r = debugger::bisect_pair(good, bad, {});
  INFO(r.text());
  CHECK(r.verdict == debugger::DiffVerdict::Diverged);
  // The fault acts before the edge of cycle `at`: the states first differ one cycle later.
  REQUIRE(r.first_divergence_cycle);
  CHECK(*r.first_divergence_cycle == at + 1);
  CHECK(r.persistent);
  REQUIRE_FALSE(r.differences.empty());
  CHECK(r.differences.front().element == "acc");
  // From the last agreeing digest point (at most one digest interval back), both sides.
  CHECK(r.resimulated_cycles <= 2 * (64 + 1) + 2 * 256);
}

TEST_CASE("good/bad bisect of two identical mock runs says same", "[bisect][mock]") {
  const auto dir = test::temp_dir("mock_same");
  const auto a = (dir / "a.bpk").string();
  const auto b = (dir / "b.bpk").string();
  test::record(a, mock_with({}), kIntervals);
  test::record(b, mock_with({}), kIntervals);
  const auto r = debugger::bisect_pair(a, b, {});
  INFO(r.text());
  CHECK(r.verdict == debugger::DiffVerdict::Same);
}
