// The cells of `bud matrix BASE NEW` (docs/matrix.md), measured: every workload's performance
// cell (one profiled, bit-exactly checked run on the RTL and the load search at the SLA, as a
// `bud fit` cell) under each configuration and each memory seed, which also gives the
// correctness matrix; every ONNX model at every precision under each configuration (the quality
// matrix, also checked bit-exactly); then the decision (load/matrix/Decision.h).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "emu/run/RunJob.h"
#include "load/fit/FitMatrix.h"
#include "load/matrix/Decision.h"
#include "power/EnergyTable.h"

namespace bud::matrix {

/// BASE or NEW: a set of run options (docs/matrix.md, "Configurations").
struct Configuration {
  std::string name;                ///< "BASE" or "NEW"
  std::string origin;              ///< the file (or argument) it was read from
  std::vector<std::string> flags;  ///< the run options as given, one entry per option
  run::RunOptions options;         ///< resolved: the design of its --config, power options
  power::EnergyTable table;        ///< at its operating point
  /// Applies `flags` over another run's options (a corpus packet's recorded run), resolved as
  /// `options` were: error text naming the option, or empty.
  std::function<std::string(run::RunOptions&)> overlay;
};

/// What the matrix measures, the same for both configurations.
struct MatrixSpec {
  std::vector<std::string> workloads;  ///< performance and correctness (built-ins or files)
  std::vector<std::string> models;     ///< ONNX models of the quality matrix
  std::vector<std::string> precisions{"int8", "bf16"};
  /// Every performance cell runs once per memory seed (DRAM latency jitter and back-pressure):
  /// BASE's spread over them is the cell's noise band.
  std::vector<uint64_t> mem_seeds{1, 2, 3};
  /// The serving of the perf/W cell (arrivals, batch, queue). Its SLA of 0 derives each
  /// workload's from BASE: sla_factor x the first seed's time of one inference.
  /// Packets of the replay corpus (paths, in the order reported): each one's recorded run is
  /// re-run under both configurations (load/matrix/CorpusCells.h).
  std::vector<std::string> corpus;
  fit::FitSpec serving;
  double sla_factor = 4;
  DecisionRule rule;
};

/// The SLA one workload's perf/W cell was served at.
struct WorkloadSla {
  std::string workload;
  double p99_us = 0;
  bool derived = false;  ///< from BASE's run (MatrixSpec::sla_factor), not given
};

struct Matrix {
  std::vector<CorrectnessCell> correctness;  ///< workloads, then models x precisions
  std::vector<CorpusCell> corpus;            ///< in MatrixSpec::corpus order
  std::vector<QualityCell> quality;          ///< model-major, then precision
  std::vector<PerfCell> performance;         ///< workload-major, then Metric order
  std::vector<WorkloadSla> slas;             ///< in workload order
  std::vector<uint64_t> mem_seeds;
  std::vector<std::string> precisions;  ///< the quality matrix's columns
  uint32_t rtl_runs = 0;                ///< RTL runs the matrix took
  uint64_t simulated_cycles = 0;        ///< their cycles, summed
  Decision decision;
};

/// Called before each RTL run ("mlp on NEW, mem seed 2").
using MatrixProgress = std::function<void(const std::string& label)>;

/// One unit of the matrix's work, in report order (docs/matrix.md, "Sharding"): a workload's
/// performance and correctness cells under both configurations and every seed, one ONNX model
/// at one precision, or one corpus packet. Task k of a sharded matrix runs in shard k % N.
struct MatrixTask {
  enum class Kind : uint8_t { Workload, Quality, Corpus };
  Kind kind = Kind::Workload;
  std::string name;       ///< the workload, the model or the packet's path
  std::string precision;  ///< Quality: the column
};
/// The quality matrix's columns: spec.precisions, then "configured" when BASE or NEW names a
/// precision of its own.
std::vector<std::string> quality_precisions(const MatrixSpec& spec, const Configuration& base,
                                            const Configuration& next);
std::vector<MatrixTask> matrix_tasks(const MatrixSpec& spec, const Configuration& base,
                                     const Configuration& next);
/// The cells of one task (a Matrix holding only them, no decision).
workload::Result<Matrix> run_task(const MatrixTask& task, const Configuration& base,
                                  const Configuration& next, const MatrixSpec& spec,
                                  const MatrixProgress& progress = {});
/// Appends a task's cells and run counts (tasks appended in task order give the report order).
void append_task(Matrix& into, Matrix&& part);
/// Sets m.decision from its cells.
void decide(Matrix& m, const DecisionRule& rule);

/// Measures every cell under `base` and `next` and decides. An error (a workload that cannot
/// be prepared under either configuration) names the workload and the configuration.
workload::Result<Matrix> run_matrix(const Configuration& base, const Configuration& next,
                                    const MatrixSpec& spec, const MatrixProgress& progress = {});

}  // namespace bud::matrix
