#include "tools/bud/TriggerCommand.h"

#include <fstream>
#include <iostream>
#include <sstream>

#include "debugger/trigger/TriggerReport.h"
#include "emu/npu/NpuEmulator.h"
#include "replay/PacketRun.h"
#include "replay/Recorder.h"
#include "tools/bud/Output.h"
#include "tools/bud/RunCommand.h"

namespace bud::cli {

using debugger::TriggerEngine;

void setup_trigger(CLI::App& app, TriggerCommandOptions& options) {
  auto* sub = app.add_subcommand("trigger", "Counter-based trace triggers (docs/triggers.md)");
  sub->require_subcommand(1);
  sub->footer(
      "Examples:\n"
      "  bud trigger check examples/triggers/memory_stall_burst.trig\n"
      "  bud trigger check my.trig --workload conv --json\n"
      "  bud run conv --triggers my.trig                # arm them (also bud debug --triggers)\n"
      "Run `bud trigger check --help` for its options; docs/triggers.md.");
  auto* check = sub->add_subcommand("check", "Validate a trigger file without running anything");
  check->footer(
      "Examples:\n"
      "  bud trigger check examples/triggers/memory_stall_burst.trig\n"
      "  bud trigger check my.trig --workload conv      # also check `layer NAME` against conv\n"
      "  bud trigger check my.trig --json\n"
      "Errors are printed as FILE:LINE:COL: error: MESSAGE, with near names for unknown ones.\n"
      "Exit status: 0 valid, 2 invalid or unreadable.");
  check->add_option("file", options.file, "Trigger file")->required();
  check->add_option("--workload", options.workload,
                    "Built-in name or workload file whose layer names `layer NAME` must match");
  add_trigger_limit_options(*check, options.limits);
  check->add_flag("--json", options.json, "Print one JSON object");
}

void add_trigger_limit_options(CLI::App& sub, TriggerLimitOptions& options) {
  sub.add_option("--max-trigger-history", options.history_mib,
                 "MiB of condition history (delta/rate/ratio/held windows) one trigger file may "
                 "allocate")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 20));
  sub.add_option("--max-session-trigger-history", options.session_history_mib,
                 "MiB of condition history all triggers loaded in this run or session may "
                 "allocate together")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 20));
}

debugger::TriggerLimits trigger_limits(const TriggerLimitOptions& options) {
  debugger::TriggerLimits l;
  l.max_file_history_bytes = static_cast<size_t>(options.history_mib) << 20;
  l.max_session_history_bytes = static_cast<size_t>(options.session_history_mib) << 20;
  return l;
}

namespace {

std::vector<std::string> layer_names(const run::PreparedRun& p) {
  std::vector<std::string> v;
  for (const auto& l : p.workload.layers) v.push_back(l.name);
  return v;
}

debugger::ReplicaFactory npu_replica(const run::PreparedRun& prepared, const run::RunOptions& ro) {
  return [&prepared, ro](std::string& error) -> std::unique_ptr<emu::Emulator> {
    auto e = std::make_unique<emu::NpuEmulator>(ro.npu);
    if (auto x = run::start(prepared, ro, *e, e.get()); !x.empty()) {
      error = x;
      return nullptr;
    }
    return e;
  };
}

// `record` in a batch run: the run is deterministic, so the packet is written after it ends by
// recording the same run again (bud::replay), annotated with the hits that asked for it.
class BatchRecordHook final : public debugger::TriggerRecordHook {
 public:
  std::string record(const debugger::TriggerHit& hit, const std::string& file,
                     std::string& written) override {
    const std::string path = file.empty() ? "trigger-" + hit.trigger + ".bpk" : file;
    for (auto& r : requests)
      if (r.first == path) {
        r.second.push_back(describe(hit));
        written = path + " (written after the run)";
        return {};
      }
    requests.push_back({path, {describe(hit)}});
    written = path + " (written after the run)";
    return {};
  }
  static std::string describe(const debugger::TriggerHit& h) {
    return "trigger " + h.trigger + " hit " + std::to_string(h.number) + " at cycle " +
           std::to_string(h.cycle);
  }
  std::vector<std::pair<std::string, std::vector<std::string>>> requests;
};

}  // namespace

