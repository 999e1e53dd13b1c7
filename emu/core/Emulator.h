// The emulator interface: everything above emu/ (debugger, replay, bisect, CLI) reaches a design
// only through this class, so the same code drives the Verilated NPU, a mock or a tiny second
// design (tests/core/MockEmulator). Per-cycle paths (step) never allocate, lock or throw.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "emu/core/Fault.h"
#include "emu/core/HostDriver.h"
#include "emu/core/StageTxn.h"
#include "emu/core/StateSegments.h"

namespace bud::emu {

/// Where a run stands after a step.
enum class RunState : uint8_t {
  Ready,       ///< program loaded, nothing finished yet
  Finished,    ///< the program ran to its END
  Hang,        ///< the no-progress watchdog fired
  Assertion,   ///< a design assertion fired
  Error,       ///< the design reported an error (e.g. illegal command) or the memory model did
  CycleLimit,  ///< the run used up its cycle budget (--max-cycles) while still making progress;
               ///< set by the run driver (emu/run), never by an emulator's step()
};
/// "ready", "finished", "hang", "assertion", "error", "cycle_limit".
const char* run_state_name(RunState s);

/// Why step() returned: every reason that applied, as in rr's BreakStatus.
struct StepResult {
  uint64_t cycles = 0;        ///< cycles advanced by this call
  RunState state = RunState::Ready;
  bool reached_limit = false;  ///< stopped because the requested cycle count was used up
  bool hook_stop = false;      ///< a CycleHook asked to stop
  std::string message;         ///< for Hang / Assertion / Error: what happened, with the cycle
};

/// A value of up to 512 bits, little-endian 64-bit words.
struct SignalValue {
  uint32_t width = 0;
  std::array<uint64_t, 8> words{};
  uint64_t low() const { return words[0]; }
  bool operator==(const SignalValue& o) const { return width == o.width && words == o.words; }
};

enum class SignalKind : uint8_t { Counter, State, Port, Memory };

/// A signal the debugger may read, deposit and force, by hierarchical name.
struct SignalInfo {
  std::string name;        ///< e.g. "load.state", "pmu.gemm.stall_mem", "obs_acc_valid"
  uint32_t width = 0;      ///< bits per element
  uint32_t elements = 1;   ///< > 1 for arrays (index with name[i])
  SignalKind kind = SignalKind::State;
  bool writable = true;
  std::string description;
};
using SignalId = uint32_t;

/// A memory the debugger may examine (`x`) and deposit into.
struct MemoryInfo {
  std::string name;        ///< "dram", "inp", "wgt", "acc", "out"
  uint64_t size_bytes = 0;
  uint32_t word_bytes = 1; ///< natural access unit (scratchpad entry size)
};

/// What one engine (pipeline stage) is doing, for `info stages` and `where`.
struct EngineStatus {
  std::string name;                ///< "fetch", "load", "compute", "store"
  std::string state;               ///< design-specific state name, e.g. "run", "wait-token"
  std::optional<uint32_t> cmd_id;  ///< command being executed, if any
  uint32_t queue_level = 0;        ///< commands waiting in its input queue
  uint32_t queue_depth = 0;        ///< queue capacity (0: no queue)
  std::string detail;              ///< anything else worth a glance (tokens, pointers)
};

/// A design assertion as the design reported it on its assertion port (structured signals, not
/// log text): the first one that fired in this run.
struct AssertionReport {
  uint32_t code = 0;                 ///< the design's assertion code (its facts table)
  std::string name;                  ///< its name in that table, e.g. "token_underflow"
  Stage stage = Stage::Fetch;        ///< the engine it implicates
  uint32_t cmd = 0;                  ///< the command that engine held (fetch: its ring index)
  std::array<uint64_t, 2> values{};  ///< what the table says the assertion reports
  uint64_t cycle = 0;   ///< the cycle whose edge it fired at (StageTxn::cycle numbering)
  std::string message;  ///< one line, rendered from the table
};

/// A named control/status register.
struct CsrInfo {
  std::string name;
  uint32_t addr = 0;
};

/// What a design says about itself, so that code above emu/ sizes and names everything from the
/// design it runs (never from one design's compile-time tables). Together with signals(),
/// memories() and csrs() it is the whole description; it does not change after construction.
struct DesignInfo {
  std::string name;  ///< "npu", "npu16", "npu32", "mock"
  /// The model revision (hash of its RTL sources, Verilator version and flags; replay packets
  /// record it); empty for a design without one (the mock).
  std::string revision;
  /// The command set its programs are written in ("npu": docs/isa.md), so a run is checked
  /// against the golden model of that ISA; empty when the design runs no workload program.
  std::string isa;
  /// Counter names; position = the index counter() and counter_address() take. Names are the
  /// identity across builds (packets store them), positions are this build's layout.
  std::vector<std::string> counters;
  /// Name of each stage port, index = Stage; empty for a port the design does not drive.
  std::vector<std::string> stages;

  /// Index of a counter name, if the design has it.
  std::optional<int> find_counter(std::string_view counter) const {
    for (size_t i = 0; i < counters.size(); ++i)
      if (counters[i] == counter) return static_cast<int>(i);
    return std::nullopt;
  }
  int num_counters() const { return static_cast<int>(counters.size()); }
  /// The stage's name, or "" for a port the design does not drive.
  const std::string& stage(Stage s) const {
    static const std::string none;
    const auto i = static_cast<size_t>(s);
    return i < stages.size() ? stages[i] : none;
  }
};

/// Called after every cycle while installed; return true to stop the step. Used by breakpoints
/// and triggers. Implementations must not allocate or throw.
class CycleHook {
 public:
  virtual ~CycleHook() = default;
  virtual bool after_cycle(uint64_t cycle) = 0;
};

/// Receives every stage transaction as it happens (in addition to the running digests).
class TxnObserver {
 public:
  virtual ~TxnObserver() = default;
  virtual void on_txn(const StageTxn& txn) = 0;
};

/// An emulated design behind a stable interface.
class Emulator {
 public:
  virtual ~Emulator() = default;

