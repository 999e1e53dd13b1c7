// Simulation-speed benchmark for issue #2, measured side by side in one process:
//  - bare:    the Verilated model alone, replaying the input ports recorded from a real run
//             (no memory model, host driver, observation, digests or checks): the physical
//             limit of this model;
//  - bud run: the full harness, timed in the phases of run::execute: setup (emulator
//             construction and load), the run loop (drive::Driver::run_until: memory model, host
//             driver, stage digests, watchdog) and the checks (run::conclude: final digests,
//             outputs against the reference), plus workload preparation (run::prepare: lowering,
//             direct reference, golden model) which every `bud run` pays before.
// Reports simulated cycles per second of the bare model and of the run loop, their ratio, the
// per-run fixed costs in milliseconds, and MAC-array utilisation.
// Usage: bud-bench-npu [--reps N] [--json] [--dump-inputs DIR] [WORKLOAD...]
// --dump-inputs writes each workload's recorded inputs to DIR/WORKLOAD.inputs for
// bud-bench-replay-* (the same replay against model variants with other debug visibility).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "Vnpu_top.h"
#include "emu/drive/Driver.h"
#include "emu/npu/NpuEmulator.h"
#include "emu/npu/bench/InputReplay.h"
#include "emu/run/RunJob.h"
#include "emu/workload/Builtins.h"
#include "verilated.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Recorder final : bud::emu::InputRecorder {
  std::vector<bud::emu::NpuInputs> inputs;
  void on_inputs(const bud::emu::NpuInputs& in) override { inputs.push_back(in); }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 5;
  bool json = false;
  std::string dump_dir;
  std::vector<std::string> names;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else if (a == "--json") json = true;
    else if (a == "--dump-inputs" && i + 1 < argc) dump_dir = argv[++i];
    else names.push_back(a);
  }
  if (names.empty())
    for (const auto& b : bud::workload::list_builtins()) names.push_back(b.name);

  if (!json) {
    std::printf("%-14s %9s %10s %10s %7s %11s %9s %9s %8s\n", "workload", "cycles", "bare Mc/s",
                "loop Mc/s", "ratio", "prepare ms", "setup ms", "checks ms", "MAC util");
  } else {
    std::printf("[");
  }
  bool first = true;
  for (const auto& name : names) {
    bud::run::RunOptions o;
    o.workload = name;
    auto prepared = bud::run::prepare(o);
    if (!prepared) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(), prepared.error().c_str());
      return 2;
    }
    // Record the inputs of one run.
    Recorder rec;
    uint64_t cycles = 0;
    double util = 0;
    {
      bud::emu::NpuEmulator emu(o.emulator);
      emu.load(prepared->job);
      emu.set_input_recorder(&rec);
      const auto r = bud::run::finish(*prepared, o, emu);
      if (!r.passed) {
        std::fprintf(stderr, "%s: run failed\n", name.c_str());
        return 1;
      }
      cycles = r.cycles;
      util = r.mac_utilization();
    }
    if (!dump_dir.empty()) {
      const std::string path = dump_dir + "/" + name + ".inputs";
      if (FILE* f = std::fopen(path.c_str(), "wb")) {
        std::fwrite(rec.inputs.data(), sizeof(bud::emu::NpuInputs), rec.inputs.size(), f);
        std::fclose(f);
      }
    }
    // Alternate the two measurements so machine noise hits both alike.
    std::vector<double> bare, loop, prep, setup, checks;
    for (int i = 0; i < reps; ++i) {
      bool finished = false;
      bare.push_back(bud::bench::replay_inputs<Vnpu_top>(rec.inputs, &finished));
      if (!finished) std::fprintf(stderr, "warning: bare replay of %s did not finish\n", name.c_str());
      // run::execute's phases, as bud run goes through them.
      auto t0 = Clock::now();
      auto again = bud::run::prepare(o);
      auto t1 = Clock::now();
      prep.push_back(std::chrono::duration<double>(t1 - t0).count());
      if (!again) return 2;
      t0 = Clock::now();
      bud::emu::NpuEmulator emu(o.emulator);
      if (!bud::run::start(*again, o, emu).empty()) return 2;
      bud::drive::Driver driver(emu);
      t1 = Clock::now();
      const auto ds = driver.run_until(o.max_cycles, o.progress_interval);
      const auto t2 = Clock::now();
      const auto r = bud::run::conclude(*again, o, emu, ds, driver.cycles_driven());
      const auto t3 = Clock::now();
      setup.push_back(std::chrono::duration<double>(t1 - t0).count());
      loop.push_back(std::chrono::duration<double>(t2 - t1).count());
      checks.push_back(std::chrono::duration<double>(t3 - t2).count());
      if (!r.passed || r.cycles != cycles) return 1;
    }
    const double bare_cps = static_cast<double>(rec.inputs.size()) / median(bare);
    const double loop_cps = static_cast<double>(cycles) / median(loop);
    const double prep_ms = 1e3 * median(prep), setup_ms = 1e3 * median(setup);
    const double checks_ms = 1e3 * median(checks);
    if (json) {
      std::printf("%s{\"workload\":\"%s\",\"cycles\":%llu,\"bare_cycles_per_s\":%.0f,"
                  "\"loop_cycles_per_s\":%.0f,\"ratio\":%.3f,\"prepare_ms\":%.3f,"
                  "\"setup_ms\":%.3f,\"checks_ms\":%.3f,\"mac_utilization\":%.4f}",
                  first ? "" : ",", name.c_str(), static_cast<unsigned long long>(cycles),
                  bare_cps, loop_cps, loop_cps / bare_cps, prep_ms, setup_ms, checks_ms, util);
    } else {
      std::printf("%-14s %9llu %10.2f %10.2f %7.3f %11.2f %9.2f %9.2f %7.1f%%\n", name.c_str(),
                  static_cast<unsigned long long>(cycles), bare_cps / 1e6, loop_cps / 1e6,
                  loop_cps / bare_cps, prep_ms, setup_ms, checks_ms, 100 * util);
    }
    first = false;
  }
  if (json) std::printf("]\n");
  return 0;
}
