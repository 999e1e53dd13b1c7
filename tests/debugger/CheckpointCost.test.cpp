// Micro-measure of what one checkpoint costs (Timeline capture) on the state of the debugger
// benchmark (tests/bench/debug_bench.sh: examples/long_run.textpb, clock enabled one cycle in
// three). It prints figures and asserts only that checkpoints were taken: timings on a shared
// machine are not pass/fail material. Hidden; run it with
//   build/tests/debugger/test_debugger "[.bench]"
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "debugger/session/Timeline.h"
#include "emu/npu/NpuEmulator.h"
#include "tests/debugger/DebuggerTestSupport.h"

TEST_CASE("checkpoint cost on the debugger benchmark's state (prints, no timing check)",
          "[debugger][timeline][.bench]") {
  bud::run::RunOptions options;
  options.workload = std::string(BUD_SOURCE_DIR) + "/examples/long_run.textpb";
  options.emulator.throttle.period = 3;
  options.emulator.throttle.on_cycles = 1;
  const auto prepared = bud::run::prepare(options);
  REQUIRE(prepared);
  bud::emu::NpuEmulator emu(options.emulator);
  REQUIRE(bud::run::start(*prepared, options, emu).empty());

  // The benchmark's automatic interval; checkpoints named so that none is thinned out.
  constexpr uint64_t kInterval = 262'144;
  constexpr int kCheckpoints = 12;
  bud::debugger::TimelineConfig config;
  config.interval = uint64_t{1} << 40;
  bud::debugger::Timeline timeline(emu, config);
  timeline.reset();

  using Clock = std::chrono::steady_clock;
  std::vector<double> capture_ms, save_ms;
  for (int i = 0; i < kCheckpoints; ++i) {
    REQUIRE(emu.step(kInterval).cycles == kInterval);
    auto t0 = Clock::now();
    timeline.save_named(std::to_string(i));
    auto t1 = Clock::now();
    std::vector<uint8_t> raw;
    emu.save(raw);
    auto t2 = Clock::now();
    capture_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    save_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
  }
  size_t raw_bytes = 0, new_bytes = 0;
  int named = 0;
  for (const auto& c : timeline.list()) {
    if (c.name.empty()) continue;
    ++named;
    raw_bytes += c.raw_bytes;
    new_bytes += c.bytes;
  }
  REQUIRE(named == kCheckpoints);
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::printf("checkpoint every %llu cycles, %d checkpoints after the first:\n",
              static_cast<unsigned long long>(kInterval), kCheckpoints);
  std::printf("  Timeline capture: median %.3f ms, min %.3f ms\n", median(capture_ms),
              *std::min_element(capture_ms.begin(), capture_ms.end()));
  std::printf("  Emulator::save (whole state into a vector): median %.3f ms\n", median(save_ms));
  bud::emu::StateSegments segments;
  emu.save_segments(segments);
  size_t largest = 0;
  for (size_t i = 0; i < segments.count(); ++i)
    largest = std::max(largest, segments.at(i).bytes.size());
  std::printf("  %zu segments, largest %zu bytes\n", segments.count(), largest);
  std::printf("  raw state %.2f MB, new compressed bytes %.1f KB per checkpoint\n",
              static_cast<double>(raw_bytes) / named / 1e6,
              static_cast<double>(new_bytes) / named / 1e3);
}
