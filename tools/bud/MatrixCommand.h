// `bud matrix BASE NEW`: the before/after matrix of one bounded change (docs/matrix.md): every
// workload bit-exact and its performance cells (cycles, % of peak, energy, perf/W at the SLA)
// under several memory seeds, every ONNX model's quality per precision, the cells that moved
// beyond the noise measured over the seeds, and the decision with the owner role per moved cell.
// A thin CLI over bud::matrix (load/matrix/MatrixRun.h).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace bud::cli {

struct MatrixOptions {
  std::string base, next;              ///< positional BASE NEW (file, inline "--...", default)
  std::vector<std::string> workloads;  ///< --workloads (default: every built-in)
  std::vector<std::string> models;     ///< --models: ONNX models of the quality matrix
  std::string corpus;                  ///< --corpus DIR: the replay corpus's packets
  std::vector<std::string> precisions{"int8", "bf16"};  ///< --precisions
  uint32_t seeds = 3;                                   ///< --seeds: memory seeds 1..N
  double sla_p99_us = 0;                                ///< --sla-p99-us (0: derived per workload)
  double sla_factor = 10;                               ///< --sla-factor
  uint32_t requests = 1000;                             ///< --requests per load point
  double floor_pct = 1;                                 ///< --floor-pct
  double rollout_pct = 5;                               ///< --rollout-pct
  double snr_tolerance_db = 0.5;                        ///< --snr-tolerance-db
  double top1_tolerance_pct = 0;                        ///< --top1-tolerance-pct
  std::string html;                                     ///< --html FILE
  bool json = false;
  // Sharding (docs/matrix.md, "Sharding").
  std::string shard;      ///< --shard I/N (else the scheduler's variables, with --cells-out)
  std::string cells_out;  ///< --cells-out DIR: write this shard's cells, decide nothing
  std::string slurm;      ///< --slurm DIR: submit the matrix as a job array and a merge job
  uint32_t shards = 0;    ///< --shards (default: one per task, at most 1000)
  std::string partition, time_limit;
  std::string sbatch = "sbatch";
  bool dry_run = false;
  // `bud matrix merge INPUT...`
  bool merging = false;
  std::vector<std::string> merge_inputs;  ///< shard files, or directories of them
  uint32_t expect_shards = 0;             ///< --expect-shards (0: the files' own count)
};

void setup_matrix(CLI::App& app, MatrixOptions& options);
/// `bud matrix default '--tile-rows 4'`: CLI11 takes an argument starting with "--" for an
/// option even when it holds a space. The arguments after "matrix" that are a set of options
/// (start with "--" and hold whitespace) get a leading space, which makes them positional;
/// read_configuration trims it. Every other argument is left as given.
void protect_inline_configurations(std::vector<std::string>& args);
/// Exit code, by the decision: 0 ship, 1 rollback, 10 bounded rollout, 11 escalate; 2 bad input
/// (a configuration's FILE:LINE:COL, a workload that cannot be prepared), 4 the HTML report
/// could not be written, 5 (kExitNotBuilt) a --config this bud was not built with.
int run_matrix(const MatrixOptions& options);
/// `bud matrix merge`: the merged shards' matrix, reported and decided as run_matrix does.
int run_matrix_merge(const MatrixOptions& options);

}  // namespace bud::cli
