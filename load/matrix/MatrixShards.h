// A matrix split over a cluster's job array (docs/matrix.md, "Sharding"): shard I of N runs the
// tasks k with k % N == I (load/matrix/MatrixRun.h, MatrixTask) and writes one shard file; the
// merge reads every shard's file, checks that they are one matrix, and decides exactly as one
// process measuring every task in order would.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "debugger/json/Json.h"
#include "emu/workload/Result.h"
#include "load/matrix/MatrixRun.h"
#include "replay/ShardEnv.h"

namespace bud::matrix {

/// The tasks of `shard` measured: (task index, its cells).
using ShardCells = std::vector<std::pair<size_t, Matrix>>;

workload::Result<ShardCells> run_shard(const Configuration& base, const Configuration& next,
                                       const MatrixSpec& spec, const replay::Shard& shard,
                                       const MatrixProgress& progress = {});

/// The shard file: {"format": "bud-matrix-shard", "version": 1, "shard": {"index", "total"},
/// "header" (header_json), "precisions", "task_count", "tasks": [{"task", "name", "cells"}]}.
json::Json shard_json(const replay::Shard& shard, const json::Json& header,
                      const std::vector<std::string>& precisions, size_t task_count,
                      const std::vector<MatrixTask>& tasks, const ShardCells& cells);

struct MergedMatrix {
  json::Json header;
  Matrix matrix;  ///< every task's cells in task order, decided
  uint32_t shards = 0;
};
/// Merges shard files (each shard exactly once, every one of `expect_shards` when given). An
/// error names the file and what is wrong: not a shard file, another matrix (the header member
/// that differs), another shard count, a shard twice, shards missing (named with their tasks).
workload::Result<MergedMatrix> merge_shards(const std::vector<std::string>& files,
                                            std::optional<uint32_t> expect_shards);

}  // namespace bud::matrix
