// The host driver's side of the timeline: what the host did on the CSR port (setup writes, the
// doorbell, RING_HEAD polls, ring refills with their RING_TAIL write, the STATUS read and IRQ
// acknowledge after the interrupt) on the same cycle timebase as the engines' slices. One
// observer of the run driver: per cycle it reads the CSR port's valid bit (and the interrupt
// line) through pointers taken once; only on an access does it record, into storage reserved
// at attach (the host's accesses are bounded by the program's commands), never allocating.
// docs/profiling.md ("Timeline").
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "emu/core/Emulator.h"
#include "emu/drive/Driver.h"

namespace bud::profile {

/// What the host was doing in an interval of cycles.
enum class HostActivity : uint8_t {
  Setup,       ///< CSR writes before the doorbell (PMU, ring base/size, head reset, CTRL, tail)
  Doorbell,    ///< the DOORBELL write: the NPU starts fetching
  Poll,        ///< RING_HEAD reads (a run of polls that did not yet lead to a refill)
  Refill,      ///< the RING_TAIL write after writing new commands into the ring
  StatusRead,  ///< the STATUS read after the interrupt
  IrqAck,      ///< the IRQ write that acknowledges the interrupt
  Other,       ///< any other CSR access
  Count,
};
const char* host_activity_name(HostActivity a);  ///< "setup", "doorbell", "RING_HEAD poll", ...

/// One host activity: edge cycles `first`..`last` (inclusive: the access made in the cycle that
/// ends at edge t is recorded at t, as the engines' classes are), `count` accesses.
struct HostEvent {
  HostActivity kind = HostActivity::Other;
  uint64_t first = 0, last = 0;
  uint32_t count = 0;
  uint8_t addr = 0;    ///< CSR address of the last access
  uint32_t value = 0;  ///< write data of the last access (Refill: the new ring tail)
};

/// The host-track observer. Create with attach(), add to the run's driver, run.
class HostTrack final : public drive::Participant, public emu::CycleHook {
 public:
  /// Binds to the design's host CSR port and interrupt line (signals csr_valid, csr_write,
  /// csr_addr, csr_wdata, irq). `commands`: the program's length, which bounds the accesses the
  /// host makes (one refill per command at most). Null and `error` set when the design has no
  /// such port readable by address.
  static std::unique_ptr<HostTrack> attach(const emu::Emulator& emu, size_t commands,
                                           std::string& error);

  emu::CycleHook* cycle_hook() override { return this; }
  bool after_cycle(uint64_t cycle) override;

  /// In time order, non-overlapping.
  const std::vector<HostEvent>& events() const { return events_; }
  /// Edge cycles at which the interrupt line rose.
  const std::vector<uint64_t>& interrupts() const { return interrupts_; }
  /// Accesses not recorded because the reserved storage was full (0 for a host that behaves as
  /// the driver does; reported in the trace when not).
  uint64_t dropped() const { return dropped_; }
  /// Every CSR access the host made while the track watched (dropped ones included): the
  /// energy table's `host.csr_access` count.
  uint64_t accesses() const { return accesses_; }

 private:
  struct Port {
    const void* p = nullptr;
    uint32_t bytes = 0;
  };
  HostTrack() = default;
  void record(uint64_t cycle);

  Port valid_, write_, addr_, wdata_, irq_;
  bool doorbell_seen_ = false;
  bool irq_was_ = false;
  std::vector<HostEvent> events_;
  std::vector<uint64_t> interrupts_;
  uint64_t dropped_ = 0;
  uint64_t accesses_ = 0;
};

}  // namespace bud::profile