  /// Design name ("npu", "mock"): describe().name.
  std::string design() const { return describe().name; }
  /// The design's description (counters, stage ports, ISA); the same object for the emulator's
  /// lifetime, so callers may keep references into it.
  virtual const DesignInfo& describe() const = 0;
  /// Resets the design and starts the host side on `job` (copied): the program's commands and
  /// initial memory image. Returns an error message, or empty on success.
  virtual std::string load(const HostJob& job) = 0;
  /// Text the design printed (e.g. its $display and $error output) since the last call, then
  /// forgotten. Per emulator: two emulators on one thread never see each other's text.
  virtual std::string take_messages() { return {}; }
  /// Several lines on what each engine is doing, for hang and cycle-limit reports (default:
  /// from engines()).
  virtual std::string status_report() const;
  /// Hash of one memory's contents (e.g. the outputs in "dram"); 0 if there is no such memory.
  /// The default reads it through read_memory().
  virtual uint64_t memory_digest(std::string_view memory) const;
  /// Cycles since reset (rising edges).
  virtual uint64_t cycle() const = 0;
  /// Current run state.
  virtual RunState state() const = 0;
  /// Advances up to `max_cycles` cycles. Stops early when the state leaves Ready or a hook asks.
  virtual StepResult step(uint64_t max_cycles) = 0;

  /// Appends the complete state (design, memories, memory-model queues, RNGs, host driver) to
  /// `out`. Restoring it and running is bit-identical to never having saved.
  virtual void save(std::vector<uint8_t>& out) const = 0;
  /// Replaces `out` with the same state save() would append, as segments (StateSegments), so a
  /// checkpointer can skip the ones whose version it has already seen. Concatenated, the segments
  /// are byte for byte what save() appends. The default is one segment of save()'s bytes with
  /// version 0 (always read); designs with large, mostly unchanged memories override it.
  virtual void save_segments(StateSegments& out) const;
  /// Restores a state produced by save() of the same design and model revision. On failure
  /// returns false, sets `error` (naming the byte offset) and leaves the state unchanged.
  virtual bool restore(std::span<const uint8_t> in, std::string& error) = 0;
  /// Hash of the whole architectural state (design registers and memories, DRAM contents).
  virtual uint64_t digest() = 0;

  virtual const std::vector<SignalInfo>& signals() const = 0;
  virtual std::optional<SignalId> find_signal(std::string_view name) const = 0;
  virtual SignalValue read_signal(SignalId id, uint32_t element = 0) const = 0;
  /// Writes a value once (the design may change it on the next edge).
  virtual bool deposit_signal(SignalId id, uint32_t element, const SignalValue& v) = 0;
  /// Holds a value until release_signal().
  virtual bool force_signal(SignalId id, uint32_t element, const SignalValue& v) = 0;
  virtual void release_signal(SignalId id, uint32_t element) = 0;

  virtual const std::vector<MemoryInfo>& memories() const = 0;
  virtual bool read_memory(std::string_view memory, uint64_t offset, std::span<uint8_t> out) const = 0;
  virtual bool write_memory(std::string_view memory, uint64_t offset,
                            std::span<const uint8_t> in) = 0;

  /// Live value of counter `index` (describe().counters names it), read without disturbing the
  /// design; 0 for an index the design does not have.
  virtual uint64_t counter(int index) const = 0;
  /// Running per-stage transaction digests since reset.
  virtual StageDigest stage_digest(Stage s) const = 0;

  virtual void set_cycle_hook(CycleHook* hook) = 0;
  virtual void set_txn_observer(TxnObserver* observer) = 0;

  /// Adds a fault to this run (validated against the design: unknown signal or memory, bit or
  /// address out of range). Returns an error message or empty. Faults are part of the saved
  /// state and act deterministically at their cycle.
  virtual std::string add_fault(const FaultSpec& /*fault*/) { return "fault injection not supported"; }
  virtual std::vector<FaultSpec> faults() const { return {}; }

  /// Where a value lives in memory, for per-cycle readers that must not pay a virtual call per
  /// read (conditions, triggers). Valid for the emulator's lifetime (restore() writes in place);
  /// nullptr when the design cannot offer it. `bytes` is how many little-endian bytes to read.
  virtual const void* counter_address(int /*index*/) const { return nullptr; }
  virtual const void* signal_address(SignalId /*id*/, uint32_t /*element*/, uint32_t& /*bytes*/) const {
    return nullptr;
  }
  virtual const uint64_t* cycle_address() const { return nullptr; }

  /// The assertion that stopped the run (state Assertion), read from the design's assertion
  /// port; nullopt otherwise or when the design has none.
  virtual std::optional<AssertionReport> assertion() const { return std::nullopt; }
  /// Engines and what they are doing (empty if the design has no such notion).
  virtual std::vector<EngineStatus> engines() const { return {}; }
  /// CSRs the host can read, and a side-effect-free read of one (nullopt: no such register).
  virtual std::vector<CsrInfo> csrs() const { return {}; }
  virtual std::optional<uint32_t> read_csr(uint32_t /*addr*/) { return std::nullopt; }
  /// Starts/stops writing every cycle to an FST waveform. Returns an error message or empty.
  virtual std::string wave_open(const std::string& /*path*/) { return "waveforms not supported"; }
  virtual void wave_close() {}
  virtual bool wave_active() const { return false; }
};

}  // namespace bud::emu