int run_trigger(const TriggerCommandOptions& options) {
  emu::NpuEmulator emu(emu::NpuConfig{});
  std::optional<run::PreparedRun> prepared;
  std::vector<std::string> layers;
  if (!options.workload.empty()) {
    run::RunOptions ro;
    ro.workload = options.workload;
    auto p = run::prepare(ro);
    if (!p) {
      return fail_command("trigger check", options.json, 2, p.error());
    }
    layers = layer_names(*p);
  }
  debugger::TriggerEnv env;
  env.emu = &emu;
  if (!options.workload.empty()) env.layer_names = &layers;
  env.limits = trigger_limits(options.limits);
  auto parse = debugger::load_trigger_file(options.file, env);
  if (options.json) {
    Json j = Json::object();
    j["file"] = options.file;
    j["valid"] = parse.ok();
    if (!parse.ok()) {
      // The fields every --json error carries (tools/bud/Output.h), beside the detailed list.
      j["error"] = "invalid";
      j["message"] = options.file + ": " + std::to_string(parse.errors.size()) +
                     (parse.errors.size() == 1 ? " error" : " errors");
      j["exit_code"] = 2;
    }
    Json errs = Json::array();
    for (const auto& e : parse.errors) {
      Json x = Json::object();
      x["line"] = e.loc.line;
      x["column"] = e.loc.column;
      x["message"] = e.message;
      Json s = Json::array();
      for (const auto& n : e.suggestions) s.push_back(n);
      x["suggestions"] = s;
      x["text"] = e.to_string();
      errs.push_back(x);
    }
    j["errors"] = errs;
    if (parse.ok()) {
      Json t = Json::array();
      for (const auto& d : parse.program->triggers) {
        Json x = Json::object();
        x["name"] = d.name;
        x["line"] = d.loc.line;
        x["kind"] = d.machine ? "state_machine" : "simple";
        x["conditions"] = static_cast<uint64_t>(d.conds.size());
        x["states"] = static_cast<uint64_t>(d.states.size());
        x["max_pre"] = d.max_pre();
        x["max_post"] = d.max_post();
        uint64_t history = 0;
        for (const auto& c : d.conds) history += c.expr.memory_bytes();
        x["history_bytes"] = history;
        t.push_back(x);
      }
      j["triggers"] = t;
      Json ev = Json::array();
      for (const auto& e : parse.program->events) ev.push_back(e.to_string());
      j["events"] = ev;
      Json ul = Json::array();
      for (const auto& [n, loc] : parse.unresolved_layers) ul.push_back(loc.to_string() + ": " + n);
      j["unchecked_layers"] = ul;
      j["history_bytes"] = static_cast<uint64_t>(parse.program->history_bytes());
    }
    std::cout << j.dump(-1, ' ', false, json::Json::error_handler_t::replace) << "\n";
    return parse.ok() ? 0 : 2;
  }
  if (!parse.ok()) {
    for (const auto& e : parse.errors) std::cerr << e.to_string() << "\n";
    std::cerr << options.file << ": " << parse.errors.size()
              << (parse.errors.size() == 1 ? " error" : " errors") << "\n";
    return 2;
  }
  const auto& prog = *parse.program;
  std::cout << options.file << ": ok, " << prog.triggers.size()
            << (prog.triggers.size() == 1 ? " trigger" : " triggers") << ", " << prog.events.size()
            << (prog.events.size() == 1 ? " event" : " events") << ", " << prog.history_bytes()
            << " bytes of history (limit " << env.limits.max_file_history_bytes << ")\n";
  for (const auto& d : prog.triggers) {
    std::cout << "  " << d.name << " (line " << d.loc.line << "): "
              << (d.machine ? "state machine, " + std::to_string(d.states.size()) + " states"
                            : "when " + d.conds[0].text);
    if (d.captures()) std::cout << "; captures pre " << d.max_pre() << " post " << d.max_post();
    std::cout << "\n";
  }
  for (const auto& [n, loc] : parse.unresolved_layers)
    std::cout << loc.to_string() << ": note: layer '" << n
              << "' is checked when a workload is given (--workload)\n";
  return 0;
}

