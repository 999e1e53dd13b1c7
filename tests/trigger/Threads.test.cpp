// The evaluation thread (TriggerEngine, "frames"): triggers evaluated on a second thread from
// per-cycle frames give exactly what inline evaluation gives — same hits at the same cycles with
// the same values, counters and capture windows, and the run ends at the same cycle in the same
// state — including barrier actions (halt, snapshot, checkpoint) found after the simulation has
// run ahead, which bring the run back to the hit by re-execution.
#include <unistd.h>

#include <filesystem>

#include "tests/trigger/TriggerTestSupport.h"

using namespace bud;

namespace {

std::filesystem::path process_dir() {
  return std::filesystem::path(BUD_BINARY_DIR) / "trigger_test" /
         ("threads-" + std::to_string(getpid()));
}

// Removes this process's directory when the test program exits.
struct Cleanup {
  ~Cleanup() {
    std::error_code ec;
    std::filesystem::remove_all(process_dir(), ec);
  }
} cleanup;

std::string dir(const std::string& leaf) {
  // Per process: several instances of the test may run at once.
  const auto d = process_dir() / leaf;
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d.string();
}

void require_same(const test::TriggerRun& a, const test::TriggerRun& b) {
  CHECK(a.drive.halted == b.drive.halted);
  CHECK(a.drive.error == b.drive.error);
  CHECK(a.emu->cycle() == b.emu->cycle());
  CHECK(a.emu->state() == b.emu->state());
  CHECK(a.emu->digest() == b.emu->digest());
  CHECK(a.engine->dropped_hits() == b.engine->dropped_hits());
  const auto& ha = a.engine->hits();
  const auto& hb = b.engine->hits();
  REQUIRE(ha.size() == hb.size());
  for (size_t i = 0; i < ha.size(); ++i) {
    INFO("hit " << i << ": " << ha[i].trigger << " at " << ha[i].cycle);
    CHECK(ha[i].cycle == hb[i].cycle);
    CHECK(ha[i].trigger == hb[i].trigger);
    CHECK(ha[i].number == hb[i].number);
    CHECK(ha[i].state_path == hb[i].state_path);
    CHECK(ha[i].values == hb[i].values);
    CHECK(ha[i].counters == hb[i].counters);
    CHECK(ha[i].messages == hb[i].messages);
    CHECK(ha[i].halted == hb[i].halted);
    CHECK(std::filesystem::path(ha[i].checkpoint).filename() ==
          std::filesystem::path(hb[i].checkpoint).filename());
    REQUIRE(ha[i].captures.size() == hb[i].captures.size());
    for (size_t k = 0; k < ha[i].captures.size(); ++k) {
      CHECK(ha[i].captures[k].from == hb[i].captures[k].from);
      CHECK(ha[i].captures[k].to == hb[i].captures[k].to);
      CHECK(ha[i].captures[k].error == hb[i].captures[k].error);
    }
  }
  const auto sa = a.engine->status();
  const auto sb = b.engine->status();
  REQUIRE(sa.size() == sb.size());
  for (size_t i = 0; i < sa.size(); ++i) {
    CHECK(sa[i].hits == sb[i].hits);
    CHECK(sa[i].armed_cycles == sb[i].armed_cycles);
    CHECK(sa[i].state == sb[i].state);
    REQUIRE(sa[i].conditions.size() == sb[i].conditions.size());
    for (size_t c = 0; c < sa[i].conditions.size(); ++c) {
      CHECK(sa[i].conditions[c].true_cycles == sb[i].conditions[c].true_cycles);
      CHECK(sa[i].conditions[c].first_true == sb[i].conditions[c].first_true);
    }
  }
}

// Every kind of condition and action; none halts.
const char* kMixed = R"(
def gemm_l0 = dispatch GEMM layer 0
def every_mac = every 20000 macs_issued
trigger rate_load
  when count(1) >= 256 && rate(load.stall_mem, 256) > 0.6
  do log "load stalled"
end
trigger ratio_gemm
  when ratio(gemm.stall_dep, cycles, 512) > 0.3
  do log "gemm starved", snapshot
end
trigger third shots 2
  when count(gemm_l0) == 3
  do log "third", capture pre 300 post 40
end
trigger macs
  when every_mac
  do log "macs"
end
trigger edge
  when rose(load.state) && cycle > 2000
  do log "load busy", checkpoint
end
trigger quiet
  when since_progress >= 20 || finished
  do log "quiet"
end
trigger burst
  counter bursts
  state idle
    if delta(load.stall_mem, 64) > 30 then incr bursts, goto busy
  state busy
    if state_cycles >= 500 then log "burst over", goto idle
    if bursts >= 4 then snapshot, goto idle
end
)";

}  // namespace

TEST_CASE("threaded and inline evaluation give identical hits, values and windows",
          "[trigger][threads]") {
  for (const std::string w : {"conv", "mem_bound"}) {
    INFO(w);
    auto t = test::run_triggers(w, kMixed, dir("mixed-thread-" + w), {}, {}, true);
    auto i = test::run_triggers(w, kMixed, dir("mixed-inline-" + w), {}, {}, false);
    REQUIRE(t->engine->hits().size() > 20);
    require_same(*t, *i);
  }
}

TEST_CASE("a halt found by the evaluation thread stops the batch run exactly at the hit",
          "[trigger][threads]") {
  // Late in the run (well past the first history snapshot) and early (before any ring batch is
  // published), and a k-th occurrence.
  const auto s = test::record("mem_bound");
  const int stall_mem = *isa::find_counter("load.stall_mem");
  for (const uint64_t k : {uint64_t{3}, s.at(stall_mem, s.end_cycle) * 3 / 4}) {
    const std::string text = "trigger stop\n  when load.stall_mem >= " + std::to_string(k) +
                             "\n  do snapshot, halt\nend\n";
    uint64_t want = 0;
    while (s.at(stall_mem, want) < k) ++want;
    INFO("k=" << k << " want cycle " << want);
    auto t = test::run_triggers("mem_bound", text, dir("halt-thread"), {}, {}, true);
    auto i = test::run_triggers("mem_bound", text, dir("halt-inline"), {}, {}, false);
    CHECK(t->drive.halted);
    CHECK(t->emu->cycle() == want);
    REQUIRE(t->hit_cycles("stop") == std::vector<uint64_t>{want});
    CHECK(t->engine->hits()[0].counters.at(static_cast<size_t>(stall_mem)).second == k);
    require_same(*t, *i);
  }
}
