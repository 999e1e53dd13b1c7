#include "tools/bud/ProfileCommand.h"

#include <cmath>
#include <functional>
#include <iostream>
#include <optional>

#include "debugger/json/Json.h"
#include "profile/Calibrate.h"
#include "profile/Compare.h"
#include "profile/DvfsSweep.h"
#include "profile/Energy.h"
#include "profile/Profiler.h"
#include "profile/RecordedRun.h"
#include "profile/Report.h"
#include "tools/bud/DesignProfileCommand.h"
#include "tools/bud/Output.h"
#include "tools/bud/RunCommand.h"
#include "tools/bud/ServePlanReport.h"
#include "tools/plots/HtmlReport.h"

namespace bud::cli {

namespace {

constexpr int kCannotProfile = 4;

// The options that change the run: a packet defines them all, and --compare runs nothing.
bool is_run_option(const std::string& name) {
  return name != "--json" && name != "--trace" && name != "--trace-window" && name != "workload" &&
         name != "--compare" && name != "--tolerance" && name != "--help" &&
         name != "--calibrate" && name != "--html" && name != "--energy-table" &&
         name != "--no-energy" && name != "--dvfs" && name != "--sweep" && !is_serving_option(name);
}

std::string first_given(const ProfileCommandOptions& options,
                        const std::function<bool(const std::string&)>& which) {
  for (const auto& name : options.given)
    if (which(name)) return name;
  return {};
}

int run_compare(const ProfileCommandOptions& options) {
  const auto fail = [&](const std::string& e) {
    return fail_command("profile", options.json, 2, e);
  };
  if (auto name = first_given(options,
                              [](const std::string& n) {
                                return is_run_option(n) || n == "workload" || n == "--trace" ||
                                       n == "--trace-window" || n == "--calibrate" || n == "--html";
                              });
      !name.empty())
    return fail("--compare reads two profiles and runs nothing: " + name + " does not apply");
  if (!std::isfinite(options.tolerance_pct) || options.tolerance_pct < 0)
    return fail("--tolerance must be a percentage >= 0");
  auto base = profile::read_profile_input(options.compare[0]);
  if (!base) return fail(base.error());
  auto next = profile::read_profile_input(options.compare[1]);
  if (!next) return fail(next.error());
  if (auto e = profile::check_comparable(*base, *next); !e.empty()) return fail(e);
  const auto c = profile::compare(*base, *next, options.tolerance_pct / 100);
  if (options.json) {
    json::Json j = json::Json::object();
    j["compare"] = profile::comparison_json(c, *base, *next);
    std::cout << j.dump(-1, ' ', false, json::Json::error_handler_t::replace) << "\n";
  } else {
    std::cout << profile::comparison_text(c, *base, *next);
  }
  return c.divergence ? 1 : 0;
}

// `bud profile --calibrate` without a workload: the microbenchmarks and the fidelity table.
int run_calibration(const ProfileCommandOptions& options) {
  if (auto name = first_given(options,
                              [](const std::string& n) {
                                return n == "--trace" || n == "--trace-window" || n == "--html" ||
                                       n == "--fault" || n == "--max-cycles" || n == "--seed";
                              });
      !name.empty())
    return fail_command(
        "profile", options.json, 2,
        "--calibrate without a workload runs the microbenchmarks: " + name + " does not apply");
  if (auto e = validate_emulation_options(options.run); !e.empty())
    return fail_command("profile", options.json, 2, e);
  run::RunOptions cal_options = options.run;
  if (int rc = resolve_config("profile", options.json, cal_options)) return rc;
  const auto cal = profile::calibrate(cal_options.emulator);
  if (options.json) {
    json::Json j = json::Json::object();
    j["calibration"] = profile::calibration_json(cal);
    std::cout << j.dump(-1, ' ', false, json::Json::error_handler_t::replace) << "\n";
  } else {
    std::cout << profile::calibration_text(cal);
  }
  return cal.ok ? 0 : 1;
}

bool given(const ProfileCommandOptions& options, const char* name) {
  return !first_given(options, [name](const std::string& n) { return n == name; }).empty();
}

// `bud profile WORKLOAD --dvfs`: the run at every operating point of the table (`resolved`: the
// options with the power options applied, the thermal model at each point).
int run_dvfs(const ProfileCommandOptions& options, const run::RunOptions& resolved,
             const power::EnergyTable& table) {
  const auto fail = [&](int code, const std::string& e) {
    return fail_command("profile", options.json, code, e);
  };
  if (auto name = first_given(options,
                              [](const std::string& n) {
                                return n == "--trace" || n == "--trace-window" || n == "--html" ||
                                       n == "--calibrate" || n == "--no-energy";
                              });
      !name.empty())
    return fail(2, "--dvfs reports the operating points only: " + name + " does not apply");
  if (table.dram_timing)
    if (auto name = first_given(options,
                                [](const std::string& n) {
                                  return n == "--mem-latency" || n == "--mem-jitter" ||
                                         n == "--mem-bw";
                                });
        !name.empty())
      return fail(2,
                  "--dvfs takes the DRAM timing from the energy table's dram_timing (ns, "
                  "GB/s at each clock): " +
                      name + " does not apply");
  if (auto e = validate_emulation_options(options.run); !e.empty()) return fail(2, e);
  run::RunOptions ro = resolved;
  if (auto e = parse_fault_options(options.fault_texts, ro); !e.empty()) return fail(2, e);
  auto prepared = run::prepare(ro);
  if (!prepared) return fail(2, prepared.error());
  const auto sweep = profile::sweep_dvfs(*prepared, ro, table);
  if (!sweep.error.empty()) return fail(2, sweep.error);
  if (options.json) {
    json::Json j = json::Json::object();
    j["dvfs"] = profile::dvfs_json(sweep, table);
    std::cout << j.dump(-1, ' ', false, json::Json::error_handler_t::replace) << "\n";
  } else {
    std::cout << profile::dvfs_text(sweep, table);
  }
  for (const auto& p : sweep.points)
    if (const int status = run_exit_code(p.report); status != 0) return status;
  return 0;
}

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
      "  bud profile bad.bpk                   # the run a packet recorded (bud run --record)\n"
      "  bud profile --compare base.json new.json --tolerance 2   # two `--json` outputs\n"
      "  bud profile --compare before.bpk after.bpk   # or two packets, profiled as recorded\n"
      "  bud profile --calibrate               # microbenchmarks: peaks, counter fidelity table\n"
      "  bud profile conv --calibrate          # the profile with the empirical roofline too\n"
      "  bud profile conv --html conv.html     # one self-contained page: plots and tables\n"
      "  bud profile mlp --energy-table my.textpb   # energy priced by another table\n"
      "  bud profile mem_bound --dvfs          # every operating point: time, energy, perf/W\n"
      "  bud profile mlp --sweep --sla-p99-us 100   # the intervention plan at the SLA\n"
      "  bud profile --design examples/designs/fir_stream/fir_stream.toml --trace fir.json\n"
      "                                        # a design file: busy/starved/back-pressured/idle\n"
      "                                        # per handshake, the bottleneck, counters\n"
      "Exit status: 0 passed, 1 failed check or hang, 2 bad usage or bad input,\n"
      "3 cycle limit, 4 the design cannot be profiled or the trace cannot be written.\n"
      "With --compare: 0 within the tolerance, 1 a persistent divergence, 2 bad input.\n"
      "--calibrate alone: 0 every counter within its tolerance, 1 not, 2 bad input.\n"
      "--design: 0 passed, 1 failed check, 3 cycle limit, 4 unwritable trace/page, and bud\n"
      "design's statuses (2, 6-11; the profile is still printed for 9-11).\n"
      "docs/profiling.md explains every figure.");
  sub->add_option("workload", options.run.workload,
                  "Built-in name (see `bud workloads`), workload file, or replay packet (.bpk: "
                  "profiles the run it recorded)")
      ->capture_default_str();
  add_emulation_options(*sub, options.run);
  sub->add_option("--fault", options.fault_texts,
                  "Inject a fault (repeatable), as for bud run (docs/faults.md)");
  sub->add_flag("--json", options.json, "Print one JSON object instead of the tables");
  sub->add_option("--trace", options.trace,
                  "Write the run's timeline as Chrome trace-event JSON to FILE (Perfetto, "
                  "chrome://tracing): a slice per command per engine, counter tracks");
  sub->add_option("--html", options.html,
                  "Write a self-contained HTML report to FILE: roofline, top-down per layer and "
                  "engine, ranking, timeline summary (and with --calibrate the fidelity table)");
  sub->add_option("--trace-window", options.trace_window,
                  "With --trace: cycles per counter-track sample")
      ->capture_default_str();
  sub->add_option("--compare", options.compare,
                  "Compare two profiles of one workload (`bud profile --json` outputs or replay "
                  "packets, profiled as recorded): per-layer deltas, "
                  "the first persistent divergence and its mechanism, the ranking before/after")
      ->expected(2)
      ->type_name("FILE");
  sub->add_flag("--calibrate", options.calibrate,
                "Run the built-in microbenchmarks on this memory configuration: measured peaks "
                "and the counter fidelity table (alone), or the empirical roofline beside the "
                "datasheet one (with a workload)");
  sub->add_flag("--no-energy", options.no_energy, "Leave the energy account out");
  sub->add_flag("--dvfs", options.dvfs,
                "Run the workload at every operating point of the energy table (DRAM timing "
                "converted from ns to cycles at each clock) and report cycles, time, energy per "
                "inference, power and perf/W, flagging inefficient points");
  sub->add_flag("--sweep", options.sweep,
                "The intervention plan: serve a seeded request stream from batch costs measured "
                "on the RTL (as bud serve-load) and try one change at a time - operating point, "
                "max batch, micro-batching window, tile rows - ranked by requests per joule at "
                "the SLA, before/after (needs --sla-p99-us; docs/serving.md)");
  add_serving_options(*sub, options.serving);
  sub->add_option("--tolerance", options.tolerance_pct,
                  "With --compare: relative cycle change (percent) that counts as a divergence")
      ->capture_default_str();
  sub->add_option("--design", options.design,
                  "Profile the handshakes of a design file (docs/designs.md) instead of a "
                  "workload: busy, starved, back-pressured and idle cycles per stage and AXI "
                  "channel, the bottleneck, counters over time; --seed seeds its back-pressure "
                  "and DRAM timing");
  sub->add_option("--define", options.defines, "With --design: set a define (NAME[=VALUE])");
  sub->add_option("--param", options.params, "With --design: set a parameter (NAME=VALUE)");
  sub->add_option("--design-cache", options.design_cache,
                  "With --design: the model cache (default: $XDG_CACHE_HOME/bud/designs)");
  sub->add_option("--interval", options.interval,
                  "With --design: cycles between counter samples (doubles when a run outgrows "
                  "4096 samples)")
      ->capture_default_str();
  sub->parse_complete_callback([sub, &options] {
    options.given.clear();
    for (const auto* opt : sub->get_options())
      if (opt->count() > 0) options.given.push_back(opt->get_name());
  });
}

