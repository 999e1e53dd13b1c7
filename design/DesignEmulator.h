// A design file's model behind the emulator interface (emu/core/Emulator.h), so the debugger,
// triggers and checkpoints drive a user's Verilated accelerator exactly as they drive the NPU
// (docs/designs.md, "Debugging a design"). What the interface asks for, and where it comes from:
//
//   describe()   the design file's name, the model's revision, no ISA; its [[counter]]s; its
//                first five [[stage]]s as stage ports 0..4
//   load()       power-on state (restored, not re-made), then the design file's reset; the
//                job is ignored: a design's stimulus is its streams, memories and firmware
//   step()       DesignHarness::step per cycle; Finished when drained (DesignHarness::drained),
//                Error on an AXI run error or a failed firmware step, Hang after hang_cycles
//                without a handshake
//   signals      every port and internal signal of the model, by hierarchical name
//   memories     the [[memory]] regions, as the AXI4 masters see them
//   save         the harness (model, streams, DRAM timing, firmware) plus the stage digests
//
// Stage transactions are numbered per stage (StageTxn::cmd_id = the transaction's index) and
// carry the payload signals' bytes, so bisect's first divergence is a transaction of a stage.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "design/DesignFile.h"
#include "design/DesignHarness.h"
#include "design/LoadedModel.h"
#include "emu/core/Emulator.h"
#include "emu/core/EmulatorConfig.h"

namespace bud::design {

class DesignEmulator final : public emu::Emulator, DesignHarness::StageObserver,
                             DesignHarness::Override {
 public:
  /// Loads `library` (built by build_model for `spec`, of model revision `revision`) and binds
  /// it. `seed` drives the streams' back-pressure and the DRAM timing; `quiet_cycles` is how long
  /// nothing may move before a drained design counts as finished. nullptr and `error` when the
  /// model does not load or bind.
  static std::unique_ptr<DesignEmulator> make(const DesignSpec& spec, const std::string& library,
                                              const std::string& revision,
                                              const emu::EmulatorConfig& config, uint64_t seed,
                                              uint64_t quiet_cycles, std::string& error);
  ~DesignEmulator() override;

  const emu::DesignInfo& describe() const override { return info_; }
  std::string load(const emu::HostJob& job) override;
  uint64_t cycle() const override { return harness_->cycle(); }
  emu::RunState state() const override { return state_; }
  emu::StepResult step(uint64_t max_cycles) override;
  std::string status_report() const override;

  void save(std::vector<uint8_t>& out) const override;
  bool restore(std::span<const uint8_t> in, std::string& error) override;
  uint64_t digest() override;

  const std::vector<emu::SignalInfo>& signals() const override { return signals_; }
  std::optional<emu::SignalId> find_signal(std::string_view name) const override;
  emu::SignalValue read_signal(emu::SignalId id, uint32_t element = 0) const override;
  bool deposit_signal(emu::SignalId id, uint32_t element, const emu::SignalValue& v) override;
  bool force_signal(emu::SignalId id, uint32_t element, const emu::SignalValue& v) override;
  void release_signal(emu::SignalId id, uint32_t element) override;

  const std::vector<emu::MemoryInfo>& memories() const override { return memories_; }
  bool read_memory(std::string_view memory, uint64_t offset, std::span<uint8_t> out) const override;
  bool write_memory(std::string_view memory, uint64_t offset, std::span<const uint8_t> in) override;

  uint64_t counter(int index) const override;
  emu::StageDigest stage_digest(emu::Stage s) const override;
  void set_cycle_hook(emu::CycleHook* hook) override { hook_ = hook; }
  void set_txn_observer(emu::TxnObserver* observer) override { observer_ = observer; }

  const void* counter_address(int index) const override;
  const void* signal_address(emu::SignalId id, uint32_t element, uint32_t& bytes) const override;
  const uint64_t* cycle_address() const override { return harness_->cycle_address(); }
  std::vector<emu::EngineStatus> engines() const override;
  std::string wave_open(const std::string& path) override;
  void wave_close() override;
  bool wave_active() const override { return model_->tracing(); }

  /// The harness, for what only a design has (streams, AXI statistics, the firmware).
  const DesignHarness& harness() const { return *harness_; }

 private:
  DesignEmulator() = default;
  void on_stage(size_t stage, const DesignHarness::StageState& state,
                const LoadedModel& model) override;
  bool apply(LoadedModel& model) override;
  void update_state();
  void write_value(emu::SignalId id, uint32_t element, const emu::SignalValue& v);

  struct Force {
    emu::SignalId id = 0;
    uint32_t element = 0;
    emu::SignalValue value;
  };
  DesignSpec spec_;
  std::unique_ptr<LoadedModel> model_;
  std::optional<DesignHarness> harness_;
  emu::DesignInfo info_;
  std::vector<emu::SignalInfo> signals_;
  std::vector<emu::MemoryInfo> memories_;
  std::vector<uint8_t> power_on_;  // the harness state before reset, what load() restores
  uint64_t quiet_cycles_ = 0, hang_cycles_ = 0;
  emu::RunState state_ = emu::RunState::Ready;
  std::string message_;
  std::array<emu::StageDigest, emu::kNumStages> digests_{};
  std::vector<Force> forces_;
  emu::CycleHook* hook_ = nullptr;
  emu::TxnObserver* observer_ = nullptr;
};

}  // namespace bud::design
