#include "tools/bud/ProfileCommand.h"

#include <iostream>

#include "debugger/json/Json.h"
#include "profile/Profiler.h"
#include "profile/Report.h"
#include "tools/bud/Output.h"
#include "tools/bud/RunCommand.h"

namespace bud::cli {

namespace {
constexpr int kCannotProfile = 4;
}  // namespace

void setup_profile(CLI::App& app, ProfileCommandOptions& options) {
  auto* sub = app.add_subcommand(
      "profile", "Run a workload, checked as `bud run`, and report where the cycles went");
  sub->footer(
      "Examples:\n"
      "  bud profile conv                      # per layer, per type, top-down, ranking, roofline\n"
      "  bud profile mem_bound --json          # one JSON object on stdout\n"
      "  bud profile mlp --mem-latency 120 --mem-bw 8\n"
      "  bud profile compute_bound --throttle 1 --throttle-period 2\n"
      "  bud profile conv --trace conv.trace.json   # open in Perfetto / chrome://tracing\n"
      "Exit status: 0 passed, 1 failed check or hang, 2 bad usage or bad input,\n"
      "3 cycle limit, 4 the design cannot be profiled or the trace cannot be written.\n"
      "docs/profiling.md explains every figure.");
  sub->add_option("workload", options.run.workload, "Built-in name (see `bud workloads`) or file")
      ->capture_default_str();
  add_emulation_options(*sub, options.run);
  sub->add_option("--fault", options.fault_texts,
                  "Inject a fault (repeatable), as for bud run (docs/faults.md)");
  sub->add_flag("--json", options.json, "Print one JSON object instead of the tables");
  sub->add_option("--trace", options.trace,
                  "Write the run's timeline as Chrome trace-event JSON to FILE (Perfetto, "
                  "chrome://tracing): a slice per command per engine, counter tracks");
  sub->add_option("--trace-window", options.trace_window,
                  "With --trace: cycles per counter-track sample")
      ->capture_default_str();
}

int run_profile(const ProfileCommandOptions& options) {
  if (auto e = validate_emulation_options(options.run); !e.empty())
    return fail_command("profile", options.json, 2, e);
  if (options.trace_window == 0)
    return fail_command("profile", options.json, 2, "--trace-window must be positive");
  run::RunOptions ro = options.run;
  if (auto e = parse_fault_options(options.fault_texts, ro); !e.empty())
    return fail_command("profile", options.json, 2, e);
  ProgressLine progress("profile");
  ro.progress = [&progress](uint64_t cycle) { progress.update(cycle); };
  auto prepared = run::prepare(ro);
  if (!prepared) return fail_command("profile", options.json, 2, prepared.error());
  auto profiled =
      profile::run_profiled(*prepared, ro, options.trace.empty() ? 0 : options.trace_window);
  progress.finish();
  if (!profiled.attribution) {
    return fail_command("profile", options.json, profiled.bad_input ? 2 : kCannotProfile,
                        profiled.error);
  }
  const auto& report = profiled.report;
  const auto p = profile::build_profile(*profiled.attribution, prepared->program, report);
  const auto roofline = profile::project(prepared->workload, prepared->program, ro.emulator, p);
  if (!options.trace.empty()) {
    const auto trace = profile::trace_json(*profiled.attribution, prepared->program,
                                           profiled.design, *profiled.windows);
    if (auto e = profile::write_trace(trace, options.trace); !e.empty())
      return fail_command("profile", options.json, kCannotProfile, "--trace: " + e);
  }
  if (options.json) {
    json::Json j = json::Json::object();
    j["run"] = report_json(report);
    j["profile"] = profile::profile_json(p, roofline);
    std::cout << j.dump(-1, ' ', false, json::Json::error_handler_t::replace) << "\n";
  } else {
    std::cout << report_text(report, *prepared) << profile::profile_text(p, roofline);
  }
  return run_exit_code(report);
}

}  // namespace bud::cli