int run_with_triggers(const RunCommandOptions& options, const run::RunOptions& ro,
                      const run::PreparedRun& prepared) {
  emu::NpuEmulator emu(ro.npu);
  if (auto e = run::start(prepared, ro, emu, &emu); !e.empty()) {
    return fail_command("run", options.json, 2, e);
  }
  const auto layers = layer_names(prepared);
  debugger::TriggerEnv env;
  env.emu = &emu;
  env.layer_names = &layers;
  env.limits = trigger_limits(options.trigger_limits);
  auto parse = debugger::load_trigger_file(options.triggers, env);
  if (!parse.ok()) {
    for (const auto& e : parse.errors) std::cerr << e.to_string() << "\n";
    return fail_command("run", options.json, 2, options.triggers + " is invalid; nothing was run");
  }
  debugger::TriggerEngineConfig config;
  config.capture_dir = options.capture_dir;
  config.make_replica = npu_replica(prepared, ro);
  config.async = !options.inline_triggers;
  config.limits = env.limits;
  TriggerEngine engine(emu, config);
  engine.add(std::move(*parse.program));
  BatchRecordHook recorder;
  engine.set_record_hook(&recorder);

  ProgressLine progress("run");
  const auto d = debugger::drive(
      emu, engine, ro.max_cycles, [&progress](uint64_t c) { progress.update(c); },
      ro.progress_interval);
  if (!d.error.empty()) std::cerr << "bud run: triggers: " << d.error << "\n";
  run::RunReport report;
  if (d.halted) {
    run::RunOptions stop_here = ro;
    stop_here.max_cycles = emu.cycle();
    report = run::finish(prepared, stop_here, emu);
    report.state = emu.state();
    report.message.clear();
    report.failures = prepared.lowering_failures;
    std::string who;
    for (const auto& h : engine.hits())
      if (h.halted && h.cycle == emu.cycle()) who += (who.empty() ? "" : ", ") + h.trigger;
    report.failures.push_back("halted by trigger " + who + " at cycle " +
                              std::to_string(emu.cycle()) + " (outputs not checked)");
    report.passed = false;
  } else {
    report = run::finish(prepared, ro, emu);
  }
  engine.finish_run(emu.state(), emu.state() == emu::RunState::Finished && !report.passed);
  progress.finish();

  // --record: the whole run (up to a halt), annotated with every hit; then the record actions'.
  struct Request {
    std::string path;
    std::vector<std::string> notes;
    replay::RecordConfig config;
  };
  std::vector<Request> requests;
  if (!options.record.empty()) {
    Request all{options.record, options.annotations, options.record_config};
    for (const auto& h : engine.hits()) all.notes.push_back(BatchRecordHook::describe(h));
    requests.push_back(std::move(all));
  }
  for (const auto& [path, notes] : recorder.requests) requests.push_back({path, notes, {}});
  for (const auto& [path, notes, rconfig] : requests) {
    auto spec = replay::make_spec(ro, prepared);
    if (!spec) {
      std::cerr << "bud run: record " << path << ": " << spec.error() << "\n";
      continue;
    }
    spec->annotations = notes;
    if (d.halted) spec->options.max_cycles = emu.cycle();  // the packet ends at the halt
    std::ifstream f(options.triggers);
    std::stringstream ss;
    ss << f.rdbuf();
    spec->triggers.push_back(ss.str());
    auto out = replay::record_run(path, *spec, prepared, rconfig);
    if (!out.error.empty())
      std::cerr << "bud run: record " << path << ": " << out.error << "\n";
    else
      std::cerr << "bud run: recorded " << path << " for " << notes.size() << " trigger hit(s)\n";
  }

  if (options.json) {
    Json j = report_json(report);
    j["triggers"] = debugger::trigger_report_json(engine);
    std::cout << j.dump(-1, ' ', false, json::Json::error_handler_t::replace) << "\n";
  } else {
    std::cout << report_text(report, prepared) << debugger::trigger_report_text(engine);
  }
  return run_exit_code(report);
}

std::unique_ptr<TriggerEngine> attach_triggers(debugger::Session& session,
                                               const run::PreparedRun& prepared,
                                               const run::RunOptions& ro, const std::string& file,
                                               debugger::TriggerEngineConfig config,
                                               std::string& error) {
  config.make_replica = npu_replica(prepared, ro);
  auto engine = std::make_unique<TriggerEngine>(session.emu(), config);
  engine->attach(session);
  if (file.empty()) return engine;
  auto parse = debugger::load_trigger_file(file, engine->env());
  if (!parse.ok()) {
    for (const auto& e : parse.errors) error += (error.empty() ? "" : "\n") + e.to_string();
    return nullptr;
  }
  engine->add(std::move(*parse.program));
  return engine;
}

}  // namespace bud::cli
