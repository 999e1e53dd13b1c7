// The matrix for people (`bud matrix`): the tables of every cell before and after, the cells
// that moved beyond noise with their owner role, and the decision. The JSON document is
// load/matrix/MatrixJson.h's.
#pragma once

#include <string>

#include "debugger/json/Json.h"
#include "load/matrix/MatrixRun.h"

namespace bud::matrix {

/// The correctness, corpus, quality and performance tables, the moved cells and the decision;
/// `header` is header_json's (load/matrix/MatrixJson.h).
std::string matrix_text(const Matrix& m, const json::Json& header);

}  // namespace bud::matrix
