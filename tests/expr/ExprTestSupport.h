// Test doubles for the condition language: a table-driven NameResolver and a sampler that
// replays scripted per-cycle values.
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "debugger/expr/Compiler.h"
#include "debugger/expr/NameResolver.h"

namespace bud::debugger::test {

/// Resolves a fixed list of names to RefKind::Other refs (id = position in the list).
class TableResolver : public NameResolver {
 public:
  struct Entry {
    std::string name;
    uint32_t elements = 1;
  };
  TableResolver() = default;
  explicit TableResolver(std::vector<Entry> entries) : entries_(std::move(entries)) {}
  /// The default vocabulary of the tests: a few counters, signals and an array.
  static TableResolver standard() {
    return TableResolver({{"gemm.stall_mem"},
                          {"gemm.stall_dep"},
                          {"gemm.active"},
                          {"load.stall_mem"},
                          {"load.state"},
                          {"cycles"},
                          {"macs_useful"},
                          {"tokens", 4},
                          {"a"},
                          {"b"},
                          {"c"},
                          {"x"},
                          {"y"}});
  }
  /// Id of a name (for the sampler's scripts).
  uint32_t id(std::string_view name) const {
    for (size_t i = 0; i < entries_.size(); ++i)
      if (entries_[i].name == name) return static_cast<uint32_t>(i);
    return UINT32_MAX;
  }

  std::optional<Ref> resolve(std::string_view name, std::optional<uint32_t> index) override {
    ++resolve_calls;
    for (size_t i = 0; i < entries_.size(); ++i) {
      const Entry& e = entries_[i];
      if (e.name != name) continue;
      if (index && (e.elements <= 1 || *index >= e.elements)) return std::nullopt;
      return Ref{RefKind::Other, static_cast<uint32_t>(i), index.value_or(0), e.elements, 64};
    }
    return std::nullopt;
  }
  std::vector<std::string> names() const override {
    std::vector<std::string> out;
    for (const Entry& e : entries_) out.push_back(e.name);
    return out;
  }
  int resolve_calls = 0;

 private:
  std::vector<Entry> entries_;
};

/// Returns script[(id, element)][cycle] for the current `cycle`; unscripted refs read `fallback`.
class ScriptedSampler : public Sampler {
 public:
  uint64_t sample(const Ref& ref) override {
    ++samples;
    auto it = scripts.find({ref.id, ref.element});
    if (it == scripts.end() || it->second.empty()) return fallback;
    const auto& s = it->second;
    return cycle < s.size() ? s[cycle] : s.back();
  }
  void set(uint32_t id, std::vector<uint64_t> values, uint32_t element = 0) {
    scripts[{id, element}] = std::move(values);
  }
  std::map<std::pair<uint32_t, uint32_t>, std::vector<uint64_t>> scripts;
  size_t cycle = 0;
  uint64_t fallback = 0;
  uint64_t samples = 0;
};

/// Sets every name of the standard table to a constant (for stateless arithmetic checks).
class ConstSampler : public Sampler {
 public:
  explicit ConstSampler(std::map<uint32_t, uint64_t> values) : values_(std::move(values)) {}
  uint64_t sample(const Ref& ref) override {
    auto it = values_.find(ref.id + ref.element * 1000);
    return it == values_.end() ? 0 : it->second;
  }

 private:
  std::map<uint32_t, uint64_t> values_;
};

/// Compiles `text` against `resolver` and returns the expression, failing the test otherwise.
inline Expr must_compile(std::string_view text, NameResolver& resolver) {
  CompileResult r = compile(text, resolver);
  INFO("compiling: " << text);
  if (!r.ok()) FAIL("unexpected error: " << r.error.to_string());
  return std::move(*r.expr);
}

}  // namespace bud::debugger::test
