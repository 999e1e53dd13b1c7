// The Verilated NPU behind the Emulator interface: owns the VerilatedContext, the model, the DRAM
// timing model and the host driver, and steps them cycle by cycle. Verilator types stay in the
// .cpp (pimpl), so nothing that includes this header sees a Verilated header.
#pragma once

#include <array>
#include <memory>
#include <string>

#include "emu/core/DramModel.h"
#include "emu/core/Emulator.h"
#include "emu/core/EmulatorConfig.h"
#include "emu/core/HostDriver.h"

namespace bud::emu {

/// The NPU's configuration is the common one (memory model, seed, watchdog, throttle).
using NpuConfig = EmulatorConfig;

/// The values driven on the NPU's input ports in one cycle. Benchmarks record them to replay a
/// run against the bare Verilated model (the physical speed limit of the model).
struct NpuInputs {
  uint8_t req_ready = 0, resp_valid = 0, resp_write = 0, resp_tag = 0;
  uint8_t csr_valid = 0, csr_write = 0, csr_addr = 0, throttle = 0;
  uint32_t csr_wdata = 0;
  std::array<uint8_t, 64> resp_rdata{};
};

/// Receives the inputs of every cycle (see NpuEmulator::set_input_recorder).
class InputRecorder {
 public:
  virtual ~InputRecorder() = default;
  virtual void on_inputs(const NpuInputs& in) = 0;
};

class NpuEmulator final : public Emulator {
 public:
  explicit NpuEmulator(const NpuConfig& config);
  ~NpuEmulator() override;
  NpuEmulator(const NpuEmulator&) = delete;
  NpuEmulator& operator=(const NpuEmulator&) = delete;

  /// Resets the design and memory model, and starts the host driver on `job` (copied). Returns
  /// an error message, or empty on success.
  std::string load(const HostJob& job) override;

  /// Counters from the PMU (names from the facts table, count checked against the model), the
  /// five stage ports, ISA "npu".
  const DesignInfo& describe() const override;
  std::string take_messages() override;
  std::string status_report() const override { return engine_report(); }
  uint64_t memory_digest(std::string_view memory) const override;
  uint64_t cycle() const override;
  RunState state() const override;
  StepResult step(uint64_t max_cycles) override;

  void save(std::vector<uint8_t>& out) const override;
  /// Segments: the head (header, scalars, model, DRAM model state without page contents; version
  /// 0), each stored DRAM page in place (versioned by the DRAM model's write tracking) and the
  /// tail (host driver, checksum; version 0). Costs the head plus the pages written since.
  void save_segments(StateSegments& out) const override;
  bool restore(std::span<const uint8_t> in, std::string& error) override;
  /// Recomputes the checksum of a state written by save() after its bytes were edited, so that
  /// tests and the restore fuzzer can hand restore() crafted states that pass the checksum (as a
  /// hostile packet can). False if the state's header does not frame its payload.
  static bool seal_state(std::span<uint8_t> state);
  uint64_t digest() override;

  const std::vector<SignalInfo>& signals() const override;
  std::optional<SignalId> find_signal(std::string_view name) const override;
  SignalValue read_signal(SignalId id, uint32_t element = 0) const override;
  bool deposit_signal(SignalId id, uint32_t element, const SignalValue& v) override;
  bool force_signal(SignalId id, uint32_t element, const SignalValue& v) override;
  void release_signal(SignalId id, uint32_t element) override;

  const std::vector<MemoryInfo>& memories() const override;
  bool read_memory(std::string_view memory, uint64_t offset,
                   std::span<uint8_t> out) const override;
  bool write_memory(std::string_view memory, uint64_t offset,
                    std::span<const uint8_t> in) override;

  uint64_t counter(int index) const override;
  StageDigest stage_digest(Stage s) const override;
  void set_cycle_hook(CycleHook* hook) override;
  void set_txn_observer(TxnObserver* observer) override;

  const void* counter_address(int index) const override;
  /// Counters the Verilated model's PMU array holds (its unpacked size, read from the model; 0
  /// if the array is not public). Equals isa::kNumCounters, the table's count.
  uint32_t model_counter_count() const;
  const void* signal_address(SignalId id, uint32_t element, uint32_t& bytes) const override;
  const uint64_t* cycle_address() const override;
  std::string add_fault(const FaultSpec& fault) override;
  std::vector<FaultSpec> faults() const override;
  std::optional<AssertionReport> assertion() const override;
  std::vector<EngineStatus> engines() const override;
  std::vector<CsrInfo> csrs() const override;
  std::optional<uint32_t> read_csr(uint32_t addr) override;
  std::string wave_open(const std::string& path) override { return trace_open(path); }
  void wave_close() override { trace_close(); }
  bool wave_active() const override { return tracing(); }

  const DramModel& dram() const;
  const HostDriver& host() const;
  const NpuConfig& config() const;
  /// END_CODE of the finished program.
  uint32_t end_code() const;
  /// One line per engine: state, current command, queue and token levels (for hang reports).
  std::string engine_report() const;

  /// Installs (or removes, with nullptr) a recorder of the input ports.
  void set_input_recorder(InputRecorder* recorder);

  /// Starts writing an FST waveform of every cycle from now on; empty string on success.
  std::string trace_open(const std::string& path);
  void trace_close();
  bool tracing() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace bud::emu
