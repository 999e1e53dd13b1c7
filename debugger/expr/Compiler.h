// Compiles condition-language text (docs/expressions.md) into an Expr. Never throws; every
// malformed input becomes a CompileError with a column and a message.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "debugger/expr/Expr.h"
#include "debugger/expr/NameResolver.h"

namespace bud::debugger {

/// Why an expression did not compile.
struct CompileError {
  uint32_t column = 1;  ///< 1-based byte column in the text where the problem starts
  std::string message;  ///< one line, e.g. "unknown name 'gemm.stal_mem'"
  std::vector<std::string> suggestions;  ///< for unknown names/functions: up to 3, best first
  /// Set when the history limit (CompileLimits::max_history_bytes) refused the expression: the
  /// bytes its history would need in all (Expr::memory_bytes() had it compiled).
  size_t history_bytes = 0;
  /// "column 6: unknown name 'gemm.stal_mem' (did you mean gemm.stall_mem?)".
  std::string to_string() const;
};

/// Either a compiled expression or the error that prevented it.
struct CompileResult {
  std::optional<Expr> expr;  ///< set on success
  CompileError error;        ///< meaningful when !expr
  bool ok() const { return expr.has_value(); }
  explicit operator bool() const { return ok(); }
};

/// Largest window (W of delta/rate/ratio, N of held) in cycles.
inline constexpr uint32_t kMaxWindow = 16'777'216;
/// Largest total history one expression may allocate (memory_bytes()).
inline constexpr size_t kMaxHistoryBytes = size_t{512} << 20;
/// Deepest nesting of parentheses, unary operators and function calls accepted.
inline constexpr int kMaxNesting = 256;
/// Most nodes (names, constants, operators, calls) one compiled expression may have.
inline constexpr size_t kMaxNodes = size_t{1} << 20;

/// What one compilation may allocate. The defaults are the language's own limits; a caller with
/// a smaller budget (a trigger file, a session) passes what is left of it.
struct CompileLimits {
  size_t max_history_bytes = kMaxHistoryBytes;  ///< Expr::memory_bytes() at most
  size_t max_nodes = kMaxNodes;                 ///< nodes of the compiled expression at most
};

/// Parses, resolves and type-checks `text`. Allocates only here: the result evaluates without
/// allocation. The resolver is used only during the call. Time and memory are linear in the
/// length of `text` (plus the history buffers, which `limits` bounds before allocating).
CompileResult compile(std::string_view text, NameResolver& resolver,
                      const CompileLimits& limits = {});

/// Up to `max` entries of `candidates` that `name` was probably meant to be, best first:
/// edit distance (insert/delete/substitute/transpose) <= 2 first, then names that are the other
/// minus leading dotted parts (`stall_mem` / `gemm.stall_mem`), then names sharing the last
/// dotted part, then names sharing the first; ties by distance, then alphabetically.
std::vector<std::string> suggest_names(std::string_view name,
                                       const std::vector<std::string>& candidates, size_t max = 3);
/// Optimal-string-alignment edit distance (adjacent transpositions count 1).
size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace bud::debugger
