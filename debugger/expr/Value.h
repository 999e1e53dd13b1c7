// The value of a condition-language expression: a 64-bit signed integer or a double.
#pragma once

#include <cmath>
#include <cstdint>

namespace bud::debugger {

/// Result of evaluating an expression or a sub-expression. Integers are int64 (signals and
/// counters are reinterpreted from uint64 with two's-complement wrap); reals are doubles.
/// docs/expressions.md, "Values", says which operations produce which kind.
struct Value {
  bool is_real = false;  ///< true: `real` holds the value; false: `integer` does
  int64_t integer = 0;
  double real = 0.0;

  /// An integer value.
  static Value make_int(int64_t v) { return Value{false, v, 0.0}; }
  /// A real value.
  static Value make_real(double v) { return Value{true, 0, v}; }
  /// The value as a double (integers convert exactly up to 2^53).
  double as_double() const { return is_real ? real : static_cast<double>(integer); }
  /// Whether the value counts as true: a non-zero integer, or a real that is neither 0 nor NaN.
  bool truthy() const { return is_real ? (real != 0.0 && !std::isnan(real)) : integer != 0; }
};

}  // namespace bud::debugger
