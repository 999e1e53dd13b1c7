#include "tools/bud/DebugCommand.h"

#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "debugger/frontend/Console.h"
#include "emu/run/Designs.h"
#include "replay/Framing.h"
#include "replay/InputFile.h"
#include "replay/PacketReader.h"
#include "replay/PacketRun.h"
#include "replay/Recorder.h"
#include "tools/bud/DesignSession.h"
#include "tools/bud/Output.h"
#include "tools/bud/PacketSession.h"
#include "tools/bud/RunCommand.h"
#include "tools/bud/TriggerCommand.h"

namespace bud::cli {

void setup_debug(CLI::App& app, DebugOptions& options) {
  auto* sub = app.add_subcommand("debug", "Debug a workload interactively: run, stop, inspect, "
                                          "force, checkpoint, travel back in time");
  sub->footer(
      "Examples:\n"
      "  bud debug conv                                  # prompt at cycle 0; try `help`\n"
      "  bud debug mlp -x session.bud                    # run a script, then the prompt\n"
      "  bud debug mlp -x check.bud --batch --json       # for tools: JSON per command, exit 1 on error\n"
      "  bud debug --design vec_dma.toml --define BUG_NO_SATURATE   # a design file's model\n"
      "  bud debug --packet sat.bpk -x goto.bud        # a design packet, as it was recorded\n"
      "Inside: continue, step 100, break if gemm.stall_mem > 1000, watch load.state, print/x\n"
      "fetch.head_q, counters, x/i8 out 0 32, info stages, where, goto 500, reverse-continue,\n"
      "wave dump 100 300 w.fst, checkpoint NAME, restore NAME, help COMMAND.");
  sub->add_option("workload", options.run.workload, "Built-in name or workload file")
      ->capture_default_str();
  add_emulation_options(*sub, options.run);
  sub->add_option("--fault", options.fault_texts, "Inject a fault (repeatable; see bud run --help)");
  sub->add_option("--packet", options.packet,
                  "Debug the run recorded in a replay packet (its checkpoints become "
                  "named checkpoints packet@CYCLE; a design packet: its design as recorded, "
                  "with its overrides and seed)");
  sub->add_option("--triggers", options.triggers,
                  "Load the triggers of FILE (evaluated while the program runs; `trigger list`)");
  sub->add_option("--capture-dir", options.capture_dir,
                  "Directory for trigger captures (FST + event log)")
      ->capture_default_str();
  sub->add_flag("--inline-triggers", options.inline_triggers,
                "Evaluate triggers on the simulation thread instead of a second one (same "
                "results, slower; docs/triggers.md)");
  add_trigger_limit_options(*sub, options.trigger_limits);
  sub->add_option("-x,--script", options.scripts, "Run the commands in FILE first (repeatable)");
  sub->add_flag("--batch", options.batch, "Run the scripts and exit (status 1 if a command failed)");
  sub->add_flag("--json", options.json, "Print each command's result as one JSON object per line");
  sub->add_option("--checkpoint-interval", options.checkpoint_interval,
                  "Cycles between automatic checkpoints (0 = automatic: one cycle per 8 bytes "
                  "of state, 65,536..1,048,576)")
      ->capture_default_str();
  sub->add_option("--checkpoint-budget", options.checkpoint_budget_mb,
                  "MiB for automatic checkpoints (the interval doubles when exceeded)")
      ->capture_default_str();
  sub->add_flag("--no-break-on-mismatch", options.no_break_on_mismatch,
                "Check every stage against the golden model but do not stop at a divergence "
                "(`break on mismatch` turns it back on; `info check`)");
  sub->add_flag("--no-check", options.no_check,
                "Do not check against the golden model at all (no `info check`, no mismatch "
                "stops)");
  sub->add_option("--design", options.design,
                  "Debug the model of a design file (docs/designs.md) instead of a workload: its "
                  "signals, counters, stages, memories and checkpoints; --seed seeds its "
                  "back-pressure and DRAM timing");
  sub->add_option("--define", options.defines, "With --design: set a define (NAME[=VALUE])");
  sub->add_option("--param", options.params, "With --design: set a parameter (NAME=VALUE)");
  sub->add_option("--design-cache", options.design_cache,
                  "With --design or a design packet: the model cache (default: "
                  "$XDG_CACHE_HOME/bud/designs)");
}

std::unique_ptr<debugger::GoldenCheck> attach_check(debugger::Session& session,
                                                    const run::PreparedRun& prepared,
                                                    bool break_on, std::string& error) {
  auto check = std::make_unique<debugger::GoldenCheck>(prepared, session);
  if (!check->error().empty()) {
    error = "cannot check against the golden model: " + check->error();
    return nullptr;
  }
  check->set_break(break_on);
  session.set_stage_check(check.get());
  return check;
}

std::unique_ptr<debugger::Session> make_session(const run::PreparedRun& prepared,
                                                const run::RunOptions& options,
                                                const debugger::SessionConfig& config,
                                                std::string& error) {
  auto emu = emu::make_emulator(options.emulator, error);
  if (!emu) return nullptr;
  if (auto e = run::start(prepared, options, *emu); !e.empty()) {
    error = e;
    return nullptr;
  }
  debugger::ProgramInfo info;
  info.workload = prepared.workload.name;
  info.commands = prepared.program.commands;
  for (const auto& l : prepared.workload.layers) info.layer_names.push_back(l.name);
  return std::make_unique<debugger::Session>(std::move(emu), std::move(info), config);
}

namespace {

// Runs the scripts, then the prompt (or stdin), on `session`: what every debug path ends with.
int drive_console(debugger::Session& session, const DebugOptions& options,
                  debugger::RecordBackend* recorder, const std::string& banner) {
  debugger::Interpreter interp(session);
  if (recorder) interp.set_record_backend(recorder);
  debugger::ConsoleOptions copts;
  copts.json = options.json;
  copts.echo = !options.json && !isatty(STDIN_FILENO);
  // A progress line on a terminal only; every 2^22 simulated cycles (a few per second).
  if (isatty(STDOUT_FILENO) && !options.json && !options.batch) copts.progress_every = 1ull << 22;
  debugger::Console console(interp, copts, std::cout, std::cerr);
  debugger::Console::install_interrupt_handler();
  const bool interactive = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) && !options.json;
  if (!options.json && !options.batch) std::cout << banner;
  for (const auto& s : options.scripts) {
    if (!console.run_script(s) && options.batch) return 1;
  }
  if (options.batch) return console.failed() ? 1 : 0;
  if (interactive) {
    const char* home = std::getenv("HOME");
    auto reader = debugger::make_editline_reader(
        [&interp](const std::string& line) { return interp.complete(line); },
        home ? std::string(home) + "/.bud_history" : "");
    console.loop(*reader);
  } else {
    auto reader = debugger::make_stream_reader(std::cin);
    console.loop(*reader);
  }
  return console.failed() ? 1 : 0;
}

// The session on a prepared design, what `bud debug --design FILE` and `bud debug --packet P`
// (a design packet) open alike: no golden model (a design has no ISA); `record start|stop` and
// the `record` trigger action write design packets.
int debug_design(const DesignOpen& open, const DebugOptions& options) {
  DesignSessionSetup setup;
  setup.emulator = options.run.emulator;
  setup.checkpoint_interval = options.checkpoint_interval;
  setup.checkpoint_budget_mb = options.checkpoint_budget_mb;
  setup.trigger_file = options.triggers;
  setup.triggers.capture_dir = options.capture_dir;
  setup.triggers.limits = trigger_limits(options.trigger_limits);
  setup.origin = "recorded at the bud debug prompt";
  std::string error;
  std::vector<std::string> errors;
  auto s = open_design_session(open, setup, error, errors);
  if (!s) {
    for (const auto& e : errors) std::cerr << e << "\n";
    return fail_command("debug", options.json, 2, error);
  }
  return drive_console(*s->session, options, s->recorder.get(),
                       "bud debug: " + open.banner + ", stopped at cycle 0. `help` lists "
                       "commands.\n");
}

// `bud debug --design FILE`: the design's model under the same session, triggers and console.
int run_debug_design(const DebugOptions& options) {
  if (!options.packet.empty() || !options.fault_texts.empty())
    return fail_command("debug", options.json, 2,
                        "--design cannot be combined with --packet or --fault (not supported yet)");
  const design::TargetOptions to = design::target_options(options.defines, options.params,
                                                          options.design_cache, options.run.seed);
  design::DesignError derr;
  const auto open = open_design_file(options.design, to, derr);
  if (!open) return fail_command("debug", options.json, derr.exit_code, derr.to_string());
  return debug_design(*open, options);
}

// `bud debug --packet P.bpk` on a design packet: its files materialised, its design prepared
// with the recorded overrides, seed and quiet cycles, then the session --design opens.
int run_debug_design_packet(const DebugOptions& options, const replay::Packet& packet) {
  if (!options.fault_texts.empty() || !options.defines.empty() || !options.params.empty() ||
      options.run.seed)
    return fail_command("debug", options.json, 2,
                        options.packet + " is a design packet: it runs with the --define, "
                                         "--param and --seed it recorded (--fault, --define, "
                                         "--param and --seed do not apply)");
  design::DesignError derr;
  const auto open = open_design_packet(packet, options.packet, options.design_cache, derr);
  if (!open) return fail_command("debug", options.json, derr.exit_code, derr.to_string());
  return debug_design(*open, options);
}

}  // namespace

