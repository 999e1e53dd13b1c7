// A compiled condition (docs/expressions.md): a flat node array evaluated once per cycle, with
// every history buffer allocated at compile time. Produced by compile() (Compiler.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "debugger/expr/NameResolver.h"
#include "debugger/expr/Value.h"

namespace bud::debugger {

namespace detail {
class ExprBuilder;
}

/// A compiled expression. Copyable (a copy has its own history). Lifecycle: compile() ->
/// arm() -> eval() once per cycle -> arm() again to restart the windows.
class Expr {
 public:
  /// An empty expression; eval() returns integer 0. Use compile() to get a real one.
  Expr() = default;

  /// Resets every window, history, count() and held() to the state "armed now": each history
  /// is filled from the current sample of its name, counts and runs are zeroed. No allocation.
  void arm(Sampler& sampler);
  /// Advances one cycle: samples every referenced name once, pushes the samples into the
  /// histories, evaluates all nodes (no short-circuit, so every stateful function sees every
  /// cycle) and returns the value. Arms first if arm() was never called. Never allocates,
  /// locks or throws.
  Value eval(Sampler& sampler);

  /// The normalized expression: canonical operators (`&&`, `||`, `!`), single spaces around
  /// binary operators, minimal parentheses, fractions and percentages as decimal fractions.
  /// compile(to_string()) yields an equivalent expression with the same to_string().
  std::string to_string() const;
  /// The distinct quantities the expression reads, in first-use order.
  std::vector<Ref> refs() const;
  /// Whether the expression keeps state across cycles (uses any of delta, rate, ratio, rose,
  /// fell, changed, count, held), i.e. whether its value depends on when it was armed.
  bool stateful() const { return stateful_; }
  /// Distinct look-back lengths in cycles, ascending: W of delta/rate/ratio, N of held, 1 for
  /// rose/fell/changed. Empty for stateless expressions.
  std::vector<uint32_t> windows() const;
  /// Bytes of history ring buffers allocated at compile time: 8 * (W + 1) per distinct
  /// (name, W) pair (rose/fell/changed use W = 1).
  size_t memory_bytes() const { return history_.size() * sizeof(uint64_t); }
  /// Changes where quantities are read from without changing which ones: `f` sees every Ref
  /// and may set its `direct`/`direct_bytes` (e.g. into a per-cycle sample frame). Identity
  /// (kind, id, element) must stay the same.
  void rebind(const std::function<void(Ref&)>& f) {
    for (Ref& r : refs_) f(r);
  }
  /// NAME CMP INTEGER over a quantity read directly as 8 bytes, which a caller can evaluate in a
  /// tight loop: where it lives, the comparison (signed) and the constant.
  struct SimpleCompare {
    enum class Cmp : uint8_t { Lt, Le, Gt, Ge, Eq, Ne };
    const void* direct = nullptr;
    Cmp cmp = Cmp::Gt;
    int64_t k = 0;
    bool test(int64_t v) const {
      switch (cmp) {
        case Cmp::Lt: return v < k;
        case Cmp::Le: return v <= k;
        case Cmp::Gt: return v > k;
        case Cmp::Ge: return v >= k;
        case Cmp::Eq: return v == k;
        case Cmp::Ne: return v != k;
      }
      return false;
    }
  };
  /// The expression as a SimpleCompare, or nullopt when it is anything else.
  std::optional<SimpleCompare> simple_compare() const;
  /// C++ statements computing what `eval(...).truthy()` computes, for code generators (the
  /// design probes, design/ProbeSource.h): temporaries named PREFIX_0, PREFIX_1, ..., then
  /// `const bool PREFIX = ...;`. `loads[i]` is a C++ expression of type uint64_t giving refs()[i]'s
  /// sample this cycle. The code needs cpp_prelude() before it. Integer and real arithmetic,
  /// division and modulo by zero, NaN comparisons and truthiness are exactly eval()'s. nullopt
  /// when the expression is stateful (its history lives in this object) or `loads` is short.
  std::optional<std::string> to_cpp(const std::string& prefix,
                                    const std::vector<std::string>& loads) const;
  /// The helpers to_cpp() code calls (namespace bud_expr; needs <cmath>, <cstdint>, <cstring>).
  static const char* cpp_prelude();
  /// Cycles (eval() calls) since the last arm().
  uint64_t cycles_since_arm() const { return elapsed_; }
  /// Whether arm() (or eval()) has been called.
  bool armed() const { return armed_; }

 private:
  friend class detail::ExprBuilder;
  /// One sample: straight from memory when the resolver gave an address, else the Sampler.
  static uint64_t read(const Ref& r, Sampler& sampler) {
    return r.direct ? read_direct(r) : sampler.sample(r);
  }

  // Node kinds: leaves (Int, Real, Load), unary, arithmetic, comparison and logic, then the
  // stateful functions.
  // clang-format off
  enum class Op : uint8_t {
    Int, Real, Load,
    Neg, Not,
    Add, Sub, Mul, Div, Mod,
    Lt, Le, Gt, Ge, Eq, Ne, And, Or,
    Delta, Rate, Ratio, Rose, Fell, Changed, Count, Held,
  };
  // clang-format on
  /// One postfix node. Field use per op: Int: integer (+ radix 16/2/10 for printing); Real: real;
  /// Load: a = ref slot, c = name; Delta/Rate/Rose/Fell/Changed: a = ring, c = name;
  /// Ratio: a, b = rings, c, d = names; Count: a = state slot; Held: a = state slot, b = N.
  struct Node {
    Op op = Op::Int;
    uint8_t radix = 10;
    uint32_t a = 0, b = 0, c = 0, d = 0;
    int64_t integer = 0;
    double real = 0.0;
  };
  /// History of one (ref, window): window + 1 samples in history_[offset ...].
  struct Ring {
    uint32_t ref = 0;
    uint32_t window = 0;
    size_t offset = 0;
    uint32_t pos = 0;  ///< slot of the newest sample
  };

  int64_t delta(const Ring& r) const;

  std::vector<Node> nodes_;
  std::vector<Ref> refs_;
  std::vector<std::string> names_;  ///< spellings, for to_string()
  std::vector<Ring> rings_;
  std::vector<uint64_t> history_;
  std::vector<uint64_t> samples_;  ///< current sample per ref
  std::vector<uint64_t> state_;    ///< count() totals and held() run lengths
  std::vector<Value> stack_;       ///< evaluation stack, sized to the maximum depth
  uint64_t elapsed_ = 0;
  bool armed_ = false;
  /// Fast path for the commonest condition, NAME CMP CONSTANT (set by arm()): no stack machine.
  bool simple_ = false;
  Op simple_op_ = Op::Gt;
  int64_t simple_k_ = 0;
  bool stateful_ = false;
};

}  // namespace bud::debugger
