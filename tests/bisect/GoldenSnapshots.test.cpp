// Golden snapshots (GoldenTrace, GoldenStream): a checker that starts mid-run continues its golden
// model from the latest snapshot before what it needs instead of from reset, and finds exactly
// what one started from reset finds.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "BisectTestSupport.h"
#include "debugger/bisect/GoldenTrace.h"
#include "debugger/bisect/TxnChecker.h"
#include "emu/npu/NpuEmulator.h"

using namespace bud;

namespace {

/// Every transaction of a run, and the stage digests before each.
struct Recorder final : emu::TxnObserver {
  std::vector<emu::StageTxn> txns;
  std::vector<std::array<emu::StageDigest, emu::kNumStages>> before;
  std::array<emu::StageDigest, emu::kNumStages> digests{};
  void on_txn(const emu::StageTxn& t) override {
    before.push_back(digests);
    txns.push_back(t);
    digests[static_cast<int>(t.stage)].add(t);
  }
};

std::string describe(const debugger::Divergence& d) {
  return std::string(d.kind_name()) + " " + emu::stage_name(d.stage) + " #" +
         std::to_string(d.cmd_id) + " cycle " + std::to_string(d.cycle) + " expected@" +
         (d.expected_index ? std::to_string(*d.expected_index) : "-");
}

}  // namespace

TEST_CASE("a checker started from a golden snapshot finds what one started from reset finds",
          "[bisect][snapshots]") {
  // The conv residual block 8 times (~2,700 commands); snapshots every 64 commands.
  std::ifstream in(std::string(BUD_SOURCE_DIR) + "/emu/workload/builtins/conv.textpb");
  std::ostringstream conv;
  conv << in.rdbuf();
  const auto path = std::filesystem::temp_directory_path() /
                    ("bud-snapshots-" + std::to_string(getpid()) + ".textpb");
  std::ofstream(path) << conv.str() << "repeat: 8\n";
  const auto options = test::options_with(path.string());
  auto prepared = run::prepare(options);
  std::filesystem::remove(path);
  REQUIRE(prepared);
  debugger::GoldenTraceOptions every64;
  every64.snapshot_interval = 64;
  debugger::GoldenTraceOptions none;
  none.snapshot_interval = SIZE_MAX;
  const auto with = debugger::GoldenTrace::build(*prepared, every64);
  const auto without = debugger::GoldenTrace::build(*prepared, none);
  REQUIRE(with.error.empty());
  CHECK(with.snapshots().size() > 30);
  CHECK(without.snapshots().empty());
  for (const auto& s : with.snapshots()) CHECK(s.next % 64 == 0);
  // The same summaries either way.
  for (int s = 0; s < emu::kNumStages; ++s)
    CHECK(with.stream(static_cast<emu::Stage>(s)).total ==
          without.stream(static_cast<emu::Stage>(s)).total);

  // Re-deriving golden transactions (what reports show) starts from a snapshot too.
  std::vector<std::pair<emu::Stage, uint64_t>> wanted;
  for (int s = 0; s < emu::kNumStages; ++s) {
    const uint64_t size = with.stream(static_cast<emu::Stage>(s)).size();
    for (uint64_t i : {size / 2, size * 3 / 4, size - 1})
      wanted.emplace_back(static_cast<emu::Stage>(s), i);
  }
  const auto fast = with.materialize(wanted), slow = without.materialize(wanted);
  REQUIRE(fast.size() == wanted.size());
  for (size_t i = 0; i < wanted.size(); ++i) {
    INFO("wanted " << i);
    CHECK(fast[i].stage == wanted[i].first);
    CHECK(fast[i].size > 0);
    CHECK(fast[i].hash() == slow[i].hash());
  }

  Recorder rec;
  emu::NpuEmulator emu(options.emulator);
  REQUIRE(run::start(*prepared, options, emu).empty());
  emu.set_txn_observer(&rec);
  while (emu.state() == emu::RunState::Ready) emu.step(1u << 16);
  emu.set_txn_observer(nullptr);
  REQUIRE(emu.state() == emu::RunState::Finished);
  const size_t n = rec.txns.size();
  REQUIRE(n > 10000);

  for (const bool faulty : {false, true}) {
    // Every transaction from the start on, every 97th corrupted when faulty.
    for (size_t k : {n / 7, n / 3, n / 2, 2 * n / 3, 6 * n / 7}) {
      DYNAMIC_SECTION((faulty ? "faulty" : "clean") << ", from transaction " << k) {
        debugger::TxnChecker a(with, rec.before[k]);
        debugger::TxnChecker b(without, rec.before[k]);
        CHECK(a.golden_start() > 0);  // from a snapshot
        CHECK(b.golden_start() == 0);
        CHECK(a.start_exact() == b.start_exact());
        bool same_windows = true;
        for (size_t i = k; i < n; ++i) {
          emu::StageTxn t = rec.txns[i];
          if (faulty && i % 97 == 5) t.data[1] ^= 0x10;
          a.on_txn(t);
          b.on_txn(t);
          same_windows = same_windows && a.window_size() == b.window_size();
        }
        CHECK(same_windows);
        a.finish(emu.cycle());
        b.finish(emu.cycle());
        std::vector<std::string> da, db;
        for (const auto& d : a.divergences()) da.push_back(describe(d));
        for (const auto& d : b.divergences()) db.push_back(describe(d));
        CHECK(da == db);
        CHECK(da.empty() != faulty);
        CHECK_FALSE(a.before_start());
        CHECK_FALSE(b.before_start());
      }
    }
  }
}
