// The two searches `bud minimize` runs on a design packet's inputs (design/DesignMinimize.h),
// kept apart from any design so they can be tested on their own: ddmin (Zeller and
// Hildebrandt's delta debugging) over a list of items, and the shortest prefix that still fails.
// Both only ever keep a candidate the test accepted, so what they return always passes the test;
// both stop when the test says the budget is spent (nullopt) and return the best found so far.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace bud::design {

/// Does this candidate still fail the same way? nullopt: no more candidates may be tried.
using SubsetTest = std::function<std::optional<bool>(const std::vector<size_t>& kept)>;
using LengthTest = std::function<std::optional<bool>(uint64_t length)>;

struct SubsetResult {
  std::vector<size_t> kept;  ///< indices into the items, ascending
  bool exhausted = false;    ///< the test ran out of budget before the search ended
};

/// ddmin over items 0..n-1, all of which together pass the test (not re-tested). Tries the empty
/// set first, then subsets and complements at growing granularity. Without a budget limit the
/// result is 1-minimal: removing any single kept item makes the test fail.
SubsetResult ddmin(size_t n, const SubsetTest& test);

struct PrefixResult {
  uint64_t length = 0;  ///< a length that passes the test (`hi` when none shorter did)
  bool exhausted = false;
};

/// Binary search for the shortest length in [lo, hi] that passes, given that `hi` passes (not
/// re-tested). Exact when passing is monotone in the length; otherwise a passing length whose
/// predecessor in the search failed. At most ceil(log2(hi - lo + 1)) tests.
PrefixResult shortest_passing(uint64_t lo, uint64_t hi, const LengthTest& test);

}  // namespace bud::design
