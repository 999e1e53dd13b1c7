// Runs a loaded design model cycle by cycle as its design file describes (docs/designs.md,
// "Running"): the clock and reset, AXI-Stream sources fed from their files and sinks collected,
// both with seeded valid/ready back-pressure, counters (design signals, or cycles where a
// `when` expression holds), and stage transactions (each accepted transfer of a declared
// handshake, its payload hashed into the stage's running digest). The handshakes, stage digests
// and stateless `when` counters run as the design's generated probe (design/ProbeBuild.h), or
// through the interpreter (ProbeMode), with the same results. step() does not allocate, lock,
// throw or do I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "debugger/expr/Expr.h"
#include "design/AxiPorts.h"
#include "design/CompiledProbe.h"
#include "design/DesignFile.h"
#include "design/LoadedModel.h"
#include "emu/core/DramModel.h"
#include "emu/core/Hash.h"
#include "emu/core/Rng.h"

namespace bud::design {

class HandshakeProfile;

class DesignHarness {
 public:
  struct StageState;
  /// Told of every stage transaction as it is accepted (after the stage's count and digest
  /// moved), before the clock edge: the payload signals still hold the transferred values.
  class StageObserver {
   public:
    virtual ~StageObserver() = default;
    virtual void on_stage(size_t stage, const StageState& state, const LoadedModel& model) = 0;
  };

  /// Binds `spec`'s ports, counters and stages to `model` (which must outlive the harness) and
  /// reads the source files; serves its AXI4 masters with `dram`'s timing and runs its
  /// firmware (AxiPorts.h). With ProbeMode::Compiled, finds or builds the design's probe beside
  /// the model (ProbeBuild.h; the interpreter if that fails, see probe_error(), or when
  /// $BUD_DESIGN_PROBE is "interpreted"). nullopt and `error` when something does not bind.
  static std::optional<DesignHarness> make(const DesignSpec& spec, LoadedModel& model,
                                           uint64_t seed, std::string& error,
                                           const emu::DramConfig& dram = {},
                                           ProbeMode mode = ProbeMode::Compiled);
  DesignHarness(DesignHarness&&) noexcept = default;
  DesignHarness& operator=(DesignHarness&&) noexcept = default;
  /// Not copyable: the probe points into this harness's counters and stages.
  DesignHarness(const DesignHarness&) = delete;
  DesignHarness& operator=(const DesignHarness&) = delete;

  /// Holds reset active for its cycles (none when the design has no reset).
  void reset();
  /// One clock cycle.
  void step();
  /// Every source has sent all its bytes, the firmware has finished, no AXI4 burst is in
  /// flight and nothing has moved for `quiet` cycles.
  bool drained(uint64_t quiet) const {
    return cycle_ >= last_activity_ + quiet && pending_sources_ == 0 &&
           (!has_axi_ || axi_->quiet());
  }
  /// The run cannot go on: an AXI4 run error or a failed firmware script (AxiPorts::stopped).
  bool stopped() const { return has_axi_ && axi_->stopped(); }
  /// Why it stopped: the first AXI4 run error, else the firmware's message ("" when running).
  std::string stop_message() const;
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
  LoadedModel& model() { return *model_; }
  void set_stage_observer(StageObserver* o) { observer_ = o; }
  /// The valid/ready pairs sampled every cycle: the stages' (stage i is pair i), then each
  /// stream's that no stage has. After step(), bit i % 64 of valid_bits()[i / 64] and
  /// ready_bits()[i / 64] are pair i's values at the edge (ready 1 when the pair has none).
  struct Handshake {
    size_t valid = 0;
    std::optional<size_t> ready;
  };
  const std::vector<Handshake>& handshakes() const { return handshakes_; }
  const uint64_t* valid_bits() const { return valid_.data(); }
  const uint64_t* ready_bits() const { return ready_.data(); }
  /// Whether the generated probe runs (else the interpreter), and why not when it was asked for
  /// and does not ("" otherwise).
  bool probe_compiled() const { return probe_.has_value(); }
  const std::string& probe_error() const { return probe_error_; }
  /// Profiles every cycle from now on into `p` (HandshakeProfile.h; made for this harness), or
  /// nothing when null. Not part of the run state: save() and restore() leave it out.
  void set_profile(HandshakeProfile* p) { profile_ = p; }
  /// Values held on the model (a debugger's forces): apply() writes them and says whether it
  /// wrote any. Called after bud drives the inputs each cycle and again after the clock edge,
  /// so a forced input beats bud's own drive and a forced register holds across edges.
  class Override {
   public:
    virtual ~Override() = default;
    virtual bool apply(LoadedModel& model) = 0;
  };
  void set_override(Override* o) { override_ = o; }
  /// Cycles since anything last moved (a handshake, an AXI beat, a firmware step).
  uint64_t idle_cycles() const { return cycle_ - last_activity_; }
  /// Where cycle() lives, for per-cycle readers (triggers).
  const uint64_t* cycle_address() const { return &cycle_; }

