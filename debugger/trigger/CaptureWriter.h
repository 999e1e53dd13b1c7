// Capture windows (the `capture pre N post M` action): a request waits until the run has passed
// its window, then the window is re-executed on a replica emulator restored from a history
// snapshot, writing an FST waveform and a compact event log (stage transactions and the trigger
// hits inside the window, counters that changed). The run being observed is never disturbed.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "debugger/trigger/TriggerHistory.h"
#include "debugger/trigger/TriggerTypes.h"
#include "emu/core/Emulator.h"

namespace bud::debugger {

/// One capture waiting for its window to pass.
struct CaptureRequest {
  size_t hit = 0;   ///< index into the engine's hits
  size_t file = 0;  ///< index into the hit's captures
  int trigger_id = 0;
  uint64_t hit_cycle = 0;
  uint64_t pre = 0, post = 0;
  TriggerHistory::Snapshot from;  ///< pinned snapshot at or before the window start
};

class CaptureWriter {
 public:
  /// `config` (make_replica, open_output) and `rx` outlive the writer.
  CaptureWriter(const TriggerEngineConfig& config, Reexecutor& rx) : config_(config), rx_(rx) {}

  /// Queues a capture; its window closes at hit + post.
  void request(CaptureRequest req);
  /// The earliest cycle at which a queued window closes (UINT64_MAX: none).
  uint64_t next_due() const { return next_due_; }
  /// Writes the captures whose window has closed by `now` (every one when `all`), into their
  /// CaptureFile in `hits`.
  void service(uint64_t now, bool all, std::vector<TriggerHit>& hits);

 private:
  void materialize(CaptureRequest& req, std::vector<TriggerHit>& hits);

  const TriggerEngineConfig& config_;
  Reexecutor& rx_;
  std::vector<CaptureRequest> queue_;
  uint64_t next_due_ = UINT64_MAX;
  std::unique_ptr<emu::Emulator> replica_;
};

}  // namespace bud::debugger
