#include "tools/bud/FitCommand.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "load/fit/FitMatrix.h"
#include "load/fit/FitReport.h"
#include "tools/bud/Output.h"
#include "tools/bud/RunCommand.h"
#include "tools/plots/HtmlReport.h"

namespace bud::cli {

namespace {

constexpr int kFitFailed = 1;
constexpr int kReportFailed = 4;

bool was_given(const FitOptions& o, const char* name) {
  return std::find(o.given.begin(), o.given.end(), name) != o.given.end();
}

}  // namespace

std::vector<double> fit_load_grid() {
  return {0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95};
}

ServeLoadOptions FitOptions::defaults() {
  ServeLoadOptions s;
  s.arrivals = "bursty";
  s.requests = 1000;
  s.max_batch = 1;
  return s;
}

void setup_fit(CLI::App& app, FitOptions& options) {
  auto* sub = app.add_subcommand(
      "fit", "Workload fit matrix: models x array variants under a bursty load at a p99 SLA");
  sub->footer(
      "Examples:\n"
      "  bud fit mlp conv --configs npu8,npu16 --sla-p99-us 500\n"
      "  bud fit examples/onnx/resnet_tiny.onnx examples/onnx/mobilenet_tiny.onnx \\\n"
      "      --configs npu8,npu16,npu32 --sla-p99-us 2000 --html fit.html\n"
      "  bud fit mlp --configs npu8,npu16 --sla-p99-us 500 --gemm none --json\n"
      "  bud fit mlp bert_ffn.onnx@60000 --configs npu8,npu16 --sla-p99-us 500  # its own SLA\n"
      "Each model runs once per array on the RTL, profiled and checked bit-exactly (and once per\n"
      "larger batch size), then a seeded bursty request stream is served from those batch costs\n"
      "at rising load until the p99 misses the SLA (docs/serving.md, \"Platform fit\"). The\n"
      "synthetic GEMM (--gemm) is measured beside the models and its winner shown apart.\n"
      "Exit status: 0 measured, 1 a run failed its check or no array meets the SLA, 2 bad input,\n"
      "4 the HTML report could not be written, 5 an array this bud was not built with.");
  sub->add_option("models", options.models,
                  "Built-in names (see `bud workloads`), workload files or ONNX models; "
                  "MODEL@SLA_US gives one its own p99 SLA")
      ->required();
  sub->add_option("--configs", options.configs, "Array variants to fit on, comma-separated")
      ->delimiter(',')
      ->capture_default_str();
  sub->add_option("--gemm", options.gemm,
                  "The synthetic GEMM reference workload, measured beside the models (none: off)")
      ->capture_default_str();
  sub->add_option("--refine-steps", options.refine_steps,
                  "Bisection steps of the load search above the best grid load")
      ->capture_default_str();
  add_emulation_options(*sub, options.serving.run);
  add_serving_options(*sub, options.serving);
  sub->add_option("--html", options.html,
                  "Write a self-contained HTML report: the fit matrix and the trade curves");
  sub->add_flag("--json", options.json, "Print one JSON object instead of the tables");
  sub->parse_complete_callback([sub, &options] {
    options.given.clear();
    for (const auto* opt : sub->get_options())
      if (opt->count() > 0) options.given.push_back(opt->get_name());
  });
}

int run_fit(const FitOptions& o) {
  const auto fail = [&](int code, const std::string& e) {
    return fail_command("fit", o.json, code, e);
  };
  for (const char* name :
       {"--config", "--sweep-windows-us", "--sweep-tile-rows", "--sweep-tile-blocks"})
    if (was_given(o, name))
      return fail(2, std::string(name) + " does not apply to bud fit" +
                         (std::string(name) == "--config" ? " (give --configs)" : ""));
  if (!(o.serving.sla_p99_us > 0)) return fail(2, "--sla-p99-us must be > 0: the fit is at an SLA");
  if (o.configs.empty()) return fail(2, "--configs names no array");
  for (size_t i = 0; i < o.configs.size(); ++i)
    for (size_t k = 0; k < i; ++k)
      if (o.configs[i] == o.configs[k])
        return fail(2, "--configs names " + o.configs[i] + " twice");
  for (double l : o.serving.loads)
    if (!(l > 0 && l < 1))
      return fail(2, "--load: the search's grid is below capacity, each load in (0, 1)");
  if (auto e = validate_emulation_options(o.serving.run); !e.empty()) return fail(2, e);
  ServeLoadOptions serving = o.serving;
  if (serving.loads.empty()) serving.loads = fit_load_grid();
  fit::FitSpec spec;
  if (auto e = serving_spec(serving, spec.serving); !e.empty()) return fail(2, e);
  spec.window_us = serving.window_us;
  spec.refine_steps = o.refine_steps;
  spec.gemm = o.gemm == "none" ? "" : o.gemm;

  // Every array resolved before anything runs: one not built is one clear error, at once.
  std::unique_ptr<ProgressLine> progress;
  std::vector<fit::FitTarget> targets;
  for (const auto& config : o.configs) {
    fit::FitTarget t;
    t.config = config;
    t.options = serving.run;
    t.options.emulator.design = config;
    if (int rc = resolve_config("fit", o.json, t.options)) return rc;
    auto table = resolve_power_options(t.options);
    if (!table) return fail(2, table.error());
    t.table = std::move(table).value();
    t.options.progress = [&progress](uint64_t cycle) {
      if (progress) progress->update(cycle);
    };
    targets.push_back(std::move(t));
  }
  std::vector<fit::FitModel> models;
  for (const auto& m : o.models) {
    // MODEL@SLA_US: the model's own p99 SLA (models of very different sizes in one matrix).
    fit::FitModel fm{m, 0};
    if (const auto at = m.rfind('@'); at != std::string::npos) {
      const std::string sla = m.substr(at + 1);
      char* end = nullptr;
      const double v = std::strtod(sla.c_str(), &end);
      if (sla.empty() || *end != '\0' || !std::isfinite(v) || v <= 0)
        return fail(2, m + ": the SLA after '@' must be a number of microseconds > 0");
      fm = {m.substr(0, at), v};
    }
    models.push_back(std::move(fm));
  }
  auto matrix = fit::fit_matrix(models, targets, spec, [&](const std::string& label) {
    progress = std::make_unique<ProgressLine>("fit: " + label);
  });
  progress.reset();
  if (!matrix) return fail(2, matrix.error());

  fit::FitConditions c;
  c.arrivals = serving.arrivals;
  c.requests = spec.serving.arrivals.count;
  c.seed = serving.arrival_seed;
  c.burst_factor = serving.burst_factor;
  c.burst_fraction = serving.burst_fraction;
  c.burst_period_us = serving.burst_period_us;
  c.max_batch = serving.max_batch;
  c.window_us = serving.window_us;
  c.queue_bound = serving.queue_bound;
  c.admission = serving.admission;
  c.sla_p99_us = serving.sla_p99_us;
  c.energy_table = targets.front().table.file;
  const Json j = fit::fit_json(*matrix, c);
  if (!o.html.empty())
    if (auto e = plots::render_html("fit_report", nlohmann::json::parse(j.dump()), o.html);
        !e.empty())
      return fail(kReportFailed, o.html + ": " + e);
  for (const auto& cell : matrix->cells)
    if (!cell.passed)
      return fail(kFitFailed, cell.workload + " on " + cell.config + ": " + cell.failure);
  if (o.json)
    std::cout << j.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
  else
    std::cout << fit::fit_text(*matrix, c);
  return matrix->production_winner.config.empty() ? kFitFailed : 0;
}

}  // namespace bud::cli
