#include "tools/bud/RunCommand.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "debugger/json/Json.h"
#include "emu/run/Designs.h"
#include "power/Dvfs.h"
#include "power/ThermalSetup.h"
#include "tools/bud/DesignCommand.h"
#include "tools/bud/DesignTriggerRun.h"
#include "tools/bud/Output.h"
#include "tools/bud/TriggerCommand.h"

namespace bud::cli {

using json::Json;

void add_emulation_options(CLI::App& app, run::RunOptions& o) {
  auto& d = o.emulator.dram;
  app.add_option("--config", o.emulator.design,
                 "MAC-array configuration: npu8 (default), npu16, npu32 (docs/cli.md; a variant "
                 "must be built: -DBUD_NPU_VARIANTS)");
  app.add_option("--seed", o.seed, "Data seed (overrides the workload's)");
  app.add_option("--tile-rows", o.tiles.max_rows,
                 "Lower with at most N GEMM rows (output pixels) per tile (default: as many as "
                 "fit half a scratchpad; docs/workloads.md \"Tiles\")")
      ->type_name("N")
      ->check(CLI::PositiveNumber);
  app.add_option("--tile-blocks", o.tiles.max_blocks,
                 "Lower dense/conv2d with at most N output blocks (B channels) per tile")
      ->type_name("N")
      ->check(CLI::PositiveNumber);
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
  app.add_option("--throttle", o.emulator.throttle.on_cycles,
                 "Throttle (clock-enable clamp) ON cycles of every --throttle-period");
  app.add_option("--throttle-period", o.emulator.throttle.period, "Throttle period in cycles");
  app.add_option("--max-cycles", o.max_cycles, "Stop after N cycles: state cycle_limit, exit 3")
      ->capture_default_str();
  app.add_option("--energy-table", o.energy_table,
                 "Energy table (text format, power/energy_table.proto; default: the built-in "
                 "power/tables/npu_45nm.textpb): prices actions, operating points, thermal model")
      ->type_name("FILE");
  app.add_option("--point", o.point,
                 "Run at this operating point of the energy table: its DRAM timing (ns, GB/s) in "
                 "cycles of its clock, energies at its supply")
      ->type_name("NAME");
  app.add_flag("--thermal", o.thermal,
               "Run the energy table's thermal model: it clamps the clock (throttle input) "
               "above the trip point, releases below trip - hysteresis (docs/power.md)");
  app.add_option("--precision", o.precision,
                 "Precision of the NPU layers: int8, bf16, auto (int8, BF16 where a layer's SNR "
                 "breaks the workload's guardrail), or a FILE of `LAYER PRECISION` lines "
                 "(docs/workloads.md, \"Precision\"); default: the workload's own")
      ->type_name("int8|bf16|auto|FILE");
  app.add_flag("--per-channel", o.import.per_channel,
               "An ONNX workload: quantise its conv and dense weights per output channel, as "
               "`bud import --per-channel`");
  app.add_flag("--host-attention", o.import.host_attention,
               "An ONNX workload: run its activation x activation MatMuls on the host, as `bud "
               "import --host-attention`");
  app.add_option("--hang-cycles", o.emulator.hang_cycles,
                 "Report a hang after N cycles without progress")
      ->capture_default_str();
}

std::string parse_fault_options(const std::vector<std::string>& texts, run::RunOptions& o) {
  o.faults.clear();
  for (const auto& t : texts) {
    std::string error;
    auto f = emu::parse_fault(t, error);
    if (!f) return "--fault '" + t + "': " + error;
    o.faults.push_back(*f);
  }
  return {};
}

int resolve_config(const std::string& command, bool json, run::RunOptions& o) {
  std::string error;
  emu::ConfigError kind = emu::ConfigError::None;
  const auto names = emu::design_names();
  if (std::find(names.begin(), names.end(), o.emulator.design) != names.end()) return 0;
  auto design = emu::design_for_config(o.emulator.design, error, kind);
  if (design) {
    o.emulator.design = *design;
    return 0;
  }
  return fail_command(command, json, kind == emu::ConfigError::NotBuilt ? kExitNotBuilt : 2,
                      "--config " + error);
}

std::string validate_emulation_options(const run::RunOptions& o) {
  if (auto e = o.emulator.dram.validate(); !e.empty()) return e;
  if (auto e = o.emulator.throttle.validate(); !e.empty()) return e;
  if (o.max_cycles == 0) return "--max-cycles must be positive";
  if (o.progress_interval == 0) return "--progress-interval must be positive";
  if (o.emulator.hang_cycles == 0) return "--hang-cycles must be positive";
  return {};
}

power::Result<power::EnergyTable> resolve_power_options(run::RunOptions& o) {
  std::vector<std::string> counters;
  for (int i = 0; i < isa::kNumCounters; ++i) counters.push_back(isa::counter_name(i));
  auto known = counters;
  known.emplace_back(power::kHostCsrAccess);
  auto loaded = o.energy_table.empty() ? power::default_energy_table(known)
                                       : power::load_energy_table(o.energy_table, known);
  if (!loaded) return loaded;
  power::EnergyTable table = std::move(loaded).value();
  if (!o.point.empty()) {
    const power::OperatingPoint* p = table.point(o.point);
    if (!p) {
      std::string names;
      for (const auto& q : table.points) names += (names.empty() ? "" : ", ") + q.name;
      return power::Error{"--point " + o.point + ": " + table.file +
                          " has no such operating point (it has " + names + ")"};
    }
    const power::OperatingPoint point = *p;
    if (table.dram_timing)
      o.emulator.dram = power::dram_at(o.emulator.dram, *table.dram_timing, point.frequency_mhz);
    table = power::at_point(table, point);
  }
  o.emulator.thermal = {};
  if (o.thermal) {
    auto thermal = power::thermal_config(table, counters);
    if (!thermal) return power::Error{thermal.error()};
    o.emulator.thermal = std::move(thermal).value();
  }
  return table;
}

void setup_run(CLI::App& app, RunCommandOptions& options) {
  auto* sub = app.add_subcommand("run", "Run a workload on the NPU and check it bit-exactly");
  sub->footer(
      "Examples:\n"
      "  bud run                          # the default workload (gemm_small)\n"
      "  bud run compute_bound --json     # one JSON object on stdout\n"
      "  bud run mlp --seed 7 --mem-seed 3 --mem-jitter 40 --mem-bursty\n"
      "  bud run my_net.textpb --max-cycles 2000000\n"
      "  bud run gemm_small --fault flip:compute.m_left[0]@400   # corrupt on purpose\n"
      "  bud run conv --triggers examples/triggers/memory_stall_burst.trig\n"
      "  bud run --design examples/designs/vec_dma/vec_dma.toml --triggers "
      "examples/designs/vec_dma/stall.trig\n"
      "Exit status: 0 passed, 1 failed check or hang, 2 bad usage or bad input,\n"
      "3 cycle limit (--max-cycles reached while still making progress); with --design as\n"
      "`bud design run` (9 reference failed, 10 firmware timeout, 11 AXI error).");
  sub->add_option("workload", options.run.workload, "Built-in name (see `bud workloads`) or file")
      ->capture_default_str();
  add_emulation_options(*sub, options.run);
  sub->add_option("--fault", options.fault_texts,
                  "Inject a fault (repeatable): flip:SIG[BIT]@CYCLE, stuck:SIG[BIT]=0|1@CYCLE[+N], "
                  "memflip:MEM:ADDR[BIT]@CYCLE, dram-drop@CYCLE, dram-dup@CYCLE, "
                  "dram-delay:N@CYCLE (docs/faults.md)");
  sub->add_flag("--json", options.json, "Print one JSON object instead of the report");
  // Replay packets (docs/packets.md).
  sub->add_option("--record", options.record,
                  "Record a replay packet of the run to FILE (e.g. fail.bpk; see bud replay)");
  sub->add_option("--checkpoint-interval", options.record_config.checkpoint_interval,
                  "With --record: cycles between checkpoints")
      ->capture_default_str();
  sub->add_option("--digest-interval", options.record_config.digest_interval,
                  "With --record: cycles between state digests")
      ->capture_default_str();
  sub->add_option("--annotate", options.annotations, "With --record: a note kept in the packet");
  // Counter-based trace triggers (docs/triggers.md).
  sub->add_option("--triggers", options.triggers,
                  "Arm the triggers of FILE from cycle 0 (halt, capture, log...; see "
                  "`bud trigger check`)");
  sub->add_option("--capture-dir", options.capture_dir,
                  "With --triggers: directory for captured windows (FST + event log)")
      ->capture_default_str();
  sub->add_option("--progress-interval", options.run.progress_interval,
                  "Cycles between pauses of the simulation: the progress line and, with "
                  "--triggers, the log/capture/record actions of the evaluation thread")
      ->capture_default_str();
  sub->add_flag("--inline-triggers", options.inline_triggers,
                "Evaluate triggers on the simulation thread instead of a second one (same "
                "results, slower; docs/triggers.md)");
  add_trigger_limit_options(*sub, options.trigger_limits);
  // A design file instead of a workload (docs/designs.md): `bud design run`, so that
  // `bud run --design F --record P` records a design packet as `bud run W --record P` an NPU one.
  sub->add_option("--design", options.design,
                  "Run the model of a design file (docs/designs.md) as `bud design run` does: "
                  "--seed, --max-cycles, --json, --record and --triggers (with --capture-dir, "
                  "--annotate) apply; the NPU's options do not")
      ->type_name("FILE");
  sub->add_option("--define", options.defines, "With --design: set a define (NAME[=VALUE])");
  sub->add_option("--param", options.params, "With --design: set a parameter (NAME=VALUE)");
  sub->add_option("--design-cache", options.design_cache,
                  "With --design: the model cache (default as `bud design build`)");
}

namespace {

// `bud run --record`: the same run, driven by the replay recorder. Error text or empty.
std::string record_run(const RunCommandOptions& options, const run::RunOptions& ro,
                       const run::PreparedRun& prepared, run::RunReport& report) {
  auto spec = replay::make_spec(ro, prepared);
  if (!spec) return spec.error();
  spec->annotations = options.annotations;
  replay::RecordConfig config = options.record_config;
  config.read_environment();
  config.progress = ro.progress;
  auto out = replay::record_run(options.record, *spec, prepared, config);
  if (!out.error.empty()) return out.error;
  report = std::move(out.report);
  std::cerr << "bud run: recorded " << options.record << " (" << out.summary.bytes << " bytes, "
            << out.summary.checkpoints << " checkpoints of " << out.summary.state_bytes
            << " raw state bytes, " << out.summary.new_chunk_bytes << " stored after dedupe, "
            << out.summary.digests << " digests)\n";
  return {};
}

}  // namespace

namespace {

// `bud run --design FILE`: the design file's run, made by `bud design run`.
int run_design_file(const RunCommandOptions& options) {
  if (!options.fault_texts.empty())
    return fail_command("run", options.json, 2,
                        "--design cannot be combined with --fault: a design's faults are its own "
                        "defines and parameters (--define, --param; docs/designs.md)");
  if (!options.triggers.empty()) return run_design_with_triggers(options);
  if (!options.annotations.empty())
    return fail_command("run", options.json, 2, "--design takes --annotate only with --triggers");
  DesignOptions d;
  d.action = "run";
  d.file = options.design;
  d.json = options.json;
  d.cache = options.design_cache;
  d.seed = options.run.seed.value_or(1);
  d.max_cycles = options.run.max_cycles;
  d.defines = options.defines;
  d.params = options.params;
  d.record = options.record;
  return run_design(d);
}

}  // namespace

int run_run(const RunCommandOptions& options) {
  if (!options.design.empty()) return run_design_file(options);
  if (!options.defines.empty() || !options.params.empty() || !options.design_cache.empty())
    return fail_command("run", options.json, 2,
                        "--define, --param and --design-cache need --design");
  if (auto e = validate_emulation_options(options.run); !e.empty()) {
    return fail_command("run", options.json, 2, e);
  }
  run::RunOptions ro = options.run;
  if (int rc = resolve_config("run", options.json, ro)) return rc;
  if (auto e = parse_fault_options(options.fault_texts, ro); !e.empty()) {
    return fail_command("run", options.json, 2, e);
  }
  if (ro.thermal || !ro.point.empty() || !ro.energy_table.empty())
    if (auto table = resolve_power_options(ro); !table)
      return fail_command("run", options.json, 2, table.error());
  ProgressLine progress("run");
  ro.progress = [&progress](uint64_t cycle) { progress.update(cycle); };
  auto prepared = run::prepare(ro);
  if (!prepared) {
    return fail_command("run", options.json, 2, prepared.error());
  }
  if (!options.triggers.empty()) {
    if (auto e = options.record_config.validate(); !options.record.empty() && !e.empty()) {
      return fail_command("run", options.json, 2, e);
    }
    progress.finish();
    return run_with_triggers(options, ro, *prepared);
  }
  run::RunReport report;
  if (!options.record.empty()) {
    if (auto e = options.record_config.validate(); !e.empty()) {
      return fail_command("run", options.json, 2, e);
    }
    if (auto e = record_run(options, ro, *prepared, report); !e.empty()) {
      progress.finish();
      return fail_command("run", options.json, 2, e);
    }
  } else {
    report = run::execute(*prepared, ro);
  }
  progress.finish();
  if (report.bad_input) {
    return fail_command("run", options.json, 2, report.message);
  }
  if (options.json) {
    std::cout << report_json(report).dump(-1, ' ', false, json::Json::error_handler_t::replace)
              << "\n";
  } else {
    std::cout << report_text(report, *prepared);
  }
  return run_exit_code(report);
}

}  // namespace bud::cli
