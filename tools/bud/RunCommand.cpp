#include "tools/bud/RunCommand.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>

#include "debugger/json/Json.h"
#include "tools/bud/Output.h"

namespace bud::cli {

using json::Json;

void add_emulation_options(CLI::App& app, run::RunOptions& o) {
  auto& d = o.npu.dram;
  app.add_option("--seed", o.seed, "Data seed (overrides the workload's)");
  app.add_option("--mem-seed", d.seed, "Memory-timing seed (latency jitter, back-pressure)")
      ->capture_default_str();
  app.add_option("--mem-latency", d.base_latency, "DRAM base latency in cycles")
      ->capture_default_str();
  app.add_option("--mem-jitter", d.jitter, "Extra latency per request, uniform 0..N cycles")
      ->capture_default_str();
  app.add_option("--mem-bw", d.bytes_per_cycle, "DRAM response bandwidth in bytes/cycle")
      ->capture_default_str();
  app.add_option("--mem-outstanding", d.max_outstanding, "Maximum DRAM requests in flight")
      ->capture_default_str();
  app.add_flag("!--mem-in-order", d.reorder, "Return DRAM responses in request order");
  app.add_flag("--mem-bursty", d.bursty, "Bursty back-pressure on the DRAM request channel");
  app.add_option("--throttle", o.npu.throttle.on_cycles,
                 "Throttle (clock-enable clamp) ON cycles of every --throttle-period");
  app.add_option("--throttle-period", o.npu.throttle.period, "Throttle period in cycles");
  app.add_option("--max-cycles", o.max_cycles, "Stop (as a failure) after N cycles")
      ->capture_default_str();
  app.add_option("--hang-cycles", o.npu.hang_cycles,
                 "Report a hang after N cycles without progress")
      ->capture_default_str();
}

std::string validate_emulation_options(const run::RunOptions& o) {
  if (auto e = o.npu.dram.validate(); !e.empty()) return e;
  if (auto e = o.npu.throttle.validate(); !e.empty()) return e;
  if (o.max_cycles == 0) return "--max-cycles must be positive";
  if (o.npu.hang_cycles == 0) return "--hang-cycles must be positive";
  return {};
}

void setup_run(CLI::App& app, RunCommandOptions& options) {
  auto* sub = app.add_subcommand("run", "Run a workload on the NPU and check it bit-exactly");
  sub->footer(
      "Examples:\n"
      "  bud run                          # the default workload (gemm_small)\n"
      "  bud run compute_bound --json     # one JSON object on stdout\n"
      "  bud run mlp --seed 7 --mem-seed 3 --mem-jitter 40 --mem-bursty\n"
      "  bud run my_net.textpb --max-cycles 2000000\n"
      "Exit status: 0 passed, 1 failed check or hang, 2 bad usage or bad input.");
  sub->add_option("workload", options.run.workload, "Built-in name (see `bud workloads`) or file")
      ->capture_default_str();
  add_emulation_options(*sub, options.run);
  sub->add_flag("--json", options.json, "Print one JSON object instead of the report");
}

int run_run(const RunCommandOptions& options) {
  if (auto e = validate_emulation_options(options.run); !e.empty()) {
    std::cerr << "bud run: " << e << "\n";
    return 2;
  }
  run::RunOptions ro = options.run;
  ProgressLine progress("run");
  ro.progress = [&progress](uint64_t cycle) { progress.update(cycle); };
  auto prepared = run::prepare(ro);
  if (!prepared) {
    std::cerr << "bud run: " << prepared.error() << "\n";
    return 2;
  }
  const auto report = run::execute(*prepared, ro);
  progress.finish();
  if (options.json) {
    std::cout << report_json(report).dump() << "\n";
  } else {
    std::cout << report_text(report, *prepared);
  }
  return report.passed ? 0 : 1;
}

}  // namespace bud::cli
