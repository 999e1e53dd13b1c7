#include "tools/bud/DesignProfileCommand.h"

#include <iostream>
#include <optional>

#include "design/DesignRun.h"
#include "design/DesignTarget.h"
#include "design/HandshakeReport.h"
#include "profile/Trace.h"
#include "tools/bud/Output.h"
#include "tools/plots/HtmlReport.h"

namespace bud::cli {

namespace {

constexpr int kCannotWrite = 4;  // bud profile's status for an unwritable trace or page

}  // namespace

bool is_design_profile_option(const std::string& name) {
  for (const char* n : {"--design", "--define", "--param", "--design-cache", "--interval", "--seed",
                        "--max-cycles", "--json", "--trace", "--html"})
    if (name == n) return true;
  return false;
}

int run_profile_design(const ProfileCommandOptions& options) {
  const std::string cmd = "profile";
  const auto fail = [&](int code, const std::string& e) {
    return fail_command(cmd, options.json, code, e);
  };
  for (const auto& name : options.given)
    if (!is_design_profile_option(name))
      return fail(2, (name == "workload" ? std::string("a workload") : name) +
                         " does not apply with --design (it takes --define, --param, "
                         "--design-cache, --interval, --seed, --max-cycles, --json, --trace, "
                         "--html)");
  if (options.interval == 0) return fail(2, "--interval must be at least 1 cycle");
  const design::TargetOptions to = design::target_options(options.defines, options.params,
                                                          options.design_cache, options.run.seed);
  design::DesignError err;
  const auto target = design::prepare_design(options.design, to, err);
  if (!target) return fail(err.exit_code, err.to_string());

  design::RunOptions ro;
  ro.seed = to.seed;
  bool max_given = false;
  for (const auto& name : options.given) max_given |= name == "--max-cycles";
  if (max_given) ro.max_cycles = options.run.max_cycles;
  ro.cache_dir = options.design_cache;
  ro.write_sinks = false;  // a profile leaves the design's directory as it was
  std::optional<design::HandshakeProfile> profile;
  ro.profile = &profile;
  ro.profile_options.interval = options.interval;
  ro.profile_options.max_spans = options.trace.empty() ? 0 : kDesignTraceSpans;
  const auto outcome = design::run_design(target->spec, ro, err);
  // No profile: the run never started (a build or bind failure); a profile without an outcome:
  // the run ended in an error (firmware timeout, AXI error, failing reference), still profiled.
  if (!profile) return fail(err.exit_code, err.to_string());
  const auto bottleneck = design::find_bottleneck(*profile);
  int code = 0;
  std::string state = "finished", result;
  if (!outcome || outcome->error) {
    const design::DesignError& e = outcome ? *outcome->error : err;
    code = e.exit_code;
    state = "error";
    result = e.to_string();
  } else {
    code = outcome->cycle_limit ? 3 : (outcome->checked && !outcome->passed) ? 1 : 0;
    state = outcome->cycle_limit ? "cycle_limit" : "finished";
    result = outcome->message;
  }

  const bool failed = state == "error";
  json::Json j = failed ? error_json(cmd, code, result) : json::Json::object();
  j["design"] = target->spec.name;
  j["revision"] = target->revision;
  j["seed"] = ro.seed;
  j["cycles"] = profile->cycles();
  j["state"] = state;
  j["checked"] = outcome && outcome->checked;
  j["passed"] = outcome && outcome->checked && outcome->passed;
  if (!failed) j["message"] = result;
  json::Json stages = json::Json::array();
  if (outcome)
    for (const auto& s : outcome->stages)
      stages.push_back(json::Json{{"name", s.name}, {"transactions", s.txns}});
  j["stages"] = stages;
  j["profile"] = design::handshake_json(*profile, bottleneck);

  if (!options.trace.empty())
    if (auto e = profile::write_trace(design::handshake_trace(*profile, target->spec.name),
                                      options.trace);
        !e.empty())
      return fail(kCannotWrite, "--trace: " + e);
  if (!options.html.empty())
    // The plots library speaks nlohmann::json (bud's Json keeps key order): same document.
    if (auto e = plots::render_html("design_profile_report", nlohmann::json::parse(j.dump()),
                                    options.html);
        !e.empty())
      return fail(kCannotWrite, "--html: " + e);

  if (options.json) {
    std::cout << j.dump(-1, ' ', false, json::Json::error_handler_t::replace) << "\n";
  } else {
    std::printf("design     %s (revision %s, seed %llu)\ncycles     %llu\n\n",
                target->spec.name.c_str(), target->revision.c_str(),
                static_cast<unsigned long long>(ro.seed),
                static_cast<unsigned long long>(profile->cycles()));
    std::cout << design::handshake_text(*profile, bottleneck);
    if (!options.trace.empty()) {
      std::cout << "trace      " << options.trace;
      if (profile->truncated())
        std::cout << " (spans truncated: at most " << kDesignTraceSpans
                  << " in all, see the tracks' 'spans truncated' marks)";
      std::cout << "\n";
    }
    if (!options.html.empty()) std::cout << "html       " << options.html << "\n";
    std::cout << "result     " << result << "\n" << std::flush;
  }
  if (failed) std::cerr << "bud " << cmd << ": " << result << "\n";
  return code;
}

}  // namespace bud::cli
