// The cost of running a design under bud, side by side in one process (docs/performance.md,
// "Design files"): the fir_stream example's model driven by
//   bare      a hand-written testbench loop: the same stimulus (source beats offered on 90% of
//             cycles, sink ready on 75%, from one generator), clock edges, nothing else
//   harness   design/DesignHarness: the same, plus the design file's counters (a `when`
//             expression each), stage transactions with payload digests and the drain check
//   emulator  design/DesignEmulator behind emu::Emulator (what `bud debug --design` steps):
//             the harness plus StageTxns and stage digests
//   profile   the harness with design/HandshakeProfile observing (`bud profile --design`):
//             the four-state count per handshake, counters every 1024 cycles; and with spans
//             (`--trace`), the state spans too
// Each runs the whole stimulus REPS times (restoring the power-on state between), in 7
// interleaved rounds, and reports the best round's simulated cycles per second and its ratio to
// bare. Wall time is for this figure only.
// Usage: bud-bench-design SOURCE_DIR CACHE_DIR [REPS]
#include <algorithm>
#include <chrono>
#include <functional>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "design/DesignEmulator.h"
#include "design/DesignHarness.h"
#include "design/DesignTarget.h"
#include "design/HandshakeProfile.h"
#include "design/LoadedModel.h"
#include "emu/core/Rng.h"

using namespace bud;
using namespace bud::design;
using Clock = std::chrono::steady_clock;

namespace {

double seconds(Clock::time_point a) {
  return std::chrono::duration<double>(Clock::now() - a).count();
}

size_t port(const LoadedModel& m, const char* name) {
  const auto i = m.find(name);
  if (!i) {
    std::fprintf(stderr, "bud-bench-design: no port %s\n", name);
    std::exit(2);
  }
  return *i;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: bud-bench-design SOURCE_DIR CACHE_DIR [REPS]\n");
    return 2;
  }
  const int reps = argc > 3 ? std::atoi(argv[3]) : 20;
  TargetOptions to;
  to.cache_dir = argv[2];
  DesignError err;
  const auto t = prepare_design(std::string(argv[1]) + "/examples/designs/fir_stream/fir_stream.toml", to, err);
  if (!t) {
    std::fprintf(stderr, "%s\n", err.to_string().c_str());
    return 2;
  }
  std::string why;
  auto model = LoadedModel::load(t->library, why);
  if (!model) {
    std::fprintf(stderr, "%s\n", why.c_str());
    return 2;
  }
  auto h = DesignHarness::make(t->spec, *model, 1, why);
  if (!h) {
    std::fprintf(stderr, "%s\n", why.c_str());
    return 2;
  }
  const std::string& samples = h->streams()[0].bytes;
  std::vector<uint8_t> power_on;
  h->save(power_on);

