// Exact attribution of the PMU's counters to the commands each engine held: one observer of the
// run driver (a drive::Participant). Per cycle it only compares which command each of the NPU's
// four command holders (fetch, load, compute, store) holds, through signal pointers taken once;
// only when a held command changes does it read the PMU and hand the counters' growth since the
// holder's previous change to the command held during that interval. docs/profiling.md
// ("Attribution") states the rules, including the edge alignment and the idle intervals.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "emu/core/Emulator.h"
#include "emu/drive/Driver.h"
#include "emu/isa/Isa.h"
#include "emu/workload/Lowering.h"

namespace bud::profile {

/// What the profiler keeps per command: the growth of each engine's cycle classes and of the
/// counters only one holder moves, split by whether the holder held the command during the
/// interval (`held`) or held nothing and the interval went to the next command it took (`empty`).
enum class Slot : uint8_t {
  // 0 .. kNumEngines * kNumClasses - 1: <engine>.<class>, index isa::class_counter(e, c)
  MacsIssued = isa::kNumEngines * isa::kNumClasses,
  MacsUseful,
  DramWrBytes,
  BankConflictsInp,  ///< load's scratchpad writes that lost a bank (INP, WGT, ACC: load writes)
  BankConflictsWgt,
  BankConflictsAcc,
  BankConflictsOut,  ///< store's OUT reads that lost a bank to POST's writes
  // Scratchpad entry accesses (energy, docs/power.md), each with the holder that makes them:
  // INP/WGT reads, ACC reads and writes, OUT writes are compute's; INP/WGT writes load's; OUT
  // reads store's. ACC is also written by LOADs to ACC: those go to the compute command held
  // meanwhile (the counter has one bit per cycle and cannot tell the two writers apart).
  SpadInpRd,
  SpadInpWr,
  SpadWgtRd,
  SpadWgtWr,
  SpadAccRd,
  SpadAccWr,
  SpadOutRd,
  SpadOutWr,
  // Commands retired, with the holder that retires them (SYNC, END: fetch).
  RetiredLoad,
  RetiredGemm,
  RetiredPost,
  RetiredStore,
  RetiredSync,
  RetiredEnd,
  Count,
};
inline constexpr int kNumSlots = static_cast<int>(Slot::Count);
inline constexpr int class_slot(isa::Engine e, isa::CycleClass c) {
  return isa::class_counter(e, c);
}
/// Counter growth per slot.
using SlotCounts = std::array<uint64_t, kNumSlots>;

/// The physical units that hold one command at a time. Gemm and post share Compute.
enum class Holder : uint8_t { Fetch, Load, Compute, Store, Count };
inline constexpr int kNumHolders = static_cast<int>(Holder::Count);
/// "fetch", "load", "compute", "store".
const char* holder_name(Holder h);
/// The holder whose commands an engine's cycles are attributed to.
Holder holder_of(isa::Engine e);
/// The holder that executes a command of this opcode (SYNC, END: fetch, which retires them).
Holder holder_of(isa::Opcode op);

/// One command's share of the run.
struct CommandCounts {
  SlotCounts held{};   ///< while its holder held it
  SlotCounts empty{};  ///< while its holder held nothing, before taking it
  /// Edge cycles (hook numbering: the edge that made the change) at which its engine holder
  /// took and released it, and fetch dispatched it; UINT64_MAX when it did not happen.
  uint64_t taken = UINT64_MAX, released = UINT64_MAX, dispatched = UINT64_MAX;
  uint64_t total(int slot) const { return held[slot] + empty[slot]; }
};

/// The attribution observer. Create with attach(), add to the run's driver, run, then
/// finish() once the driver has stopped. It attributes a forward run: a driver that goes back in
/// time (a Rewinder) would count the re-executed cycles' growth again, so `bud profile` drives
/// without one.
class Attribution final : public drive::Participant, public emu::CycleHook {
 public:
  /// Binds to `emu` (which must run the NPU ISA and expose the holders' signals and the PMU
  /// counters by address) for a run of `program`. Null and `error` set when it cannot.
  static std::unique_ptr<Attribution> attach(emu::Emulator& emu, const workload::Program& program,
                                             std::string& error);

  emu::CycleHook* cycle_hook() override { return this; }
  void on_start(uint64_t cycle) override;
  bool after_cycle(uint64_t cycle) override;

  /// Attributes what is left after the last change (the run has stopped): to the command a
  /// holder still holds, else to the tail bucket. Reads the final counters.
  void finish();

  /// Per command (index = command id), then one tail bucket (index commands().size() - 1):
  /// cycles after each holder's last command, and anything held with an id outside the program.
  const std::vector<CommandCounts>& commands() const { return counts_; }
  size_t tail_index() const { return counts_.size() - 1; }
  /// The PMU's value of each slot's counter at the end (finish()).
  const SlotCounts& totals() const { return totals_; }
  /// MAC slots per cycle of the array, read from the design (CONFIG CSR: rows x cols).
  uint32_t array_macs() const { return array_macs_; }
  /// Holder changes seen (each read the PMU once).
  uint64_t changes() const { return changes_; }

 private:
  struct Probe {
    const void* state = nullptr;  ///< holds a command when non-zero
    uint32_t state_bytes = 0;
    const void* id = nullptr;  ///< the command id held
    uint32_t id_bytes = 0;
  };
  struct Tracked {
    int slot = 0;
    const void* counter = nullptr;
  };
  static constexpr uint32_t kNone = UINT32_MAX;

  Attribution() = default;
  uint32_t held(const Probe& p) const;
  void attribute(int h, uint32_t old_cmd, uint32_t new_cmd, uint64_t cycle, bool final);

  std::array<Probe, kNumHolders> probes_{};
  std::array<std::vector<Tracked>, kNumHolders> tracked_;  ///< counters each holder owns
  std::array<SlotCounts, kNumHolders> last_{};             ///< counter values at its last change
  std::array<uint32_t, kNumHolders> current_{};            ///< command held now (kNone)
  std::vector<CommandCounts> counts_;
  SlotCounts totals_{};
  std::array<const void*, kNumSlots> slot_counter_{};
  uint32_t array_macs_ = 0;
  uint64_t changes_ = 0;
};

}  // namespace bud::profile
