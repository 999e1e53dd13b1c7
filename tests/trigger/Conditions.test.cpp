// Every condition type fires at exactly the right cycles on a deterministic workload (conv),
// checked against an independent computation from per-cycle counter samples (TriggerTestSupport.h).
#include <algorithm>

#include "tests/trigger/TriggerTestSupport.h"

using namespace bud;
using bud::test::edges;

namespace {

int idx(const char* name) { return *isa::find_counter(name); }

const test::Samples& conv_samples() {
  static const test::Samples s = test::record("conv");
  return s;
}

}  // namespace

TEST_CASE("each condition type fires on exactly the cycles computed from the samples",
          "[trigger][conditions]") {
  const auto& s = conv_samples();
  const int stall_mem = idx("load.stall_mem"), stall_dep = idx("gemm.stall_dep"),
            useful = idx("macs_useful"), issued = idx("macs_issued"),
            rd_bytes = idx("dram_rd_bytes"), gemm_active = idx("gemm.active");
  auto c = [&](int i, uint64_t t) { return static_cast<double>(s.at(i, t)); };
  auto win = [](uint64_t t, uint64_t w) { return std::min(t, w); };

  const std::string text = R"(
def gemm_conv2 = dispatch GEMM layer conv2
def cmd10 = dispatch index 10
def rd_period = every 4096 dram_rd_bytes

trigger threshold when load.stall_mem >= 3000 do log "t"
trigger delta_w when delta(load.stall_mem, 64) > 40 do log "d"
trigger rate_w when count(1) >= 256 && rate(gemm.stall_dep, 256) > 0.5 do log "r"
trigger ratio_w when ratio(macs_useful, cycles, 512) > 40 do log "q"
trigger period when rd_period do log "p"
trigger kth when count(gemm_conv2) == 3 do log "k"
trigger signal when load.state == 2 do log "s"
trigger edge when changed(load.state) do log "e"
trigger range when cycle >= 5000 && cycle < 5100 && load.state != 0 do log "c"
trigger command when cmd10 do log "m"
trigger logic when not (load.state == 0) and gemm.active > 2000 or cycle == 700 do log "l"
)";
  auto run = test::run_triggers("conv", text);
  REQUIRE_FALSE(run->drive.halted);
  REQUIRE(run->emu->cycle() == s.end_cycle);

  SECTION("threshold") {
    CHECK(run->hit_cycles("threshold") ==
          edges(s, [&](uint64_t t) { return s.at(stall_mem, t) >= 3000; }));
    CHECK(run->hit_cycles("threshold").size() == 1);
  }
  SECTION("delta over a sliding window") {
    auto want = edges(
        s, [&](uint64_t t) { return s.at(stall_mem, t) - s.at(stall_mem, t - win(t, 64)) > 40; });
    CHECK(want.size() > 3);
    CHECK(run->hit_cycles("delta_w") == want);
  }
  SECTION("rate over a sliding window") {
    auto want = edges(s, [&](uint64_t t) {
      return t >= 256 && (c(stall_dep, t) - c(stall_dep, t - 256)) / 256.0 > 0.5;
    });
    CHECK(!want.empty());
    CHECK(run->hit_cycles("rate_w") == want);
  }
  SECTION("ratio of two counters over a window") {
    const int cycles = idx("cycles");
    auto want = edges(s, [&](uint64_t t) {
      const uint64_t w = win(t, 512);
      const double den = c(cycles, t) - c(cycles, t - w);
      return den != 0 && (c(useful, t) - c(useful, t - w)) / den > 40;
    });
    CHECK(!want.empty());
    CHECK(run->hit_cycles("ratio_w") == want);
    (void)issued;
  }
  SECTION("every N (sample period, counter overflow)") {
    std::vector<bool> ev(s.end_cycle + 1, false);
    uint64_t base = s.at(rd_bytes, 0);
    for (uint64_t t = 1; t <= s.end_cycle; ++t) {
      const uint64_t d = s.at(rd_bytes, t) - base;
      if (d >= 4096) {
        ev[t] = true;
        base += d / 4096 * 4096;
      }
    }
    auto want = edges(s, [&](uint64_t t) { return ev[t]; });
    CHECK(want.size() >= 10);
    CHECK(run->hit_cycles("period") == want);
  }
  SECTION("k-th occurrence of a command match (opcode and layer)") {
    std::vector<uint64_t> gemms;
    for (const auto& d : s.dispatches)
      if (d.cmd.opcode == isa::Opcode::Gemm && d.cmd.layer == 1) gemms.push_back(d.cycle);
    REQUIRE(gemms.size() >= 3);
    CHECK(run->hit_cycles("kth") == std::vector<uint64_t>{gemms[2]});
  }
  SECTION("signal compare and edge") {
    CHECK(run->hit_cycles("signal") == edges(s, [&](uint64_t t) { return s.load_state[t] == 2; }));
    CHECK(run->hit_cycles("edge") ==
          edges(s, [&](uint64_t t) { return s.load_state[t] != s.load_state[t - 1]; }));
  }
  SECTION("cycle range") {
    auto want = edges(s, [&](uint64_t t) { return t >= 5000 && t < 5100 && s.load_state[t] != 0; });
    CHECK(!want.empty());
    CHECK(run->hit_cycles("range") == want);
  }
  SECTION("command index") {
    uint64_t at = 0;
    for (const auto& d : s.dispatches)
      if (d.cmd.cmd_id == 10) at = d.cycle;
    REQUIRE(at > 0);
    CHECK(run->hit_cycles("command") == std::vector<uint64_t>{at});
  }
  SECTION("and / or / not") {
    CHECK(run->hit_cycles("logic") == edges(s, [&](uint64_t t) {
            return (s.load_state[t] != 0 && s.at(gemm_active, t) > 2000) || t == 700;
          }));
  }
  SECTION("values at the hit are the sampled ones") {
    for (const auto& h : run->engine->hits()) {
      if (h.trigger != "threshold") continue;
      REQUIRE(h.values.size() == 1);
      CHECK(h.values[0].first == "load.stall_mem");
      CHECK(h.values[0].second == s.at(stall_mem, h.cycle));
    }
  }
  SECTION("coverage counts the cycles each condition held") {
    for (const auto& st : run->engine->status()) {
      if (st.name != "signal") continue;
      uint64_t held = 0;
      // The final cycle, on which the run ends, is evaluated by finish_run().
      for (uint64_t t = 1; t <= s.end_cycle; ++t) held += s.load_state[t] == 2;
      CHECK(st.conditions[0].true_cycles == held);
      CHECK(st.armed_cycles == s.end_cycle);
    }
  }
}