int run_profile(const ProfileCommandOptions& options) {
  if (!options.design.empty()) return run_profile_design(options);
  if (auto name = first_given(options,
                              [](const std::string& n) {
                                return n == "--define" || n == "--param" ||
                                       n == "--design-cache" || n == "--interval";
                              });
      !name.empty())
    return fail_command("profile", options.json, 2,
                        name + " needs --design (a workload's counter window is --trace-window)");
  if (!options.sweep)
    if (auto name = first_given(options, is_serving_option); !name.empty())
      return fail_command("profile", options.json, 2, name + " applies to --sweep only");
  if (options.sweep) {
    const char* other = !options.compare.empty()                           ? "--compare"
                        : options.dvfs                                     ? "--dvfs"
                        : options.no_energy                                ? "--no-energy"
                        : options.calibrate && !given(options, "workload") ? "--calibrate"
                        : !options.fault_texts.empty()                     ? "--fault"
                                                                           : nullptr;
    if (other)
      return fail_command("profile", options.json, 2,
                          std::string("--sweep ranks interventions by perf/W of the workload's "
                                      "runs: ") +
                              other + " does not apply");
    if (profile::is_packet_file(options.run.workload))
      return fail_command("profile", options.json, 2,
                          "--sweep runs the workload again at each batch size and change: give a "
                          "workload, not a replay packet");
  }
  if (!options.compare.empty()) return run_compare(options);
  if (options.calibrate && !given(options, "workload")) return run_calibration(options);
  if (!first_given(options, [](const std::string& n) { return n == "--tolerance"; }).empty())
    return fail_command("profile", options.json, 2, "--tolerance applies to --compare only");
  if (options.no_energy && (options.dvfs || given(options, "--energy-table")))
    return fail_command("profile", options.json, 2,
                        "--no-energy leaves energy out: --dvfs and --energy-table need it");
  const bool packet = profile::is_packet_file(options.run.workload);
  if (packet && options.dvfs)
    return fail_command("profile", options.json, 2,
                        "--dvfs runs the workload again at each operating point: give a "
                        "workload, not a replay packet");
  if (packet)
    if (auto name = first_given(options, is_run_option); !name.empty())
      return fail_command("profile", options.json, 2,
                          options.run.workload + " is a replay packet: its run is recorded, " +
                              name + " does not apply");
  if (options.dvfs && given(options, "--point"))
    return fail_command("profile", options.json, 2,
                        "--dvfs runs every operating point: --point does not apply");
  // The table at the run's operating point; --point and --thermal applied to the run's options.
  run::RunOptions resolved = options.run;
  if (int rc = resolve_config("profile", options.json, resolved)) return rc;
  auto at_point = resolve_power_options(resolved);
  if (!at_point) return fail_command("profile", options.json, 2, at_point.error());
  if (options.dvfs) return run_dvfs(options, resolved, *at_point);
  const double clock_mhz = at_point->frequency_mhz;
  std::optional<power::EnergyTable> table;
  if (!options.no_energy) table = std::move(at_point).value();
  std::optional<profile::RecordedRun> recorded;
  if (packet) {
    auto loaded = profile::load_recorded_run(options.run.workload);
    if (!loaded) return fail_command("profile", options.json, 2, loaded.error());
    recorded = std::move(loaded).value();
  }
  if (options.trace_window == 0)
    return fail_command("profile", options.json, 2, "--trace-window must be positive");
  // The HTML report summarises the timeline, so it records one as --trace does.
  const uint64_t trace_window =
      options.trace.empty() && options.html.empty() ? 0 : options.trace_window;
  ProgressLine progress("profile");
  const auto on_progress = [&progress](uint64_t cycle) { progress.update(cycle); };
  std::optional<run::PreparedRun> prepared_run;
  profile::ProfiledRun profiled;
  run::RunOptions ro;
  if (recorded) {
    recorded->options.progress = on_progress;
    ro = recorded->options;
    profiled = profile::run_recorded(*recorded, trace_window);
  } else {
    if (auto e = validate_emulation_options(options.run); !e.empty())
      return fail_command("profile", options.json, 2, e);
    ro = resolved;
    if (auto e = parse_fault_options(options.fault_texts, ro); !e.empty())
      return fail_command("profile", options.json, 2, e);
    ro.progress = on_progress;
    auto prepared = run::prepare(ro);
    if (!prepared) return fail_command("profile", options.json, 2, prepared.error());
    prepared_run = std::move(prepared).value();
    profiled = profile::run_profiled(*prepared_run, ro, trace_window);
  }
  const run::PreparedRun* prepared = recorded ? &recorded->prepared : &*prepared_run;
  progress.finish();
  if (!profiled.attribution) {
    return fail_command("profile", options.json, profiled.bad_input ? 2 : kCannotProfile,
                        profiled.error);
  }
  const auto& report = profiled.report;
  auto p = profile::build_profile(*profiled.attribution, prepared->program, report);
  const auto roofline = profile::project(prepared->workload, prepared->program, ro.emulator, p);
  profile::annotate_bounds(p.ranking, roofline.layers);
  // The empirical ceilings: from the full calibration with --calibrate, else from its two peak
  // microbenchmarks alone (a few thousand cycles), so every roofline shows what the machine
  // reaches beside what the datasheet and Little's law say.
  std::optional<profile::Calibration> calibration;
  std::optional<profile::Ceilings> empirical;
  std::string empirical_how;
  if (options.calibrate) {
    calibration = profile::calibrate(ro.emulator);
    if (calibration->error.empty()) empirical = profile::empirical_ceilings(*calibration);
    empirical_how = calibration->error.empty() ? "--calibrate" : calibration->error;
  } else {
    empirical = profile::measure_ceilings(ro.emulator, empirical_how);
    if (empirical) empirical_how = "microbenchmarks compute, read_stream";
  }
  const auto ceilings =
      profile::roofline_ceilings(ro.emulator, roofline.machine, empirical, empirical_how);
  json::Json profile_j = profile::profile_json(p, roofline);
  profile_j["ceilings"] = profile::ceilings_json(p, ceilings, roofline);
  // A packet's run is at the point it recorded: its clock is the table's when that is the
  // point the table was resolved at (the energy above is priced there too), else unknown.
  const bool same_point = !recorded || ro.point == resolved.point;
  profile_j["conditions"] =
      profile::conditions_json(profile::run_conditions(ro, report, same_point ? clock_mhz : 0));
  std::optional<profile::EnergyProfile> energy;
  if (table) {
    auto names = report.counter_names;
    auto values = report.counters;
    names.emplace_back(power::kHostCsrAccess);
    values.push_back(profiled.host ? profiled.host->accesses() : 0);
    auto e = profile::energy_profile(p, *table, names, values);
    if (!e) return fail_command("profile", options.json, 2, e.error());
    energy = std::move(e).value();
    profile_j["energy"] = profile::energy_json(*energy);
  }
  std::optional<profile::ThermalFigures> thermal;
  if (report.thermal) {
    // Nominal: the same run without the thermal model.
    run::RunOptions unclamped = ro;
    unclamped.emulator.thermal = {};
    unclamped.progress = {};
    const auto nominal = run::execute(*prepared, unclamped);
    profile::ThermalFigures t;
    t.nominal_cycles = nominal.cycles;
    t.sustained_cycles = report.cycles;
    t.frequency_mhz = static_cast<double>(ro.emulator.thermal.frequency_khz) / 1e3;
    t.peak_mc = report.thermal->peak_mc;
    t.end_mc = report.thermal->temp_mc;
    t.clamp_events = report.thermal->clamp_events;
    t.clamped_cycles = report.thermal->clamped_cycles;
    thermal = t;
    profile_j["thermal"] = profile::thermal_json(t);
  }
  // The intervention plan at the SLA: the serving model's own runs of the workload (batch sizes,
  // operating points, tile caps), each checked bit-exactly, apart from the profiled run.
  std::optional<json::Json> plan_j;
  std::string plan_txt;
  if (options.sweep) {
    ServeLoadOptions serving = options.serving;
    serving.run = options.run;  // serve_options resolves --config and the power options itself
    serving.run.progress = {};
    serving.sweep = true;
    serving.json = options.json;
    Served served;
    if (int rc = serve_options("profile", serving, served)) return rc;
    plan_j = plan_json(served, serving);
    plan_txt = plan_text(served, serving);
  }
  if (trace_window > 0) {
    const auto trace = profile::trace_json(*profiled.attribution, prepared->program,
                                           profiled.design, *profiled.windows,
                                           profiled.host.get(), profiled.end_cycle);
    if (!options.trace.empty())
      if (auto e = profile::write_trace(trace, options.trace); !e.empty())
        return fail_command("profile", options.json, kCannotProfile, "--trace: " + e);
    if (!options.html.empty()) {
      json::Json data = json::Json::object();
      data["run"] = report_json(report);
      data["profile"] = profile_j;
      data["timeline"] = profile::timeline_summary(trace);
      data["calibration"] =
          calibration ? profile::calibration_json(*calibration) : json::Json(nullptr);
      data["sweep"] = plan_j ? *plan_j : json::Json(nullptr);
      // The plots library speaks nlohmann::json (bud's Json keeps key order): same document.
      if (auto e = plots::render_html("profile_report", nlohmann::json::parse(data.dump()),
                                      options.html);
          !e.empty())
        return fail_command("profile", options.json, kCannotProfile, "--html: " + e);
    }
  }
  if (options.json) {
    json::Json j = json::Json::object();
    j["run"] = report_json(report);
    j["profile"] = profile_j;
    if (calibration) j["calibration"] = profile::calibration_json(*calibration);
    if (plan_j) j["sweep"] = *plan_j;
    std::cout << j.dump(-1, ' ', false, json::Json::error_handler_t::replace) << "\n";
  } else {
    std::cout << report_text(report, *prepared) << profile::profile_text(p, roofline)
              << profile::ceilings_text(p, ceilings, roofline);
    if (energy) std::cout << profile::energy_text(*energy);
    if (thermal) std::cout << profile::thermal_text(*thermal);
    if (calibration) std::cout << "\n" << profile::calibration_text(*calibration);
    std::cout << plan_txt;
  }
  const int status = run_exit_code(report);
  return status == 0 && calibration && !calibration->ok ? 1 : status;
}

}  // namespace bud::cli