  // bare: the loop a user would write by hand for this design.
  LoadedModel& m = *model;
  const size_t clk = port(m, "clk"), rst = port(m, "rst_n"), sd = port(m, "s_axis_tdata"),
               sv = port(m, "s_axis_tvalid"), sr = port(m, "s_axis_tready"),
               mv = port(m, "m_axis_tvalid"), mr = port(m, "m_axis_tready");
  uint64_t bare_cycles = 0;
  uint64_t received = 0;
  auto bare_loop = [&] {
  bare_cycles = received = 0;
  for (int r = 0; r < reps; ++r) {
    size_t at = 0;
    h->restore(power_on, at, why);
    m.set(rst, 0);
    for (int i = 0; i < 4; ++i) {
      m.set(clk, 0), m.eval(), m.set(clk, 1), m.eval();
    }
    m.set(clk, 0), m.set(rst, 1), m.eval();
    emu::Rng rng(1);
    size_t sent = 0;
    bool offering = false;
    uint64_t idle = 0;
    while (idle < 1000) {
      if (!offering && sent < samples.size()) offering = rng.chance(900'000, 1'000'000);
      m.set(sd, offering ? static_cast<uint8_t>(samples[sent]) : 0);
      m.set(sv, offering);
      m.set(mr, rng.chance(750'000, 1'000'000));
      m.eval();
      bool moved = false;
      if (offering && m.get(sr)) ++sent, offering = false, moved = true;
      if (m.get(mv) && m.get(mr)) ++received, moved = true;
      idle = moved || sent < samples.size() ? 0 : idle + 1;
      m.set(clk, 1), m.eval(), m.set(clk, 0), m.eval();
      ++bare_cycles;
    }
  }
  };

  uint64_t harness_cycles = 0;
  auto harness_loop = [&] {
  harness_cycles = 0;
  for (int r = 0; r < reps; ++r) {
    size_t at = 0;
    h->restore(power_on, at, why);
    h->reset();
    while (!h->drained(1000)) h->step();
    harness_cycles += h->cycle();
  }
  };

  // The harness with the handshake profile on (a new one each run, as each `bud profile` makes).
  auto profiled_loop = [&](uint64_t max_spans, uint64_t& cycles) {
    cycles = 0;
    for (int r = 0; r < reps; ++r) {
      size_t at = 0;
      h->restore(power_on, at, why);
      ProfileOptions po;
      po.max_spans = max_spans;
      auto p = HandshakeProfile::make(t->spec, *h, po, why);
      h->set_profile(&*p);
      h->reset();
      while (!h->drained(1000)) h->step();
      h->set_profile(nullptr);
      cycles += h->cycle();
    }
  };
  uint64_t profile_cycles = 0, spans_cycles = 0;
  auto profile_loop = [&] { profiled_loop(0, profile_cycles); };
  auto spans_loop = [&] { profiled_loop(1u << 18, spans_cycles); };

  emu::EmulatorConfig ec;
  auto e = DesignEmulator::make(t->spec, t->library, t->revision, ec, 1, 1000, why);
  if (!e) {
    std::fprintf(stderr, "%s\n", why.c_str());
    return 2;
  }
  uint64_t emu_cycles = 0;
  auto emu_loop = [&] {
    emu_cycles = 0;
    for (int r = 0; r < reps; ++r) {
      e->load({});
      e->step(100'000'000);
      emu_cycles += e->cycle();
    }
  };
  // Interleaved rounds, the best of each: on a shared machine the fastest round is the one
  // least disturbed by other work.
  double bare_s = 1e30, harness_s = 1e30, emu_s = 1e30, profile_s = 1e30, spans_s = 1e30;
  for (int round = 0; round < 7; ++round) {
    for (auto [loop, best] : {std::pair<std::function<void()>, double*>{bare_loop, &bare_s},
                              {harness_loop, &harness_s}, {emu_loop, &emu_s},
                              {profile_loop, &profile_s}, {spans_loop, &spans_s}}) {
      const auto t0 = Clock::now();
      loop();
      *best = std::min(*best, seconds(t0));
    }
  }

  const double bare = bare_cycles / bare_s, harness = harness_cycles / harness_s,
               emu_rate = emu_cycles / emu_s;
  std::printf("| loop | cycles | cycles/s | vs bare |\n|---|---|---|---|\n");
  std::printf("| bare testbench | %llu | %.0f | 1.00 |\n",
              static_cast<unsigned long long>(bare_cycles), bare);
  std::printf("| DesignHarness | %llu | %.0f | %.2f |\n",
              static_cast<unsigned long long>(harness_cycles), harness, harness / bare);
  std::printf("| DesignEmulator | %llu | %.0f | %.2f |\n",
              static_cast<unsigned long long>(emu_cycles), emu_rate, emu_rate / bare);
  const double profile = profile_cycles / profile_s, spans = spans_cycles / spans_s;
  std::printf("| DesignHarness + HandshakeProfile | %llu | %.0f | %.2f (%.2f of harness) |\n",
              static_cast<unsigned long long>(profile_cycles), profile, profile / bare,
              profile / harness);
  std::printf("| DesignHarness + HandshakeProfile with spans | %llu | %.0f | %.2f (%.2f of harness) |\n",
              static_cast<unsigned long long>(spans_cycles), spans, spans / bare, spans / harness);
  std::printf("(fir_stream, %d runs of %zu samples each; %llu sink beats in the bare loop)\n", reps,
              samples.size(), static_cast<unsigned long long>(received / reps));
  return 0;
}