int run_debug(const DebugOptions& options) {
  if (!options.design.empty()) return run_debug_design(options);
  std::optional<replay::Packet> packet;
  if (!options.packet.empty()) {
    std::string error;
    packet = replay::read_packet(options.packet, error);
    if (!packet) {
      return fail_command("debug", options.json, 2, error);
    }
    if (packet->header.has_design_run()) return run_debug_design_packet(options, *packet);
  }
  if (!options.defines.empty() || !options.params.empty() || !options.design_cache.empty())
    return fail_command("debug", options.json, 2,
                        "--define, --param and --design-cache need --design (or a design packet)");
  if (auto e = validate_emulation_options(options.run); !e.empty()) {
    return fail_command("debug", options.json, 2, e);
  }
  run::RunOptions ro = options.run;
  if (int rc = resolve_config("debug", options.json, ro)) return rc;
  if (auto e = parse_fault_options(options.fault_texts, ro); !e.empty()) {
    return fail_command("debug", options.json, 2, e);
  }
  if (ro.thermal || !ro.point.empty() || !ro.energy_table.empty())
    if (auto table = resolve_power_options(ro); !table)
      return fail_command("debug", options.json, 2, table.error());
  if (packet) {
    auto spec = replay::spec_from_header(packet->header);
    if (!spec) {
      return fail_command("debug", options.json, 2,
                          std::string(options.packet) + ": " + spec.error());
    }
    ro = spec->options;
  }
  auto prepared = packet ? replay::prepare_spec(replay::spec_from_header(packet->header).value())
                         : run::prepare(ro);
  if (!prepared) {
    return fail_command("debug", options.json, 2, prepared.error());
  }
  if (packet && packet->major < replay::kFormatMajor) {
    // Its fingerprint, states and digests use the hash of its format (docs/packets.md).
    return fail_command("debug", options.json, 2,
                        options.packet + ": recorded by an older format (" +
                            std::to_string(packet->major) + "." + std::to_string(packet->minor) +
                            "); record it again to debug it");
  }
  if (packet && prepared->job.fingerprint() != packet->header.stimulus().job_fingerprint()) {
    return fail_command(
        "debug", options.json, 2,
        options.packet + ": the embedded workload no longer generates the recorded stimulus");
  }
  debugger::SessionConfig config;
  config.timeline.interval = options.checkpoint_interval;
  config.timeline.memory_budget = options.checkpoint_budget_mb << 20;
  std::string error;
  auto session = make_session(*prepared, ro, config, error);
  if (!session) {
    return fail_command("debug", options.json, 2, error);
  }
  if (packet) {
    if (auto e = attach_packet(*session, *packet); !e.empty()) {
      return fail_command("debug", options.json, 2, e);
    }
    if (!options.json && !options.batch) {
      std::cout << "bud debug: packet " << replay::printable(packet->name) << ": cycles "
                << packet->header.start_cycle() << ".." << packet->last_cycle() << ", "
                << packet->checkpoints.size() << " checkpoints (packet@CYCLE)";
      if (packet->symptom)
        std::cout << ", symptom " << replay::symptom_kind_name(packet->symptom->kind())
                  << " at cycle " << packet->symptom->cycle() << ": "
                  << replay::printable(packet->symptom->message());
      std::cout << "\n";
    }
  }
  std::unique_ptr<debugger::GoldenCheck> check;
  if (!options.no_check) check = attach_check(*session, *prepared, !options.no_break_on_mismatch, error);
  if (!check && !options.no_check) {
    std::cerr << "bud debug: " << error << "\n";
    return 2;
  }
  struct UninstallCheck {
    debugger::Session& s;
    ~UninstallCheck() { s.set_stage_check(nullptr); }
  } uninstall_check{*session};
  std::unique_ptr<PacketRecordBackend> recorder;
  {
    auto spec = packet ? replay::spec_from_header(packet->header) : replay::make_spec(ro, *prepared);
    if (spec) {
      recorder = std::make_unique<PacketRecordBackend>(std::move(spec).value(), *prepared,
                                                       "recorded at the bud debug prompt");
      recorder->bind(*session);
    }
  }
  debugger::TriggerEngineConfig tconfig;
  tconfig.capture_dir = options.capture_dir;
  tconfig.async = !options.inline_triggers;
  tconfig.limits = trigger_limits(options.trigger_limits);
  auto triggers = attach_triggers(*session, *prepared, ro, options.triggers, tconfig, error);
  if (!triggers) {
    std::cerr << error << "\n";
    return fail_command("debug", options.json, 2, options.triggers + " is invalid");
  }
  if (recorder) triggers->set_record_hook(recorder.get());
  return drive_console(*session, options, recorder.get(),
                       "bud debug: " + prepared->workload.name + " (" +
                           std::to_string(prepared->program.commands.size()) +
                           " commands), stopped at cycle 0. `help` lists commands.\n");
}

}  // namespace bud::cli
