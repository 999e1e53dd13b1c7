#include "tools/bud/TriggerCommand.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "debugger/trigger/TriggerParticipant.h"
#include "debugger/trigger/TriggerReport.h"
#include "design/DesignTarget.h"
#include "emu/run/Designs.h"
#include "replay/PacketEvidence.h"
#include "replay/PacketRun.h"
#include "replay/PacketWriter.h"
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
      "  bud trigger check irq.trig --design examples/designs/vec_dma/vec_dma.toml\n"
      "Errors are printed as FILE:LINE:COL: error: MESSAGE, with near names for unknown ones.\n"
      "Exit status: 0 valid, 2 invalid or unreadable; with --design also as `bud design build`.");
  check->add_option("file", options.file, "Trigger file")->required();
  check->add_option("--workload", options.workload,
                    "Built-in name or workload file whose layer names `layer NAME` must match");
  check->add_option("--design", options.design,
                    "Check signal and counter names against a design file's model instead of "
                    "the NPU's (docs/designs.md; built or found in the cache)")
      ->type_name("FILE");
  check->add_option("--define", options.defines, "With --design: set a define (NAME[=VALUE])");
  check->add_option("--param", options.params, "With --design: set a parameter (NAME=VALUE)");
  check->add_option("--design-cache", options.design_cache,
                    "With --design: the model cache (default as `bud design build`)");
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

debugger::ReplicaFactory replica_of(const run::PreparedRun& prepared, const run::RunOptions& ro) {
  return [&prepared, ro](std::string& error) -> std::unique_ptr<emu::Emulator> {
    auto e = emu::make_emulator(ro.emulator, error);
    if (!e) return nullptr;
    if (auto x = run::start(prepared, ro, *e); !x.empty()) {
      error = x;
      return nullptr;
    }
    return e;
  };
}

// One packet file being written: a record action's goes to PATH.partial until it is kept.
struct RecordTarget {
  std::string path;
  std::string writing;  ///< the file being written
  std::unique_ptr<replay::PacketWriter> writer;
};

}  // namespace

std::string batch_record_path(const std::string& trigger, const std::string& file) {
  return file.empty() ? "trigger-" + trigger + ".bpk" : file;
}

std::string BatchRecordHook::record(const debugger::TriggerHit& hit, const std::string& file,
                                    std::string& written) {
  const std::string path = batch_record_path(hit.trigger, file);
  requests[path].push_back(hit);
  written = path + " (written at the end of the run)";
  return {};
}

std::string BatchRecordHook::describe(const debugger::TriggerHit& h) {
  return replay::trigger_hit_note(h.trigger, h.number, h.cycle);
}

std::vector<std::string> record_targets(const std::string& record,
                                        const debugger::TriggerProgram& program) {
  std::vector<std::string> paths;
  if (!record.empty()) paths.push_back(record);
  for (const auto& d : program.triggers)
    for (const auto& st : d.states)
      for (const auto& b : st.branches)
        for (const auto& a : b.actions)
          if (a.kind == debugger::ActionKind::Record) {
            auto p = batch_record_path(d.name, a.text);
            if (std::find(paths.begin(), paths.end(), p) == paths.end()) paths.push_back(p);
          }
  return paths;
}

