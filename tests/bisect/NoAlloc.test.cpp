// The per-transaction contract of the golden-model checker (TxnChecker, which the debugger's
// stage check runs on every transaction): checking, divergences included, never allocates or
// frees memory (tests/AllocCount.cpp counts both in this executable).
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "BisectTestSupport.h"
#include "debugger/bisect/GoldenTrace.h"
#include "debugger/bisect/TxnChecker.h"
#include "emu/npu/NpuEmulator.h"
#include "tests/AllocCount.h"

using namespace bud;

namespace {

/// Allocations plus frees so far.
uint64_t allocations_and_frees() { return test::allocations() + test::frees(); }

/// Keeps every transaction of a run (storage reserved up front).
struct Capture final : emu::TxnObserver {
  std::vector<emu::StageTxn> txns;
  void on_txn(const emu::StageTxn& t) override {
    if (txns.size() < txns.capacity()) txns.push_back(t);
  }
};

/// Runs `prepared` to its end on the RTL with `observer` watching; returns the final cycle.
uint64_t run_watched(const run::PreparedRun& prepared, const run::RunOptions& options,
                     emu::TxnObserver& observer) {
  emu::NpuEmulator emu(options.emulator);
  REQUIRE(run::start(prepared, options, emu).empty());
  emu.set_txn_observer(&observer);
  while (emu.state() == emu::RunState::Ready) emu.step(1u << 16);
  emu.set_txn_observer(nullptr);
  CHECK(emu.state() == emu::RunState::Finished);
  return emu.cycle();
}

/// Counts allocations made while the observer it forwards to runs.
struct Counting final : emu::TxnObserver {
  debugger::TxnChecker* inner = nullptr;
  uint64_t allocations = 0, calls = 0;
  uint64_t widest = 0;  ///< most golden transactions the checker held
  void on_txn(const emu::StageTxn& t) override {
    const uint64_t before = allocations_and_frees();
    inner->on_txn(t);
    allocations += allocations_and_frees() - before;
    ++calls;
    widest = std::max(widest, inner->window_size());
  }
};

/// Options running the conv residual block `passes` times (a workload file written for the call,
/// removed by the caller's `prepare`).
struct ConvRepeated {
  std::filesystem::path path;
  run::RunOptions options;
  explicit ConvRepeated(int passes) {
    std::ifstream in(std::string(BUD_SOURCE_DIR) + "/emu/workload/builtins/conv.textpb");
    std::ostringstream conv;
    conv << in.rdbuf();
    REQUIRE(!conv.str().empty());
    path = std::filesystem::temp_directory_path() /
           ("bud-noalloc-" + std::to_string(getpid()) + "-" + std::to_string(passes) + ".textpb");
    std::ofstream(path) << conv.str() << "repeat: " << passes << "\n";
    options = test::options_with(path.string());
  }
  ~ConvRepeated() { std::filesystem::remove(path); }
};

}  // namespace

TEST_CASE("the golden-model checker never allocates per transaction", "[bisect][alloc]") {
  const uint64_t before = allocations_and_frees();
  ::operator delete(::operator new(16));
  REQUIRE(allocations_and_frees() == before + 2);  // the counters count

  for (const char* workload : {"gemm_small", "mlp"}) {
    DYNAMIC_SECTION(workload) {
      const auto options = test::options_with(workload);
      auto prepared = run::prepare(options);
      REQUIRE(prepared);
      const auto trace = debugger::GoldenTrace::build(*prepared);
      REQUIRE(trace.error.empty());

      SECTION("live, on every transaction of a run") {
        debugger::TxnChecker checker(trace, std::array<uint64_t, emu::kNumStages>{});
        Counting counting;
        counting.inner = &checker;
        const uint64_t end = run_watched(*prepared, options, counting);
        const uint64_t at_finish = allocations_and_frees();
        checker.finish(end);
        CHECK(allocations_and_frees() == at_finish);
        CHECK(counting.calls > 200);
        CHECK(checker.checked() == counting.calls);
        CHECK(checker.divergences().empty());
        CHECK(counting.allocations == 0);
        // The checker holds a window of the golden streams, not the streams: at most what the
        // trace sized it for, and far less than the run's transactions.
        uint64_t golden_txns = 0, sized = 0;
        for (int s = 0; s < emu::kNumStages; ++s) {
          const auto& stream = trace.stream(static_cast<emu::Stage>(s));
          golden_txns += stream.size();
          sized += stream.window_capacity();
        }
        INFO("widest window " << counting.widest << " of " << golden_txns << " transactions");
        CHECK(counting.widest > 0);
        CHECK(counting.widest <= sized);
        CHECK(checker.window_size() == 0);
      }
      SECTION("with wrong, extra and missing transactions") {
        Capture cap;
        cap.txns.reserve(1u << 20);
        const uint64_t end = run_watched(*prepared, options, cap);
        REQUIRE(cap.txns.size() > 200);
        REQUIRE(cap.txns.size() < cap.txns.capacity());
        // Corrupt every 37th transaction's data, drop every 29th, repeat every 41st and send one
        // of a command that does not exist.
        std::vector<emu::StageTxn> stream;
        stream.reserve(cap.txns.size() * 2);
        for (size_t i = 0; i < cap.txns.size(); ++i) {
          auto t = cap.txns[i];
          if (i % 29 == 5) continue;
          if (i % 37 == 3) t.data[0] ^= 0x40;
          stream.push_back(t);
          if (i % 41 == 7) stream.push_back(t);
        }
        auto ghost = cap.txns.back();
        ghost.cmd_id = 1u << 30;
        stream.push_back(ghost);
        debugger::TxnChecker checker(trace, std::array<uint64_t, emu::kNumStages>{});
        const uint64_t start = allocations_and_frees();
        for (const auto& t : stream) checker.on_txn(t);
        checker.finish(end);
        const uint64_t allocated = allocations_and_frees() - start;
        CHECK(allocated == 0);
        std::array<int, 3> kinds{};
        for (const auto& d : checker.divergences()) ++kinds[static_cast<int>(d.kind)];
        CHECK(kinds[0] > 0);  // wrong
        CHECK(kinds[1] > 0);  // extra
        CHECK(kinds[2] > 0);  // missing
      }
    }
  }
}

