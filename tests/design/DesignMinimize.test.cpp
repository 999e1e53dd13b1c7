// The pure parts of `bud minimize` on a design packet (design/DeltaDebug.h, DesignMinimize.h):
// ddmin finds a 1-minimal subset and only ever keeps what the test accepted, the prefix search
// finds the shortest failing length in log2 tests, both stop on a spent budget with a passing
// answer, firmware lines are dropped without touching comments, and runs are classified and
// compared as the minimizer compares failures.
#include "design/DesignMinimize.h"

#include <catch2/catch.hpp>
#include <set>

#include "design/DeltaDebug.h"

using namespace bud::design;

namespace {

bool holds_all(const std::vector<size_t>& kept, const std::set<size_t>& needed) {
  size_t found = 0;
  for (size_t k : kept) found += needed.count(k);
  return found == needed.size();
}

}  // namespace

TEST_CASE("ddmin keeps exactly the items the failure needs", "[design][minimize]") {
  const std::set<size_t> needed{3, 7, 8};
  size_t tests = 0;
  const auto r = ddmin(13, [&](const std::vector<size_t>& kept) -> std::optional<bool> {
    ++tests;
    return holds_all(kept, needed);
  });
  CHECK_FALSE(r.exhausted);
  CHECK(r.kept == std::vector<size_t>{3, 7, 8});
  CHECK(tests < 13 * 13);  // far fewer than all pairs
  // Everything can go: one test, the empty set.
  tests = 0;
  const auto none = ddmin(13, [&](const std::vector<size_t>&) -> std::optional<bool> {
    ++tests;
    return true;
  });
  CHECK(none.kept.empty());
  CHECK(tests == 1);
  // Nothing can go: 1-minimal means every single removal was tried and refused.
  const auto all = ddmin(5, [](const std::vector<size_t>& kept) -> std::optional<bool> {
    return kept.size() == 5;
  });
  CHECK(all.kept == std::vector<size_t>{0, 1, 2, 3, 4});
}

TEST_CASE("ddmin on a spent budget returns a subset the test accepted", "[design][minimize]") {
  const std::set<size_t> needed{1, 30};
  std::vector<std::vector<size_t>> accepted{{}};
  int budget = 4;
  const auto r = ddmin(40, [&](const std::vector<size_t>& kept) -> std::optional<bool> {
    if (budget-- == 0) return std::nullopt;
    const bool ok = holds_all(kept, needed);
    if (ok) accepted.push_back(kept);
    return ok;
  });
  CHECK(r.exhausted);
  CHECK(holds_all(r.kept, needed));
  // What it returns is the whole set or the last subset accepted, never an untested one.
  CHECK((r.kept.size() == 40 || r.kept == accepted.back()));
}

TEST_CASE("the prefix search finds the shortest failing length in log2 tests",
          "[design][minimize]") {
  int tests = 0;
  const auto r = shortest_passing(0, 4096, [&](uint64_t k) -> std::optional<bool> {
    ++tests;
    return k >= 4;
  });
  CHECK(r.length == 4);
  CHECK_FALSE(r.exhausted);
  CHECK(tests <= 13);
  // Nothing shorter passes: the upper end, untested.
  CHECK(shortest_passing(0, 10, [](uint64_t k) -> std::optional<bool> { return k >= 10; }).length ==
        10);
  // A lower bound above zero is respected.
  CHECK(shortest_passing(5, 10, [](uint64_t) -> std::optional<bool> { return true; }).length == 5);
  // Out of budget after two tests: the shortest length accepted so far.
  int left = 2;
  const auto cut = shortest_passing(0, 1000, [&](uint64_t k) -> std::optional<bool> {
    if (left-- == 0) return std::nullopt;
    return k >= 100;
  });
  CHECK(cut.exhausted);
  CHECK(cut.length == 250);  // 500 and 250 both passed; the third test had no budget
}

TEST_CASE("firmware lines are dropped by command, comments stay", "[design][minimize]") {
  const std::string text =
      "# header\n"
      "write 0x08 1   # SRC\n"
      "\n"
      "   # indented comment\n"
      "write 0x10 512\n"
      "wait_irq timeout 20000\n"
      "read 0x04";  // no newline at the end
  const auto lines = firmware_command_lines(text);
  CHECK(lines == std::vector<size_t>{1, 4, 5, 6});
  CHECK(drop_lines(text, {}) == text);
  CHECK(drop_lines(text, {4, 6}) ==
        "# header\nwrite 0x08 1   # SRC\n\n   # indented comment\nwait_irq timeout 20000\n");
  CHECK(firmware_command_lines(drop_lines(text, {1, 4, 5, 6})).empty());
}

TEST_CASE("runs are classified and compared as the minimizer compares failures",
          "[design][minimize]") {
  DesignError none;
  RunOutcome r;
  r.checked = true;
  r.passed = true;
  CHECK(ending_of(r, none) == Ending::Pass);
  r.passed = false;
  r.first_mismatch = 40;
  CHECK(ending_of(r, none) == Ending::OutputMismatch);
  r.first_mismatch.reset();
  CHECK(ending_of(r, none) == Ending::FirmwareMismatch);
  r.cycle_limit = true;
  CHECK(ending_of(r, none) == Ending::CycleLimit);
  CHECK(ending_of(std::nullopt, DesignError{{}, "", kExitFirmwareTimeout}) ==
        Ending::FirmwareTimeout);
  CHECK(ending_of(std::nullopt, DesignError{{}, "", kExitReference}) == Ending::ReferenceFailed);
  CHECK(ending_of(std::nullopt, DesignError{{}, "", kExitAxiError}) == Ending::AxiError);
  CHECK(std::string(ending_name(Ending::OutputMismatch)) == "output-mismatch");

  RunOutcome good, bad;
  for (auto* o : {&good, &bad})
    for (const char* n : {"ar", "r", "compute", "w"}) {
      DesignHarness::StageState s;
      s.name = n;
      s.txns = 64;
      s.digest = 0x1234;
      o->stages.push_back(s);
    }
  CHECK_FALSE(first_differing_stage(good, bad));
  bad.stages[3].digest = 1;
  bad.stages[2].txns = 63;
  CHECK(first_differing_stage(good, bad) == std::optional<size_t>(2));
  FailureSignature a{Ending::OutputMismatch, Ending::Pass, 2};
  FailureSignature b = a;
  CHECK(a == b);
  b.first_stage = 3;
  CHECK_FALSE(a == b);
  b = a;
  b.good.reset();
  CHECK_FALSE(a == b);
}