TEST_CASE("no progress for N cycles and end-of-run symptoms", "[trigger][conditions][symptom]") {
  emu::NpuConfig npu;
  npu.hang_cycles = 3000;
  std::string error;
  auto fault = emu::parse_fault("dram-drop@200", error);
  REQUIRE(fault);
  const auto s = test::record("gemm_small", npu, {*fault});
  REQUIRE(s.end_state == emu::RunState::Hang);
  auto run = test::run_triggers("gemm_small", R"(
trigger stuck when since_progress >= 1500 do log "no progress"
trigger dead when hang do log "watchdog"
trigger fine when finished or assertion do log "never"
)",
                                ".", npu, {*fault});
  // since_progress: cycles since the last cycle with a stage transaction (or since arming).
  std::vector<bool> progress(s.end_cycle + 1, false);
  for (auto c : s.progress_cycles) progress[c] = true;
  uint64_t last = 0;
  std::vector<uint64_t> since(s.end_cycle + 1, 0);
  for (uint64_t t = 1; t <= s.end_cycle; ++t) {
    if (progress[t]) last = t;
    since[t] = t - last;
  }
  CHECK(run->hit_cycles("stuck") == edges(s, [&](uint64_t t) { return since[t] >= 1500; }));
  CHECK(run->hit_cycles("dead") == std::vector<uint64_t>{s.end_cycle});
  CHECK(run->hit_cycles("fine").empty());
}

