// Shared helpers of the NPU tests: the memory-timing configurations every sweep uses, cached
// prepared workloads (lowering, reference and golden model run once per workload and seed) and a
// runner that keeps the emulator alive so tests can look at it after the run.
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "emu/golden/GoldenNpu.h"
#include "emu/npu/NpuEmulator.h"
#include "emu/run/RunJob.h"
#include "emu/workload/Builtins.h"

namespace bud::test {

/// A named memory-timing / throttle configuration.
struct TimingCase {
  std::string name;
  emu::NpuConfig npu;
};

/// The configurations of the quick sweeps: default; high latency with jitter; narrow in-order
/// channel; bursty back-pressure; two requests in flight; throttled one cycle in three.
inline std::vector<TimingCase> timing_cases() {
  std::vector<TimingCase> v;
  v.push_back({"default", {}});
  {
    TimingCase c{"latency200_jitter100", {}};
    c.npu.dram.base_latency = 200;
    c.npu.dram.jitter = 100;
    v.push_back(c);
  }
  {
    TimingCase c{"bw8_in_order", {}};
    c.npu.dram.bytes_per_cycle = 8;
    c.npu.dram.reorder = false;
    v.push_back(c);
  }
  {
    TimingCase c{"bursty", {}};
    c.npu.dram.bursty = true;
    c.npu.dram.burst_duty_pct = 50;
    c.npu.dram.burst_period = 64;
    v.push_back(c);
  }
  {
    TimingCase c{"outstanding2", {}};
    c.npu.dram.max_outstanding = 2;
    v.push_back(c);
  }
  {
    TimingCase c{"throttle_1_of_3", {}};
    c.npu.throttle.period = 3;
    c.npu.throttle.on_cycles = 1;
    v.push_back(c);
  }
  return v;
}

/// Names of every built-in workload.
inline std::vector<std::string> builtin_names() {
  std::vector<std::string> v;
  for (const auto& b : workload::list_builtins()) v.push_back(b.name);
  return v;
}

/// Options for running `workload` with data seed `seed` (nullopt: the workload's own).
inline run::RunOptions options_for(const std::string& workload,
                                   std::optional<uint64_t> seed = std::nullopt,
                                   const emu::NpuConfig& npu = {}) {
  run::RunOptions o;
  o.workload = workload;
  o.seed = seed;
  o.emulator = npu;
  o.max_cycles = 20'000'000;
  return o;
}

/// prepare() once per (workload, seed): the reference and golden model are the slow part.
inline const run::PreparedRun& prepared(const std::string& workload,
                                        std::optional<uint64_t> seed = std::nullopt) {
  static std::map<std::pair<std::string, std::optional<uint64_t>>,
                  std::unique_ptr<run::PreparedRun>>
      cache;
  auto& slot = cache[{workload, seed}];
  if (!slot) {
    auto p = run::prepare(options_for(workload, seed));
    INFO(p.error());
    REQUIRE(p.ok());
    slot = std::make_unique<run::PreparedRun>(std::move(p).value());
  }
  return *slot;
}

/// Owns NpuEmulators and destroys them in creation order. Several emulators alive at once must be
/// destroyed oldest first: destroying a newer one first leaves Verilator's thread context pointing
/// at freed memory, and the older one's destructor then hangs or corrupts the heap (see
/// EmulatorLifetime.test.cpp). Tests that need two emulators at once keep them in a Fleet.
class Fleet {
 public:
  Fleet() = default;
  Fleet(const Fleet&) = delete;
  Fleet& operator=(const Fleet&) = delete;
  ~Fleet() {
    for (auto& e : emus_) e.reset();
  }
  /// A new emulator with `config`, loaded with `job`.
  emu::NpuEmulator& make(const emu::HostJob& job, const emu::NpuConfig& config = {}) {
    emus_.push_back(std::make_unique<emu::NpuEmulator>(config));
    const std::string e = emus_.back()->load(job);
    INFO(e);
    REQUIRE(e.empty());
    return *emus_.back();
  }

 private:
  std::vector<std::unique_ptr<emu::NpuEmulator>> emus_;
};

/// A finished run with its emulator, for tests that inspect the emulator afterwards.
struct LiveRun {
  std::unique_ptr<emu::NpuEmulator> emu;
  run::RunReport report;
};

inline LiveRun run_live(const run::PreparedRun& p, const run::RunOptions& o) {
  LiveRun r;
  r.emu = std::make_unique<emu::NpuEmulator>(o.emulator);
  const std::string e = r.emu->load(p.job);
  INFO(e);
  REQUIRE(e.empty());
  r.report = run::finish(p, o, *r.emu);
  return r;
}

/// The golden model's own run of a prepared program (counts the report does not keep).
inline golden::RunResult golden_run(const run::PreparedRun& p) {
  golden::GoldenNpu g(p.program.dram_bytes);
  for (const auto& r : p.program.dram_init) g.write_dram(r.addr, r.bytes);
  auto res = g.run(p.program.commands);
  INFO(res.error);
  REQUIRE(res.ok);
  return res;
}

/// Every failure line of a report, for INFO().
inline std::string failures_text(const run::RunReport& r) {
  std::string s = r.message;
  for (const auto& f : r.failures) s += "\n  " + f;
  return s;
}

/// Checks that a run finished and passed bit-exactly, and that the checks had something to
/// compare: every stage's digest equals the golden model's and saw transactions.
inline void check_bit_exact(const run::RunReport& r) {
  INFO(failures_text(r));
  CHECK(r.state == emu::RunState::Finished);
  CHECK(r.passed);
  for (int s = 0; s < emu::kNumStages; ++s) {
    CHECK(r.rtl_digests[s] == r.golden_digests[s]);
    CHECK(r.golden_digests[s].count > 0);
  }
}

inline uint64_t counter(const run::RunReport& r, isa::Counter c) {
  return r.counters[static_cast<int>(c)];
}

}  // namespace bud::test
