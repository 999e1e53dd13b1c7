// No false verdicts: fault-free runs of every built-in, over memory seeds, jitter, reordering and
// checkpoint intervals, bisect to "pass". Small intervals put checkpoints inside commands whose
// DRAM responses came back out of order; the checker resumed there must not mistake which of the
// command's transactions were already produced.
#include "BisectTestSupport.h"

using namespace bud;

TEST_CASE("fault-free runs bisect to pass over seeds, jitter, reordering and intervals",
          "[bisect][sweep]") {
  const auto dir = test::temp_dir("sweep");
  const uint64_t intervals[] = {1024, 4096, 65536, replay::kDefaultCheckpointInterval};
  int runs = 0, false_verdicts = 0;
  for (const char* w : {"gemm_small", "mlp", "conv", "mem_bound", "compute_bound"}) {
    for (uint64_t seed = 1; seed <= 8; ++seed) {
      for (uint32_t jitter : {0u, 40u}) {
        for (bool reorder : {true, false}) {
          // The long workload gets every interval for two seeds (its run is 274k cycles).
          const bool all_intervals = std::string(w) != "compute_bound" || seed <= 2;
          for (uint64_t interval : intervals) {
            if (!all_intervals && interval < 65536) continue;
            auto options = test::options_with(w);
            options.emulator.dram.seed = seed;
            options.emulator.dram.jitter = jitter;
            options.emulator.dram.reorder = reorder;
            replay::RecordConfig config;
            config.checkpoint_interval = interval;
            config.digest_interval = interval / 4;
            const std::string path = (dir / "p.bpk").string();
            const auto out = test::record(path, options, config);
            REQUIRE(out.report.passed);
            const auto r = debugger::bisect_packet(test::read(path), {});
            ++runs;
            if (r.verdict != debugger::BisectVerdict::Pass) {
              ++false_verdicts;
              UNSCOPED_INFO(w << " seed " << seed << " jitter " << jitter << " reorder "
                              << reorder << " interval " << interval << ": " << r.message);
            }
          }
        }
      }
    }
  }
  INFO(runs << " runs");
  CHECK(false_verdicts == 0);
  CHECK(runs >= 5 * 8 * 2 * 2 * 2);
}
