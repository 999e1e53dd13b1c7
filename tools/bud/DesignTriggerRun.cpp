#include "tools/bud/DesignTriggerRun.h"

#include <iostream>

#include "debugger/trigger/TriggerParticipant.h"
#include "debugger/trigger/TriggerReport.h"
#include "design/DesignEmulator.h"
#include "design/DesignPacket.h"
#include "design/DesignRun.h"
#include "design/DesignTarget.h"
#include "emu/run/Designs.h"
#include "tools/bud/DesignRunReport.h"
#include "tools/bud/Output.h"
#include "tools/bud/RunCommand.h"
#include "tools/bud/TriggerCommand.h"

namespace bud::cli {

namespace {

// The design's emulator, power-on state and reset applied, as the run and each replica start.
std::unique_ptr<emu::Emulator> started(const emu::EmulatorConfig& ec, std::string& error) {
  auto e = emu::make_emulator(ec, error);
  if (!e) return nullptr;
  if (error = e->load(emu::HostJob{}); !error.empty()) return nullptr;
  return e;
}

}  // namespace

int run_design_with_triggers(const RunCommandOptions& options) {
  const std::string cmd = "run";
  const bool json = options.json;
  const design::TargetOptions to = design::target_options(options.defines, options.params,
                                                          options.design_cache, options.run.seed);
  design::DesignError derr;
  const auto target = design::prepare_design(options.design, to, derr);
  if (!target) return fail_command(cmd, json, derr.exit_code, derr.to_string());
  emu::EmulatorConfig ec = options.run.emulator;
  ec.design = target->emulator;
  // The run ends where `bud design run` ends it (drained, an error or the cycle limit): the
  // emulator's own no-handshake watchdog is off, so both report the same run.
  ec.hang_cycles = 0;
  std::string error;
  auto emu = started(ec, error);
  if (!emu) return fail_command(cmd, json, 2, error);
  const auto* model = dynamic_cast<const design::DesignEmulator*>(emu.get());
  if (!model) return fail_command(cmd, json, 2, target->emulator + " is not a design's emulator");

  const std::vector<std::string> no_layers;  // a design has none: `layer NAME` is an error
  debugger::TriggerEnv env;
  env.emu = emu.get();
  env.layer_names = &no_layers;
  env.limits = trigger_limits(options.trigger_limits);
  auto parse = debugger::load_trigger_file(options.triggers, env);
  if (!parse.ok()) {
    for (const auto& e : parse.errors) std::cerr << e.to_string() << "\n";
    return fail_command(cmd, json, 2, options.triggers + " is invalid; nothing was run");
  }
  debugger::TriggerEngineConfig config;
  config.capture_dir = options.capture_dir;
  config.make_replica = [ec](std::string& why) { return started(ec, why); };
  config.async = !options.inline_triggers;
  config.limits = env.limits;
  debugger::TriggerEngine engine(*emu, config);
  const auto paths = record_targets(options.record, *parse.program);
  engine.add(std::move(*parse.program));
  BatchRecordHook hook;
  engine.set_record_hook(&hook);

  ProgressLine progress(cmd);
  const auto driven = debugger::drive(
      *emu, engine, options.run.max_cycles, [&progress](uint64_t c) { progress.update(c); },
      options.run.progress_interval);
  progress.finish();
  if (!driven.error.empty()) std::cerr << "bud run: " << driven.error << "\n";

  design::RunOptions ro;
  ro.seed = to.seed;
  ro.max_cycles = options.run.max_cycles;
  ro.quiet_cycles = to.quiet_cycles;
  ro.cache_dir = options.design_cache;
  if (driven.halted) {
    std::string who;
    for (const auto& h : engine.hits())
      if (h.halted && h.cycle == emu->cycle()) who += (who.empty() ? "" : ", ") + h.trigger;
    ro.check = false;
    ro.stopped_because = "halted by trigger " + who + " at cycle " + std::to_string(emu->cycle()) +
                         " (output not checked)";
  }
  const auto outcome = design::finish_run(target->spec, model->harness(), ro, target->revision, derr);
  if (!outcome) return fail_command(cmd, json, derr.exit_code, derr.to_string());
  engine.finish_run(emu->state(), outcome->checked && !outcome->passed);
  int code = driven.halted ? 1 : design_run_exit_code(*outcome);

  // --record keeps the run annotated with every hit; a `record` action's file with the hits that
  // asked for it. A halted run is not recorded: its replay would run past the halt.
  Json packets = Json::array();
  for (const auto& path : paths) {
    const auto asked = hook.requests.find(path);
    if (path != options.record && asked == hook.requests.end()) continue;
    if (driven.halted) {
      std::cerr << "bud run: " << path << " not recorded: a trigger halted the run\n";
      continue;
    }
    std::vector<std::pair<uint64_t, std::string>> notes;
    if (path == options.record) {
      for (const auto& n : options.annotations) notes.emplace_back(0, n);
      for (const auto& h : engine.hits()) notes.emplace_back(h.cycle, BatchRecordHook::describe(h));
    } else {
      for (const auto& h : asked->second) notes.emplace_back(h.cycle, BatchRecordHook::describe(h));
    }
    const design::RecordedRun rec{options.defines, options.params, to.seed, options.run.max_cycles,
                                  to.quiet_cycles};
    std::string why;
    const auto written = design::write_design_packet(path, target->spec, rec, *outcome, why, notes);
    if (!written) {
      std::cerr << "bud run: record " << path << ": " << why << "\n";
      code = code ? code : 2;
      continue;
    }
    std::cerr << "bud run: recorded " << path << " (" << written->bytes << " bytes, "
              << notes.size() << " annotation(s))\n";
    packets.push_back(Json{{"path", path}, {"bytes", written->bytes}});
  }

  if (outcome->error) std::cerr << "bud " << cmd << ": " << outcome->error->to_string() << "\n";
  if (json) {
    Json j = design_run_json(*outcome, to.seed, cmd);
    if (driven.halted) j["state"] = "halted";
    j["triggers"] = debugger::trigger_report_json(engine);
    j["packets"] = packets;
    std::cout << j.dump(-1, ' ', false, json::Json::error_handler_t::replace) << "\n";
  } else {
    std::cout << design_run_text(*outcome, to.seed) << debugger::trigger_report_text(engine)
              << std::flush;
  }
  return code;
}

}  // namespace bud::cli