TEST_CASE("k-shot, rearm and enable refresh", "[trigger][shots]") {
  const auto& s = conv_samples();
  const int stall_mem = idx("load.stall_mem");
  auto all = edges(s, [&](uint64_t t) {
    return s.at(stall_mem, t) - s.at(stall_mem, t - std::min<uint64_t>(t, 64)) > 40;
  });
  REQUIRE(all.size() > 5);
  std::vector<uint64_t> gemms;
  for (const auto& d : s.dispatches)
    if (d.cmd.opcode == isa::Opcode::Gemm) gemms.push_back(d.cycle);
  REQUIRE(gemms.size() >= 6);
  auto run = test::run_triggers("conv", R"(
def gemm = dispatch GEMM
trigger three shots 3 when delta(load.stall_mem, 64) > 40 do log "x"
trigger one shots 1 when delta(load.stall_mem, 64) > 40 do log "x"
trigger every_second when count(gemm) == 2 do log "pair", rearm
)");
  CHECK(run->hit_cycles("three") == std::vector<uint64_t>(all.begin(), all.begin() + 3));
  CHECK(run->hit_cycles("one") == std::vector<uint64_t>{all[0]});
  std::vector<uint64_t> pairs;
  for (size_t i = 1; i < gemms.size(); i += 2) pairs.push_back(gemms[i]);
  CHECK(run->hit_cycles("every_second") == pairs);
  for (const auto& st : run->engine->status()) {
    if (st.name == "three" || st.name == "one") CHECK(st.exhausted);
    if (st.name == "every_second") CHECK_FALSE(st.exhausted);
  }
}

TEST_CASE("state machine: a memory stall burst within N cycles after the 3rd GEMM of conv2",
          "[trigger][machine]") {
  const auto& s = conv_samples();
  const int stall_mem = idx("load.stall_mem");
  std::vector<uint64_t> gemms;
  for (const auto& d : s.dispatches)
    if (d.cmd.opcode == isa::Opcode::Gemm && d.cmd.layer == 1) gemms.push_back(d.cycle);
  REQUIRE(gemms.size() >= 3);
  const uint64_t t3 = gemms[2];
  auto burst = [&](uint64_t t) {
    return (s.at(stall_mem, t) - s.at(stall_mem, t - std::min<uint64_t>(t, 64))) / 64.0 > 0.5;
  };
  auto first_burst = [&](uint64_t entered) {
    for (uint64_t t = entered + 1; t <= entered + 2000 && t < s.end_cycle; ++t)
      if (burst(t)) return t;
    return uint64_t{0};
  };
  // `exact` enters watch on the cycle of the 3rd GEMM; `lagged` one cycle later, because a
  // state-machine counter incremented on a cycle is read by the conditions of the next cycle.
  const uint64_t want_exact = first_burst(t3), want_lagged = first_burst(t3 + 1);
  REQUIRE(want_exact > 0);
  REQUIRE(want_lagged > 0);
  auto run = test::run_triggers("conv", R"(
def gemm_conv2 = dispatch GEMM layer conv2
trigger lagged
  counter seen
  flag armed_flag
  state wait
    if gemm_conv2 then incr seen
    if seen == 3 then set armed_flag, goto watch
  state watch
    if rate(load.stall_mem, 64) > 0.5 && state_cycles <= 2000 then log "burst", goto done
    if state_cycles > 2000 then goto wait
  state done
end
trigger exact
  state wait
    if count(gemm_conv2) == 3 then goto watch
  state watch
    if rate(load.stall_mem, 64) > 0.5 && state_cycles <= 2000 then log "burst", snapshot, goto done
  state done
end
)");
  CHECK(run->hit_cycles("exact") == std::vector<uint64_t>{want_exact});
  CHECK(run->hit_cycles("lagged") == std::vector<uint64_t>{want_lagged});
  for (const auto& h : run->engine->hits()) {
    CHECK(h.state_path == "watch -> done");
    if (h.trigger == "exact") {
      REQUIRE(h.counters.size() == isa::kNumCounters);
      CHECK(h.counters[stall_mem].second == s.at(stall_mem, h.cycle));
    }
  }
  for (const auto& st : run->engine->status()) {
    CHECK(st.state == "done");
    REQUIRE(st.states_entered.size() == 3);
    CHECK(st.states_entered[1].second == 1);
  }
}
