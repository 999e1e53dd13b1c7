// Replays recorded NPU input ports (from `bud-bench-npu --dump-inputs`) against one model
// variant and prints simulated cycles per second (median of --reps runs). Built once per variant
// (curated public signals, none, all public) to measure the cost of debug visibility.
// Usage: bud-bench-replay-VARIANT FILE.inputs [--reps N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include BUD_MODEL_HEADER
#include "emu/npu/NpuEmulator.h"
#include "emu/npu/bench/InputReplay.h"
#include "verilated.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE.inputs [--reps N]\n", argv[0]);
    return 2;
  }
  int reps = 5;
  if (argc >= 4 && std::string(argv[2]) == "--reps") reps = std::max(1, std::atoi(argv[3]));
  std::vector<bud::emu::NpuInputs> inputs;
  if (FILE* f = std::fopen(argv[1], "rb")) {
    bud::emu::NpuInputs in;
    while (std::fread(&in, sizeof in, 1, f) == 1) inputs.push_back(in);
    std::fclose(f);
  }
  if (inputs.empty()) {
    std::fprintf(stderr, "%s: no inputs in %s\n", argv[0], argv[1]);
    return 2;
  }
  std::vector<double> secs;
  for (int r = 0; r < reps; ++r) secs.push_back(bud::bench::replay_inputs<BUD_MODEL_CLASS>(inputs));
  std::sort(secs.begin(), secs.end());
  std::printf("%.0f\n", static_cast<double>(inputs.size()) / secs[secs.size() / 2]);
  return 0;
}
