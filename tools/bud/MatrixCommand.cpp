#include "tools/bud/MatrixCommand.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>

#include "emu/workload/Builtins.h"
#include "load/matrix/MatrixJson.h"
#include "load/matrix/MatrixReport.h"
#include "load/matrix/MatrixShards.h"
#include "replay/Corpus.h"
#include "tools/bud/FitCommand.h"
#include "tools/bud/MatrixConfig.h"
#include "tools/bud/MatrixSubmit.h"
#include "tools/bud/Output.h"
#include "tools/plots/HtmlReport.h"

namespace bud::cli {

namespace fs = std::filesystem;

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
  sub->add_option("base", options.base, "BASE: a file of run options, '--OPTION ...', or default");
  sub->add_option("new", options.next, "NEW: the same, differing by one bounded change");
  sub->add_option("--workloads", options.workloads,
                  "Workloads of the correctness and performance matrices, comma-separated "
                  "(default: every built-in, see `bud workloads`)")
      ->delimiter(',')
      ->allow_extra_args(false);
  sub->add_option("--models", options.models,
                  "ONNX models of the quality matrix (SNR and top-1 against the fp32 network)")
      ->delimiter(',')
      ->allow_extra_args(false);
  sub->add_option("--corpus", options.corpus,
                  "Replay corpus: every DIR/*.bpk packet's recorded run (workload, seeds, faults) "
                  "re-run under BASE's and NEW's options and checked");
  sub->add_option("--precisions", options.precisions, "Precisions of the quality matrix")
      ->delimiter(',')
      ->allow_extra_args(false)
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
  sub->add_option("--shard", options.shard,
                  "With --cells-out: measure only shard I/N of the tasks (default: the "
                  "scheduler's array variables, e.g. SLURM_ARRAY_TASK_ID)");
  sub->add_option("--cells-out", options.cells_out,
                  "Write this shard's cells to DIR/shard-I-of-N.json for `bud matrix merge`");
  sub->add_option("--slurm", options.slurm,
                  "Submit the matrix to Slurm: a job array of shards and a merge job (scripts, "
                  "logs, results and the merged report in DIR)");
  sub->add_option("--shards", options.shards, "--slurm: array tasks (default one per task)");
  sub->add_option("--partition", options.partition, "--slurm: sbatch --partition");
  sub->add_option("--time", options.time_limit, "--slurm: sbatch --time of each job");
  sub->add_option("--sbatch", options.sbatch, "--slurm: the sbatch program")->capture_default_str();
  sub->add_flag("--dry-run", options.dry_run, "--slurm: write the scripts, submit nothing");

  auto* merge = sub->add_subcommand(
      "merge", "Merge the shard files of a sharded matrix and decide (docs/matrix.md)");
  merge->footer(
      "Example:\n  bud matrix merge runs/m1/results --expect-shards 8 --html m.html\n"
      "INPUT: shard files (bud matrix --cells-out) or directories of them. The merged matrix\n"
      "is the one a single `bud matrix` run gives: same cells, same order, same decision.\n"
      "Exit status: as bud matrix (0 ship, 1 rollback, 10 bounded rollout, 11 escalate), 2 bad\n"
      "input (not a shard file, shards of another matrix, a shard missing or given twice).");
  merge->add_option("inputs", options.merge_inputs, "Shard files or directories of them")
      ->required();
  merge->add_option("--expect-shards", options.expect_shards,
                    "Shards there must be (a missing one is an error naming its tasks)");
  merge->add_option("--html", options.html, "Write the HTML report");
  merge->add_flag("--json", options.json, "Print one JSON object instead of the tables");
  merge->callback([&options] { options.merging = true; });
}

