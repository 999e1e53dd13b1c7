// A design's generated probe (design/ProbeBuild.h), loaded and bound to one harness: run() is
// one cycle's handshake reads, stage digests and compiled counters, a single call into compiled
// code. Does not allocate, lock, throw or do I/O per cycle.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "design/LoadedModel.h"
#include "design/ProbeBuild.h"

namespace bud::design {

/// How DesignHarness evaluates its handshakes, stage digests and `when` counters each cycle.
enum class ProbeMode : uint8_t {
  /// The design's generated probe, built beside the model on first use; the interpreter when it
  /// cannot be built or loaded (DesignHarness::probe_error() says why).
  Compiled,
  /// Always the interpreter: per-signal reads and the expression stack machine (the reference
  /// the generated code is tested against).
  Interpreted,
};

class CompiledProbe {
 public:
  /// The generated code's argument (ProbeBuild.cpp writes the same layout).
  struct Io {
    const void* const* sig = nullptr;  ///< plan.signals' addresses
    uint64_t* const* count = nullptr;  ///< per compiled counter: its count
    uint64_t* const* stage = nullptr;  ///< per stage: txns, digest, first_cycle, last_cycle
    uint64_t (*hash)(const void*, uint64_t) = nullptr;  ///< bud::hash64
    uint64_t cycle = 0;
    uint64_t* valid = nullptr;  ///< out: per handshake word
    uint64_t* ready = nullptr;
  };
  /// Loads a probe library build_probe() made. nullopt and `error` when it does not load or is
  /// of another probe ABI.
  static std::optional<CompiledProbe> load(const std::string& library, std::string& error);
  CompiledProbe(CompiledProbe&&) noexcept = default;
  CompiledProbe& operator=(CompiledProbe&&) noexcept = default;
  CompiledProbe(const CompiledProbe&) = delete;
  CompiledProbe& operator=(const CompiledProbe&) = delete;

  /// Points the probe at `plan`'s signals in `model`, the counts and stage fields it writes
  /// (4 per stage) and the bit words it fills. The pointers must stay valid while it runs.
  void bind(const ProbePlan& plan, const LoadedModel& model, std::vector<uint64_t*> counts,
            std::vector<uint64_t*> stages, uint64_t* valid, uint64_t* ready);
  /// One cycle, from the settled model; `cycle` is the stages' first/last cycle.
  void run(uint64_t cycle) {
    io_.cycle = cycle;
    run_(&io_);
  }

 private:
  CompiledProbe() = default;
  std::shared_ptr<void> lib_;  // dlclose()d with the last copy of the handle
  void (*run_)(Io*) = nullptr;
  std::vector<const void*> sig_;
  std::vector<uint64_t*> counts_, stages_;
  Io io_;  // points into the vectors above (their buffers move with them)
};

}  // namespace bud::design