  /// Appends the whole run state: the model's Verilated state, the streams (positions, what the
  /// sinks received), the back-pressure generator, counters, stages, AXI memories and firmware.
  /// Restoring it into a harness of the same design file and model and stepping is
  /// bit-identical to never having saved.
  void save(std::vector<uint8_t>& out) const;
  /// Hash of the run state: every model signal's value (not Verilator's serialisation, which
  /// holds a per-instance code) and the rest of what save() writes.
  uint64_t digest() const;
  /// Reads a state save() wrote at in[offset]; on failure false, `error` naming the byte offset,
  /// and nothing changed.
  bool restore(std::span<const uint8_t> in, size_t& offset, std::string& error);

 private:
  DesignHarness() = default;
  void save_state(std::vector<uint8_t>& out) const;  // what save() writes before the model
  void save_model(std::vector<uint8_t>& out) const;  // the model and the AXI ports
  void sample_interpreted();  // the handshakes and stage digests without the probe
  struct StreamPins {  // a stream's signals, read and written in place
    PortRef data, valid, ready;
    uint32_t ppm = 0;  // rate, per million cycles
  };
  struct PayloadRead {  // a stage payload signal: its value, or the XXH3 of its bytes
    PortRef ref;
    bool hashed = false;
    uint32_t bytes = 0;
  };
  struct HandshakeRefs {
    PortRef valid, ready;
    bool has_ready = false;
  };
  LoadedModel* model_ = nullptr;
  size_t clock_ = 0;
  PortRef clock_ref_;
  std::optional<size_t> reset_;
  bool reset_low_ = false;
  uint32_t reset_cycles_ = 0;
  emu::Rng rng_{1};
  std::vector<Stream> streams_;
  std::vector<Counter> counters_;
  std::vector<StageState> stages_;
  std::vector<StreamPins> stream_pins_;
  std::vector<Handshake> handshakes_;
  std::vector<HandshakeRefs> handshake_refs_;
  std::vector<uint32_t> stream_handshake_;         // per stream: its pair in handshakes_
  std::vector<std::vector<PayloadRead>> payload_;  // per stage
  std::vector<uint64_t> valid_, ready_;            // this cycle's bits, 64 pairs a word
  std::vector<size_t> expr_counters_;  // `when` counters the interpreter evaluates each cycle
  std::optional<CompiledProbe> probe_;
  std::string probe_error_;
  bool has_axi_ = false;  // any AXI4 memory or firmware
  size_t pending_sources_ = 0;  // sources that have not sent all their bytes
  std::optional<AxiPorts> axi_;  // always set by make()
  uint64_t cycle_ = 0, last_activity_ = 0;
  StageObserver* observer_ = nullptr;
  Override* override_ = nullptr;
  HandshakeProfile* profile_ = nullptr;
  class Signals;  // the counters' Sampler over the model
};

}  // namespace bud::design
