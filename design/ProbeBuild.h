// A design's probe (docs/designs.md, "The probe"): what DesignHarness evaluates on every cycle
// between settling the model and the clock edge - the valid/ready of every handshake it samples,
// each stage transaction's payload digest, and the [[counter]]s' `when` expressions - generated
// as straight-line C++ for the design and compiled into a small shared object beside the model
// (the cache entry's probe-HASH.so, HASH the hash of the generated source). The model and its
// revision do not change: editing a counter builds a new probe in a fraction of a second, not a
// new model, and a cache entry made before probes existed gains one the first time it is used.
//
// The generated code reads the model's signals in place through a table of addresses and writes
// the harness's counts and stage states through pointers (CompiledProbe binds both); it does
// exactly what the harness's interpreted path does (DesignHarness, ProbeMode::Interpreted: the
// expression stack machine and per-signal reads), which a test checks on every cycle.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "design/LoadedModel.h"

namespace bud::design {

/// Folds `v` into a stage's running digest `h` (DesignHarness::StageState::digest): a
/// multiply-xorshift mix (SplitMix64's finaliser), cheap enough for every transaction. One
/// definition for the harness and the generated probes (which get its text): digests are stored
/// in packets, so this must never change.
#define BUD_STAGE_MIX_BODY                                            \
  uint64_t z = (h ^ v) * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull; \
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;                          \
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;                          \
  return z ^ (z >> 31);
inline uint64_t stage_mix(uint64_t h, uint64_t v) { BUD_STAGE_MIX_BODY }
#define BUD_PROBE_STR2(...) #__VA_ARGS__
#define BUD_PROBE_STR(...) BUD_PROBE_STR2(__VA_ARGS__)
/// stage_mix()'s body as text, for generated code.
inline constexpr const char* kStageMixBody = BUD_PROBE_STR(BUD_STAGE_MIX_BODY);

/// Version of the generated probe's C ABI (bud_probe_abi(), CompiledProbe's Io); part of the
/// generated source, so of its hash.
inline constexpr unsigned kProbeAbi = 1;

/// What a probe evaluates, in terms of the model's signals.
struct ProbePlan {
  /// A signal read in place: element `element` of port `port`, its low `width` bytes (1, 2, 4
  /// or 8: LoadedModel::get()'s and the expressions' read of a port of that size).
  struct Signal {
    size_t port = 0;
    uint32_t element = 0;
    uint32_t width = 1;
    bool operator==(const Signal&) const = default;
  };
  struct Handshake {
    uint32_t valid = 0;              ///< a slot of `signals`
    std::optional<uint32_t> ready;   ///< none: always ready
  };
  /// A payload signal of a stage: folded into the digest as its value (`hashed` false: the
  /// slot's read) or as the XXH3 of its `bytes` bytes (every element; wider than 8 bytes).
  struct Payload {
    uint32_t slot = 0;
    bool hashed = false;
    uint32_t bytes = 0;
  };
  std::string design;                        ///< for the generated file's comment
  std::vector<Signal> signals;               ///< the address table's order
  std::vector<Handshake> handshakes;         ///< stage i is handshake i
  std::vector<std::vector<Payload>> stages;  ///< per stage, in declaration order
  /// A compiled counter: debugger::Expr::to_cpp() code defining `const bool NAME`
  /// (counter_name()) from the slots it reads, named slot_name().
  struct Counter {
    std::string code;
    std::vector<uint32_t> slots;
  };
  std::vector<Counter> counters;

  /// The slot of `s`, added if new.
  uint32_t slot(const Signal& s);
  /// The read of port `i` (element 0) as LoadedModel::get() reads it.
  static Signal port_signal(const LoadedModel& model, size_t i);
  /// The variable counter `k`'s code must define, and the one holding slot `i`'s read.
  static std::string counter_name(size_t k) { return "k" + std::to_string(k); }
  static std::string slot_name(uint32_t i) { return "s" + std::to_string(i); }
};

/// The probe's C++ source for `plan` (exposed for tests and docs).
std::string probe_source(const ProbePlan& plan);

/// The probe library for `source` in `dir` (probe-HASH.so), compiled there first if it is not
/// already (atomically: a probe is whole or absent; the compiler's output is kept in
/// probe-HASH.log on failure). nullopt and `error` when it cannot be built.
std::optional<std::string> build_probe(const std::string& source, const std::string& dir,
                                       std::string& error);

}  // namespace bud::design
