#include "tools/bud/MatrixCommand.h"

#include <cmath>
#include <iostream>
#include <memory>

#include "emu/workload/Builtins.h"
#include "load/matrix/MatrixReport.h"
#include "replay/Corpus.h"
#include "tools/bud/FitCommand.h"
#include "tools/bud/MatrixConfig.h"
#include "tools/bud/Output.h"
#include "tools/plots/HtmlReport.h"

namespace bud::cli {

namespace {

constexpr int kReportFailed = 4;

int verdict_exit_code(matrix::Verdict v) {
  switch (v) {
    case matrix::Verdict::Ship:
      return 0;
    case matrix::Verdict::Rollback:
      return 1;
    case matrix::Verdict::BoundedRollout:
      return 10;
    case matrix::Verdict::Escalate:
      return 11;
  }
  return 1;
}

bool finite_at_least(double v, double lo) { return std::isfinite(v) && v >= lo; }

}  // namespace

void protect_inline_configurations(std::vector<std::string>& args) {
  for (size_t i = 1; i < args.size(); ++i) {
    auto& a = args[i];
    if (a == "--") break;  // positional from here on anyway
    if (a.rfind("--", 0) == 0 && a.find_first_of(" \t") != std::string::npos) a.insert(0, " ");
  }
}

void setup_matrix(CLI::App& app, MatrixOptions& options) {
  auto* sub = app.add_subcommand(
      "matrix", "Re-run the correctness, quality and performance matrix of one bounded change");
  sub->footer(
      "Examples:\n"
      "  bud matrix default '--tile-rows 4'                 # every built-in, 3 memory seeds\n"
      "  bud matrix base.flags new.flags --models examples/onnx/lenet_tiny.onnx --html m.html\n"
      "  bud matrix default '--point low' --workloads mlp,conv --seeds 5 --json\n"
      "BASE and NEW are files of `bud run` options (one per line, # comments), the options\n"
      "themselves as one argument starting with --, or `default` (docs/matrix.md). Every\n"
      "workload runs on the RTL, checked bit-exactly and profiled, under each memory seed and\n"
      "both configurations; BASE's spread over the seeds is each cell's noise band. Decision:\n"
      "ship, bounded rollout, rollback or escalate, with the owner role of every moved cell.\n"
      "Exit status: 0 ship, 1 rollback, 10 bounded rollout, 11 escalate, 2 bad input, 4 the\n"
      "HTML report could not be written, 5 a --config this bud was not built with.");
  sub->add_option("base", options.base, "BASE: a file of run options, '--OPTION ...', or default")
      ->required();
  sub->add_option("new", options.next, "NEW: the same, differing by one bounded change")
      ->required();
  sub->add_option("--workloads", options.workloads,
                  "Workloads of the correctness and performance matrices, comma-separated "
                  "(default: every built-in, see `bud workloads`)")
      ->delimiter(',');
  sub->add_option("--models", options.models,
                  "ONNX models of the quality matrix (SNR and top-1 against the fp32 network)")
      ->delimiter(',');
  sub->add_option("--corpus", options.corpus,
                  "Replay corpus: every DIR/*.bpk packet's recorded run (workload, seeds, faults) "
                  "re-run under BASE's and NEW's options and checked");
  sub->add_option("--precisions", options.precisions, "Precisions of the quality matrix")
      ->delimiter(',')
      ->capture_default_str();
  sub->add_option("--seeds", options.seeds,
                  "Memory seeds per performance cell (1..N): the noise band is BASE's spread")
      ->check(CLI::Range(1u, 64u))
      ->capture_default_str();
  sub->add_option("--sla-p99-us", options.sla_p99_us,
                  "p99 SLA of the perf/W cells (default: each workload's own, --sla-factor x "
                  "BASE's time of one inference)");
  sub->add_option("--sla-factor", options.sla_factor, "The derived SLA's multiple")
      ->capture_default_str();
  sub->add_option("--requests", options.requests, "Bursty requests per load point")
      ->capture_default_str();
  sub->add_option("--floor-pct", options.floor_pct,
                  "Smallest relative move that counts, whatever the measured band")
      ->capture_default_str();
  sub->add_option("--rollout-pct", options.rollout_pct,
                  "Mixed moves: the worst regression up to which the decision is a bounded rollout")
      ->capture_default_str();
  sub->add_option("--snr-tolerance-db", options.snr_tolerance_db,
                  "Quality: the SNR drop that counts")
      ->capture_default_str();
  sub->add_option("--top1-tolerance-pct", options.top1_tolerance_pct,
                  "Quality: the top-1 agreement drop (percentage points) that counts")
      ->capture_default_str();
  sub->add_option("--html", options.html,
                  "Write a self-contained HTML report: before/after per cell and the decision");
  sub->add_flag("--json", options.json, "Print one JSON object instead of the tables");
}

int run_matrix(const MatrixOptions& o) {
  const auto fail = [&](int code, const std::string& e) {
    return fail_command("matrix", o.json, code, e);
  };
  if (!finite_at_least(o.sla_p99_us, 0)) return fail(2, "--sla-p99-us must be >= 0");
  if (!(std::isfinite(o.sla_factor) && o.sla_factor > 1))
    return fail(2, "--sla-factor must be > 1 (an SLA below one inference is never met)");
  if (!finite_at_least(o.floor_pct, 0)) return fail(2, "--floor-pct must be >= 0");
  if (!finite_at_least(o.rollout_pct, 0)) return fail(2, "--rollout-pct must be >= 0");
  if (!finite_at_least(o.snr_tolerance_db, 0)) return fail(2, "--snr-tolerance-db must be >= 0");
  if (!finite_at_least(o.top1_tolerance_pct, 0))
    return fail(2, "--top1-tolerance-pct must be >= 0");
  for (const auto& p : o.precisions)
    if (p != "int8" && p != "bf16" && p != "auto")
      return fail(2, "--precisions " + p + ": not int8, bf16 or auto");

  matrix::Configuration base, next;
  int code = 0;
  if (auto e = read_configuration(o.base, "BASE", base, code); !e.empty()) return fail(code, e);
  if (auto e = read_configuration(o.next, "NEW", next, code); !e.empty()) return fail(code, e);
  if (base.flags == next.flags)
    return fail(2, "BASE and NEW give the same options: there is no change to measure");

  matrix::MatrixSpec spec;
  spec.workloads = o.workloads;
  if (spec.workloads.empty())
    for (const auto& b : workload::list_builtins()) spec.workloads.push_back(b.name);
  spec.models = o.models;
  if (!o.corpus.empty()) {
    std::string error;
    auto packets = replay::list_packets(o.corpus, error);
    if (!packets) return fail(2, "--corpus " + error);
    if (packets->empty()) return fail(2, "--corpus " + o.corpus + ": no *.bpk packets in it");
    spec.corpus = std::move(*packets);
  }
  spec.precisions = o.precisions;
  spec.mem_seeds.clear();
  for (uint32_t s = 1; s <= o.seeds; ++s) spec.mem_seeds.push_back(s);
  ServeLoadOptions serving = FitOptions::defaults();
  serving.requests = o.requests;
  serving.sla_p99_us = o.sla_p99_us;
  serving.loads = fit_load_grid();
  if (auto e = serving_spec(serving, spec.serving.serving); !e.empty()) return fail(2, e);
  spec.serving.window_us = serving.window_us;
  spec.sla_factor = o.sla_factor;
  spec.rule.floor_fraction = o.floor_pct / 100;
  spec.rule.rollout_limit = o.rollout_pct / 100;
  spec.rule.snr_tolerance_db = o.snr_tolerance_db;
  spec.rule.top1_tolerance = o.top1_tolerance_pct / 100;

  std::unique_ptr<ProgressLine> progress;
  for (auto* c : {&base, &next})
    c->options.progress = [&progress](uint64_t cycle) {
      if (progress) progress->update(cycle);
    };
  auto m = matrix::run_matrix(base, next, spec, [&](const std::string& label) {
    progress = std::make_unique<ProgressLine>("matrix: " + label);
  });
  progress.reset();
  if (!m) return fail(2, m.error());

  const Json j = matrix::matrix_json(*m, base, next, spec);
  if (!o.html.empty())
    if (auto e = plots::render_html("matrix_report", nlohmann::json::parse(j.dump()), o.html);
        !e.empty())
      return fail(kReportFailed, o.html + ": " + e);
  if (o.json)
    std::cout << j.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
  else
    std::cout << matrix::matrix_text(*m, base, next, spec);
  return verdict_exit_code(m->decision.verdict);
}

}  // namespace bud::cli
