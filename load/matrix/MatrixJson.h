// The matrix as JSON, both ways (docs/matrix.md, "JSON"): the header that says what was
// measured (BASE, NEW, seeds, the rule, the serving), and every cell. `bud matrix --json`, the
// HTML report and the shard files of a sharded matrix (load/matrix/MatrixShards.h) all use it,
// so a merged matrix is the same document as one run in one process.
#pragma once

#include "debugger/json/Json.h"
#include "emu/workload/Result.h"
#include "load/matrix/MatrixRun.h"

namespace bud::matrix {

/// {"base": {"origin", "flags", "energy_table"}, "new": {...}, "workloads", "models",
///  "precisions" (the columns asked for), "corpus" (packet paths), "mem_seeds", "rule",
///  "serving"}: everything that must be equal for two shards to belong to one matrix.
json::Json header_json(const Configuration& base, const Configuration& next,
                       const MatrixSpec& spec);

/// The cells of `m`: {"slas", "correctness", "corpus", "quality", "performance", "runs"}.
json::Json cells_json(const Matrix& m);
/// Inverse of cells_json (precisions, seeds and decision are not part of it). Error names the
/// member at fault ("performance[3].metric: unknown 'cycle'").
workload::Result<Matrix> cells_from_json(const json::Json& cells);

/// The whole document of `bud matrix --json`: the header's members, "precisions" (the quality
/// columns measured), the cells, "moved" and "decision".
json::Json matrix_json(const Matrix& m, const json::Json& header);

}  // namespace bud::matrix