int run_trigger(const TriggerCommandOptions& options) {
  if (options.design.empty() &&
      (!options.defines.empty() || !options.params.empty() || !options.design_cache.empty()))
    return fail_command("trigger check", options.json, 2,
                        "--define, --param and --design-cache need --design");
  if (!options.design.empty() && !options.workload.empty())
    return fail_command("trigger check", options.json, 2,
                        "--design and --workload cannot be combined (a design has no layers)");
  // The names are the NPU's, or a design's: its model's signals and its [[counter]]s.
  emu::EmulatorConfig ec;
  if (!options.design.empty()) {
    design::DesignError derr;
    const auto target = design::prepare_design(
        options.design,
        design::target_options(options.defines, options.params, options.design_cache, {}), derr);
    if (!target) return fail_command("trigger check", options.json, derr.exit_code, derr.to_string());
    ec.design = target->emulator;
  }
  std::string made_error;
  const auto made = emu::make_emulator(ec, made_error);
  if (!made) return fail_command("trigger check", options.json, 2, made_error);
  emu::Emulator& emu = *made;
  std::optional<run::PreparedRun> prepared;
  std::vector<std::string> layers;  // a design has none: `layer NAME` is an error
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
  if (!options.workload.empty() || !options.design.empty()) env.layer_names = &layers;
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
  std::string made_error;
  auto made = emu::make_emulator(ro.emulator, made_error);
  if (!made) return fail_command("run", options.json, 2, made_error);
  emu::Emulator& emu = *made;
  if (auto e = run::start(prepared, ro, emu); !e.empty()) {
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
  config.make_replica = replica_of(prepared, ro);
  config.async = !options.inline_triggers;
  config.limits = env.limits;
  TriggerEngine engine(emu, config);
  const auto paths = record_targets(options.record, *parse.program);
  engine.add(std::move(*parse.program));
  BatchRecordHook hook;
  engine.set_record_hook(&hook);

  // Recording observes the same run as the triggers: one simulation for every packet.
  std::vector<RecordTarget> targets;
  std::unique_ptr<replay::Recorder> recorder;
  if (!paths.empty()) {
    auto spec = replay::make_spec(ro, prepared);
    if (!spec) return fail_command("run", options.json, 2, spec.error());
    std::ifstream f(options.triggers);
    std::stringstream ss;
    ss << f.rdbuf();
    spec->triggers.push_back(ss.str());
    for (const auto& p : paths) {
      RecordTarget t{p, p == options.record ? p : p + ".partial", nullptr};
      std::string error;
      t.writer = replay::PacketWriter::create(t.writing, error);
      if (!t.writer) return fail_command("run", options.json, 2, error);
      targets.push_back(std::move(t));
    }
    auto rconfig = options.record_config;
    rconfig.read_environment();
    recorder = std::make_unique<replay::Recorder>(*targets[0].writer, emu, rconfig);
    for (auto& t : targets) recorder->add_target(*t.writer);
    const auto header = replay::make_header(*spec, prepared, rconfig.digest_interval,
                                            rconfig.checkpoint_interval, emu.cycle());
    if (!recorder->begin(header, replay::encode_job(prepared.job), {}))
      return fail_command("run", options.json, 2, "record: " + recorder->error());
  }

  ProgressLine progress("run");
  drive::Driver driver(emu);
  debugger::TriggerParticipant triggers(engine);
  driver.add(triggers);
  driver.set_rewinder(&triggers);
  if (recorder) driver.add(*recorder);
  run::RunOptions shown = ro;
  shown.progress = [&progress](uint64_t c) { progress.update(c); };
  drive::DriveStop stop;
  run::RunReport report = run::finish(prepared, shown, driver, &stop);
  if (stop.failed) std::cerr << "bud run: " << stop.detail << "\n";
  if (stop.halted) {
    report.state = emu.state();
    report.message.clear();
    report.failures = prepared.lowering_failures;
    std::string who;
    for (const auto& h : engine.hits())
      if (h.halted && h.cycle == emu.cycle()) who += (who.empty() ? "" : ", ") + h.trigger;
    report.failures.push_back("halted by trigger " + who + " at cycle " +
                              std::to_string(emu.cycle()) + " (outputs not checked)");
    report.passed = false;
  }
  engine.finish_run(emu.state(), emu.state() == emu::RunState::Finished && !report.passed);
  progress.finish();

  // --record keeps the whole run (up to a halt) annotated with every hit; a record action's file
  // is kept with the hits that asked for it.
  if (recorder) {
    bool ok = true;
    for (auto& t : targets) {
      std::vector<std::pair<uint64_t, std::string>> notes;
      if (t.path == options.record) {
        for (const auto& n : options.annotations) notes.emplace_back(0, n);
        for (const auto& h : engine.hits()) notes.emplace_back(h.cycle, BatchRecordHook::describe(h));
      }
      if (auto it = hook.requests.find(t.path); it != hook.requests.end() && t.path != options.record)
        for (const auto& h : it->second) notes.emplace_back(h.cycle, BatchRecordHook::describe(h));
      for (const auto& [cycle, text] : notes) ok = ok && recorder->annotate(*t.writer, cycle, text);
    }
    ok = ok && recorder->end(&report, stop.halted);
    for (auto& t : targets) {
      const bool keep = t.path == options.record || hook.requests.count(t.path);
      t.writer.reset();
      if (!ok) {
        std::cerr << "bud run: record " << t.path << ": " << recorder->error() << "\n";
        if (t.writing != t.path) std::remove(t.writing.c_str());
      } else if (!keep) {
        std::remove(t.writing.c_str());
      } else if (t.writing != t.path && std::rename(t.writing.c_str(), t.path.c_str()) != 0) {
        std::cerr << "bud run: record " << t.path << ": cannot rename " << t.writing << "\n";
      } else {
        const size_t hits = t.path == options.record ? engine.hits().size()
                                                     : hook.requests[t.path].size();
        std::cerr << "bud run: recorded " << t.path << " for " << hits << " trigger hit(s)\n";
      }
    }
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
  config.make_replica = replica_of(prepared, ro);
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
