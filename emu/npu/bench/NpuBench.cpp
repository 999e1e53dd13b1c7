// Simulation-speed benchmark for issue #2, measured side by side in one process:
//  - bare:    the Verilated model alone, replaying the input ports recorded from a real run
//             (no memory model, host driver, observation, digests or checks): the physical
//             limit of this model;
//  - bud run: the full harness (run::execute: memory model, host driver, stage digests,
//             watchdog, final checks).
// Reports simulated cycles per second for each, their ratio, and MAC-array utilisation.
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
    std::printf("%-14s %10s %12s %12s %7s %8s\n", "workload", "cycles", "bare Mc/s",
                "bud run Mc/s", "ratio", "MAC util");
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
    std::vector<double> bare, full;
    for (int i = 0; i < reps; ++i) {
      bool finished = false;
      bare.push_back(bud::bench::replay_inputs<Vnpu_top>(rec.inputs, &finished));
      if (!finished) std::fprintf(stderr, "warning: bare replay of %s did not finish\n", name.c_str());
      const auto t0 = Clock::now();
      const auto r = bud::run::execute(*prepared, o);
      full.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
      if (!r.passed) return 1;
    }
    const double bare_cps = static_cast<double>(rec.inputs.size()) / median(bare);
    const double full_cps = static_cast<double>(cycles) / median(full);
    if (json) {
      std::printf("%s{\"workload\":\"%s\",\"cycles\":%llu,\"bare_cycles_per_s\":%.0f,"
                  "\"bud_run_cycles_per_s\":%.0f,\"ratio\":%.3f,\"mac_utilization\":%.4f}",
                  first ? "" : ",", name.c_str(), static_cast<unsigned long long>(cycles),
                  bare_cps, full_cps, full_cps / bare_cps, util);
    } else {
      std::printf("%-14s %10llu %12.2f %12.2f %7.3f %7.1f%%\n", name.c_str(),
                  static_cast<unsigned long long>(cycles), bare_cps / 1e6, full_cps / 1e6,
                  full_cps / bare_cps, 100 * util);
    }
    first = false;
  }
  if (json) std::printf("]\n");
  return 0;
}
