// A tiny second "design" behind bud::emu::Emulator: an LFSR-driven accumulator machine with a
// small RAM, a few signals and stage transactions. It proves the interface is not NPU-shaped and
// gives debugger/replay tests a fast, fully deterministic subject. Everything it does is a
// function of its config and of what the caller deposits, forces or writes.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "emu/core/Emulator.h"

namespace bud::emu {

/// What the mock runs.
struct MockConfig {
  uint32_t seed = 1;       ///< initial LFSR value (0 is replaced by 1: an LFSR must not be 0)
  uint64_t length = 1000;  ///< cycles until the "program" finishes
};

/// The mock design. Per cycle (rising edge): the 32-bit Galois LFSR advances; `acc` grows by
/// (lfsr & 0xff) | 1 (so it changes every cycle); regs[cycle % 4] += lfsr >> 16; one RAM byte is
/// XORed with the LFSR's low byte. When lfsr & 3 == 0 a Load transaction carries the 8 RAM bytes
/// around the written one; every 8th cycle a Gemm transaction carries `acc`. The run finishes
/// after `length` cycles. Counters: 0 = "cycles", 1 = "transactions". Stage ports: Load ("ram")
/// and Gemm ("acc"). load() runs a host job: its image is XORed into the RAM (addresses modulo
/// its size), its fingerprint into the LFSR, and the program lasts 64 cycles per command.
/// Faults: flip:SIGNAL[BIT]@CYCLE on a writable signal and memflip:ram:ADDR[BIT]@CYCLE, acting
/// before that cycle's edge.
class MockEmulator final : public Emulator {
 public:
  static constexpr uint32_t kRamBytes = 256;
  static constexpr int kNumCounters = 2;

  explicit MockEmulator(const MockConfig& config = {});

  const DesignInfo& describe() const override { return info_; }
  std::string load(const HostJob& job) override;
  uint64_t cycle() const override { return s_.cycle; }
  RunState state() const override { return s_.state; }
  StepResult step(uint64_t max_cycles) override;

  void save(std::vector<uint8_t>& out) const override;
  bool restore(std::span<const uint8_t> in, std::string& error) override;
  uint64_t digest() override;

  const std::vector<SignalInfo>& signals() const override { return signals_; }
  std::optional<SignalId> find_signal(std::string_view name) const override;
  SignalValue read_signal(SignalId id, uint32_t element = 0) const override;
  bool deposit_signal(SignalId id, uint32_t element, const SignalValue& v) override;
  bool force_signal(SignalId id, uint32_t element, const SignalValue& v) override;
  void release_signal(SignalId id, uint32_t element) override;

  const std::vector<MemoryInfo>& memories() const override { return memories_; }
  bool read_memory(std::string_view memory, uint64_t offset, std::span<uint8_t> out) const override;
  bool write_memory(std::string_view memory, uint64_t offset, std::span<const uint8_t> in) override;

  uint64_t counter(int index) const override;
  StageDigest stage_digest(Stage s) const override { return s_.digests[static_cast<int>(s)]; }
  void set_cycle_hook(CycleHook* hook) override { hook_ = hook; }
  void set_txn_observer(TxnObserver* observer) override { observer_ = observer; }
  std::string add_fault(const FaultSpec& fault) override;
  std::vector<FaultSpec> faults() const override { return faults_; }

 private:
  enum Sig : SignalId { kCycle = 0, kLfsr, kAcc, kRegs, kDone, kNumSignals };
  struct Force {
    SignalId id = 0;
    uint32_t element = 0;
    SignalValue value;
  };
  static constexpr size_t kMaxForces = 8;
  /// Everything that evolves; saved, restored and digested as a whole.
  struct State {
    uint64_t cycle = 0;
    uint32_t lfsr = 1;
    uint64_t acc = 0;
    std::array<uint16_t, 4> regs{};
    RunState state = RunState::Ready;
    std::array<StageDigest, kNumStages> digests{};
    std::array<uint64_t, kNumCounters> counters{};
    std::array<uint8_t, kRamBytes> ram{};
    uint32_t num_forces = 0;
    std::array<Force, kMaxForces> forces{};
  };

  void tick();
  void emit(Stage stage, uint32_t addr, std::span<const uint8_t> data);
  void write(SignalId id, uint32_t element, const SignalValue& v);
  void apply_faults();

  MockConfig config_;
  State s_;
  StageTxn txn_;
  CycleHook* hook_ = nullptr;
  TxnObserver* observer_ = nullptr;
  std::vector<SignalInfo> signals_;
  std::vector<MemoryInfo> memories_;
  DesignInfo info_;
  std::vector<FaultSpec> faults_;  ///< validated by add_fault(); act at their cycle
};

}  // namespace bud::emu
