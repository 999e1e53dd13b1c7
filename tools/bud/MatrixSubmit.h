// `bud matrix BASE NEW --slurm DIR`: the matrix as a Slurm job array (docs/matrix.md,
// "Sharding"): DIR/matrix.sbatch, whose task I runs shard I/N of the matrix's tasks and writes
// DIR/results/shard-I-of-N.json, and DIR/merge.sbatch, submitted after any end of the array,
// which merges them into DIR/merged/matrix.{json,txt,html} and exits with the decision's status.
#pragma once

#include "load/matrix/MatrixRun.h"
#include "tools/bud/MatrixCommand.h"

namespace bud::cli {

/// Writes the scripts and submits them (only writes them with --dry-run). Exit code: 0
/// submitted or written, 2 bad input (DIR not writable, more shards than tasks), 3 sbatch failed.
int submit_matrix(const MatrixOptions& options, const matrix::MatrixSpec& spec, size_t task_count);

}  // namespace bud::cli
