// The matrix rendered (`bud matrix`): one JSON document (what --json prints and the HTML report,
// tools/plots/matrix_report.py, reads) and the tables for people. Both give every cell before
// and after, the cells that moved beyond noise with their owner role, and the decision.
#pragma once

#include <string>

#include "debugger/json/Json.h"
#include "load/matrix/MatrixRun.h"

namespace bud::matrix {

/// {"base": {"origin", "flags"}, "new": {...}, "mem_seeds", "rule", "serving", "slas",
/// "correctness": [...], "quality": [...], "performance": [...], "moved": [...],
/// "decision": {"verdict", "reasons", "better", "worse", "worst_regression"}, "runs"}.
json::Json matrix_json(const Matrix& m, const Configuration& base, const Configuration& next,
                       const MatrixSpec& spec);

/// The correctness, quality and performance tables, the moved cells and the decision.
std::string matrix_text(const Matrix& m, const Configuration& base, const Configuration& next,
                        const MatrixSpec& spec);

}  // namespace bud::matrix