namespace {

/// The matrix's table, --json document and --html report; the decision's exit status.
int report(const MatrixOptions& o, const matrix::Matrix& m, const Json& header) {
  const Json j = matrix::matrix_json(m, header);
  if (!o.html.empty())
    if (auto e = plots::render_html("matrix_report", nlohmann::json::parse(j.dump()), o.html);
        !e.empty())
      return fail_command(o.merging ? "matrix merge" : "matrix", o.json, kReportFailed,
                          o.html + ": " + e);
  if (o.json)
    std::cout << j.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
  else
    std::cout << matrix::matrix_text(m, header);
  return verdict_exit_code(m.decision.verdict);
}

/// --cells-out: this shard's tasks measured and written; 0 once the file is there.
int write_shard(const MatrixOptions& o, const matrix::Configuration& base,
                const matrix::Configuration& next, const matrix::MatrixSpec& spec,
                const std::vector<matrix::MatrixTask>& tasks, const Json& header,
                const matrix::MatrixProgress& note) {
  const auto fail = [&](int code, const std::string& e) {
    return fail_command("matrix", o.json, code, e);
  };
  replay::Shard shard;
  std::string source = "whole matrix";
  std::string error;
  if (!o.shard.empty()) {
    auto s = replay::parse_shard(o.shard, error);
    if (!s) return fail(2, "--shard " + error);
    shard = *s;
    source = "--shard";
  } else if (auto env = replay::shard_from_environment(error)) {
    shard = env->shard;
    source = env->source;
  } else if (!error.empty()) {
    return fail(2, error);
  }
  std::error_code ec;
  fs::create_directories(o.cells_out, ec);
  if (!fs::is_directory(o.cells_out))
    return fail(2, o.cells_out + ": cannot create the directory" + (ec ? ": " + ec.message() : ""));
  auto cells = matrix::run_shard(base, next, spec, shard, note);
  if (!cells) return fail(2, cells.error());
  const Json j = matrix::shard_json(shard, header, matrix::quality_precisions(spec, base, next),
                                    tasks.size(), tasks, *cells);
  const std::string path = o.cells_out + "/" + shard.file_stem() + ".json";
  if (!write_file_atomically(path, j.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n"))
    return fail(2, path + ": cannot write");
  if (o.json)
    std::cout << Json{{"shard", shard.text()},
                      {"source", source},
                      {"tasks", cells->size()},
                      {"of", tasks.size()},
                      {"file", path}}
                     .dump(-1, ' ', false, Json::error_handler_t::replace)
              << "\n";
  else
    std::cout << "bud matrix: shard " << shard.text() << " (" << source << "): " << cells->size()
              << " of " << tasks.size() << " tasks -> " << path << "\n";
  return 0;
}

}  // namespace

int run_matrix(const MatrixOptions& o) {
  if (o.merging) return run_matrix_merge(o);
  const auto fail = [&](int code, const std::string& e) {
    return fail_command("matrix", o.json, code, e);
  };
  if (o.base.empty() || o.next.empty())
    return fail(2,
                "give BASE and NEW (files of run options, '--OPTION ...' or default), or "
                "`bud matrix merge` shard files");
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

  const auto tasks = matrix::matrix_tasks(spec, base, next);
  if (!o.slurm.empty()) return submit_matrix(o, spec, tasks.size());
  if (!o.shard.empty() && o.cells_out.empty())
    return fail(2,
                "--shard needs --cells-out DIR (a shard decides nothing: bud matrix merge does)");

  std::unique_ptr<ProgressLine> progress;
  for (auto* c : {&base, &next})
    c->options.progress = [&progress](uint64_t cycle) {
      if (progress) progress->update(cycle);
    };
  const auto note = [&](const std::string& label) {
    progress = std::make_unique<ProgressLine>("matrix: " + label);
  };
  const Json header = matrix::header_json(base, next, spec);
  if (!o.cells_out.empty()) return write_shard(o, base, next, spec, tasks, header, note);

  auto m = matrix::run_matrix(base, next, spec, note);
  progress.reset();
  if (!m) return fail(2, m.error());
  return report(o, *m, header);
}

int run_matrix_merge(const MatrixOptions& o) {
  const auto fail = [&](int code, const std::string& e) {
    return fail_command("matrix merge", o.json, code, e);
  };
  std::vector<std::string> files;
  for (const auto& in : o.merge_inputs) {
    std::error_code ec;
    if (!fs::is_directory(in, ec)) {
      files.push_back(in);
      continue;
    }
    std::vector<std::string> found;
    for (const auto& e : fs::directory_iterator(in, ec))
      if (e.path().extension() == ".json") found.push_back(e.path().string());
    if (ec) return fail(2, in + ": " + ec.message());
    if (found.empty()) return fail(2, in + ": no shard files (*.json) in this directory");
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  auto merged = matrix::merge_shards(
      files, o.expect_shards ? std::optional<uint32_t>(o.expect_shards) : std::nullopt);
  if (!merged) return fail(2, merged.error());
  return report(o, merged->matrix, merged->header);
}

}  // namespace bud::cli
