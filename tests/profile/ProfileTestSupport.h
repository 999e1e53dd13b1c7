// Shared by the profiler's tests: a profiled run of a built-in under given memory options.
#pragma once

#include <catch2/catch.hpp>
#include <string>

#include "profile/Profiler.h"

namespace bud::profile_test {
using namespace bud::profile;

struct Profiled {
  run::PreparedRun prepared;
  ProfiledRun run;
};

/// Prepares and runs `options` profiled; requires that it started and passed every check.
inline Profiled profiled(const run::RunOptions& options) {
  Profiled p;
  auto prepared = run::prepare(options);
  INFO(prepared.error());
  REQUIRE(prepared);
  p.prepared = std::move(*prepared);
  p.run = run_profiled(p.prepared, options);
  INFO(p.run.error);
  REQUIRE(p.run.attribution);
  INFO(p.run.report.message);
  REQUIRE(p.run.report.passed);
  return p;
}

inline Profiled profiled(const std::string& workload) {
  run::RunOptions o;
  o.workload = workload;
  return profiled(o);
}

}  // namespace bud::profile_test
