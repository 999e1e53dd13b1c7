// Runs a loaded design model cycle by cycle as its design file describes (docs/designs.md,
// "Running"): the clock and reset, AXI-Stream sources fed from their files and sinks collected,
// both with seeded valid/ready back-pressure, counters (design signals, or cycles where a
// `when` expression holds), and stage transactions (each accepted transfer of a declared
// handshake, its payload hashed into the stage's running digest). step() does not allocate,
// lock, throw or do I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "debugger/expr/Expr.h"
#include "design/AxiPorts.h"
#include "design/DesignFile.h"
#include "design/LoadedModel.h"
#include "emu/core/DramModel.h"
#include "emu/core/Hash.h"
#include "emu/core/Rng.h"

namespace bud::design {

class DesignHarness {
 public:
  /// Binds `spec`'s ports, counters and stages to `model` (which must outlive the harness) and
  /// reads the source files; serves its AXI4 masters with `dram`'s timing and runs its
  /// firmware (AxiPorts.h). nullopt and `error` when something does not bind.
  static std::optional<DesignHarness> make(const DesignSpec& spec, LoadedModel& model,
                                           uint64_t seed, std::string& error,
                                           const emu::DramConfig& dram = {});

  /// Holds reset active for its cycles (none when the design has no reset).
  void reset();
  /// One clock cycle.
  void step();
  /// Every source has sent all its bytes, the firmware has finished, no AXI4 burst is in
  /// flight and nothing has moved for `quiet` cycles.
  bool drained(uint64_t quiet) const;
  /// The run cannot go on: an AXI4 run error or a failed firmware script (AxiPorts::stopped).
  bool stopped() const { return axi_->stopped(); }
  /// The AXI4 memories and the firmware.
  const AxiPorts& axi() const { return *axi_; }
  AxiPorts& axi() { return *axi_; }

  uint64_t cycle() const { return cycle_; }
  struct Stream {
    std::string name;
    bool source = true;
    size_t data = 0, valid = 0, ready = 0;
    uint32_t beat_bytes = 1;
    double rate = 1;
    std::string bytes;  ///< source: what it sends; sink: what it received
    size_t sent = 0;    ///< source: bytes accepted so far
    bool offering = false;
    uint64_t beats = 0;
  };
  struct Counter {
    std::string name;
    std::optional<size_t> signal;
    std::optional<debugger::Expr> when;
    uint64_t count = 0;
    uint64_t value(const LoadedModel& m) const { return signal ? m.get(*signal) : count; }
  };
  struct StageState {
    std::string name;
    size_t valid = 0;
    std::optional<size_t> ready;
    std::vector<size_t> payload;
    uint64_t txns = 0;
    uint64_t digest = 0;
    uint64_t first_cycle = 0, last_cycle = 0;
  };
  const std::vector<Stream>& streams() const { return streams_; }
  const std::vector<Counter>& counters() const { return counters_; }
  const std::vector<StageState>& stages() const { return stages_; }
  const LoadedModel& model() const { return *model_; }

 private:
  DesignHarness() = default;
  LoadedModel* model_ = nullptr;
  size_t clock_ = 0;
  std::optional<size_t> reset_;
  bool reset_low_ = false;
  uint32_t reset_cycles_ = 0;
  emu::Rng rng_{1};
  std::vector<Stream> streams_;
  std::vector<Counter> counters_;
  std::vector<StageState> stages_;
  std::optional<AxiPorts> axi_;  // always set by make()
  uint64_t cycle_ = 0, last_activity_ = 0;
  class Signals;  // the counters' Sampler over the model
};

}  // namespace bud::design
