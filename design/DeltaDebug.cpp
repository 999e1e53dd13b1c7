#include "design/DeltaDebug.h"

#include <algorithm>

namespace bud::design {

namespace {

// `items` cut into `parts` contiguous chunks of nearly equal size (the first ones one longer).
std::vector<std::vector<size_t>> split(const std::vector<size_t>& items, size_t parts) {
  std::vector<std::vector<size_t>> out;
  const size_t base = items.size() / parts, extra = items.size() % parts;
  size_t at = 0;
  for (size_t p = 0; p < parts; ++p) {
    const size_t n = base + (p < extra ? 1 : 0);
    out.emplace_back(items.begin() + static_cast<std::ptrdiff_t>(at),
                     items.begin() + static_cast<std::ptrdiff_t>(at + n));
    at += n;
  }
  return out;
}

std::vector<size_t> without(const std::vector<size_t>& items, const std::vector<size_t>& chunk) {
  std::vector<size_t> out;
  std::set_difference(items.begin(), items.end(), chunk.begin(), chunk.end(),
                      std::back_inserter(out));
  return out;
}

}  // namespace

SubsetResult ddmin(size_t n, const SubsetTest& test) {
  SubsetResult r;
  for (size_t i = 0; i < n; ++i) r.kept.push_back(i);
  if (n == 0) return r;
  // Nothing at all is the best outcome and costs one test.
  const auto none = test({});
  if (!none) {
    r.exhausted = true;
    return r;
  }
  if (*none) {
    r.kept.clear();
    return r;
  }
  size_t granularity = 2;
  while (r.kept.size() >= 2) {
    granularity = std::min(granularity, r.kept.size());
    const auto chunks = split(r.kept, granularity);
    bool reduced = false;
    // A chunk alone, then everything but a chunk (for two chunks the complements are the
    // chunks themselves: already tried).
    for (const auto& c : chunks) {
      const auto ok = test(c);
      if (!ok) {
        r.exhausted = true;
        return r;
      }
      if (*ok) {
        r.kept = c;
        granularity = 2;
        reduced = true;
        break;
      }
    }
    for (size_t i = 0; !reduced && granularity > 2 && i < chunks.size(); ++i) {
      const auto rest = without(r.kept, chunks[i]);
      const auto ok = test(rest);
      if (!ok) {
        r.exhausted = true;
        return r;
      }
      if (*ok) {
        r.kept = rest;
        granularity = std::max<size_t>(granularity - 1, 2);
        reduced = true;
      }
    }
    if (reduced) continue;
    if (granularity >= r.kept.size()) break;  // single items tried: 1-minimal
    granularity = std::min(granularity * 2, r.kept.size());
  }
  return r;
}

PrefixResult shortest_passing(uint64_t lo, uint64_t hi, const LengthTest& test) {
  PrefixResult r{hi, false};
  while (lo < r.length) {
    const uint64_t mid = lo + (r.length - lo) / 2;
    const auto ok = test(mid);
    if (!ok) {
      r.exhausted = true;
      return r;
    }
    if (*ok) r.length = mid;
    else lo = mid + 1;
  }
  return r;
}

}  // namespace bud::design