TEST_CASE("the golden-model checker's memory does not grow with the run", "[bisect][alloc]") {
  // The conv residual block once and eight times over: the golden streams grow eightfold, the
  // windows the checker holds do not.
  struct Measured {
    uint64_t golden_txns = 0, widest = 0, sized = 0, allocations = 0;
  };
  auto measure = [&](int passes) {
    const ConvRepeated conv(passes);
    const auto& options = conv.options;
    Measured m;
    auto prepared = run::prepare(options);
    REQUIRE(prepared);
    const auto trace = debugger::GoldenTrace::build(*prepared);
    REQUIRE(trace.error.empty());
    for (int s = 0; s < emu::kNumStages; ++s) {
      const auto& stream = trace.stream(static_cast<emu::Stage>(s));
      m.golden_txns += stream.size();
      m.sized += stream.window_capacity();
    }
    debugger::TxnChecker checker(trace, std::array<uint64_t, emu::kNumStages>{});
    Counting counting;
    counting.inner = &checker;
    checker.finish(run_watched(*prepared, options, counting));
    CHECK(checker.divergences().empty());
    m.widest = counting.widest;
    m.allocations = counting.allocations;
    return m;
  };
  const Measured one = measure(1), eight = measure(8);
  INFO("golden transactions " << one.golden_txns << " -> " << eight.golden_txns
                              << ", widest window " << one.widest << " -> " << eight.widest);
  CHECK(eight.golden_txns > 7 * one.golden_txns);
  CHECK(eight.widest <= one.widest + one.widest / 10);  // a pass's boundary may add a few
  CHECK(eight.widest <= eight.sized);
  CHECK(eight.widest * 8 < eight.golden_txns);
  CHECK(eight.allocations == 0);
}

TEST_CASE("a stage that produces nothing makes its window grow, and all of it is missing",
          "[bisect][window]") {
  // Only the fetch stage's transactions reach the checker: the other stages' windows fill with
  // every fetched command's golden transactions (four passes of conv: beyond what they were
  // sized for) and at the end each stage reports its transactions missing (64 kept per stage),
  // fetch nothing.
  const ConvRepeated conv(4);
  const auto& options = conv.options;
  auto prepared = run::prepare(options);
  REQUIRE(prepared);
  const auto trace = debugger::GoldenTrace::build(*prepared);
  REQUIRE(trace.error.empty());
  Capture cap;
  cap.txns.reserve(1u << 20);
  const uint64_t end = run_watched(*prepared, options, cap);
  REQUIRE(cap.txns.size() < cap.txns.capacity());
  debugger::TxnChecker checker(trace, std::array<uint64_t, emu::kNumStages>{});
  uint64_t widest = 0;
  for (const auto& t : cap.txns)
    if (t.stage == emu::Stage::Fetch) {
      checker.on_txn(t);
      widest = std::max(widest, checker.window_size());
    }
  uint64_t golden_txns = 0;
  for (int s = 1; s < emu::kNumStages; ++s)
    golden_txns += trace.stream(static_cast<emu::Stage>(s)).size();
  CHECK(widest == golden_txns);  // everything but fetch, still expected
  uint64_t sized = 0;
  for (int s = 1; s < emu::kNumStages; ++s)
    sized += trace.stream(static_cast<emu::Stage>(s)).window_capacity();
  CHECK(widest > sized);  // the windows grew
  checker.finish(end);
  std::array<uint64_t, emu::kNumStages> missing{};
  for (const auto& d : checker.divergences()) {
    CHECK(d.kind == debugger::Divergence::Kind::Missing);
    REQUIRE(d.expected);
    CHECK(d.expected->stage == d.stage);
    ++missing[static_cast<int>(d.stage)];
  }
  CHECK(missing[0] == 0);
  for (int s = 1; s < emu::kNumStages; ++s) {
    INFO("stage " << s);
    CHECK(missing[s] == std::min<uint64_t>(64, trace.stream(static_cast<emu::Stage>(s)).size()));
  }
  // Listed stage by stage, in stream order within a stage.
  for (size_t i = 1; i < checker.divergences().size(); ++i) {
    const auto& a = checker.divergences()[i - 1];
    const auto& b = checker.divergences()[i];
    CHECK((a.stage < b.stage || (a.stage == b.stage && *a.expected_index < *b.expected_index)));
  }
  CHECK(checker.window_size() == 0);
}
