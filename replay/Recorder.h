// Records a run into a replay packet as a participant of the run's driver (emu/drive): it asks for
// a pause every `digest_interval` cycles and writes a state digest there, and at every
// `checkpoint_interval` a Window record (digests, cumulative per-stage transaction count and hash
// from Emulator::stage_digest(), PMU counters) followed by a checkpoint. It needs no per-cycle
// hook, so it observes a run that others (triggers, checks) drive at the same time: the run is
// simulated once. It sees only settled pauses, so a run that goes back in time (a trigger hit
// found late) never leaves records past the cycle it went back to.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "emu/core/Emulator.h"
#include "emu/drive/Driver.h"
#include "emu/drive/Intervention.h"
#include "emu/run/RunJob.h"
#include "replay/PacketRun.h"
#include "replay/PacketWriter.h"

namespace bud::replay {

/// Default cycles between state digests and between checkpoints (docs/performance.md).
inline constexpr uint64_t kDefaultDigestInterval = 32768;
inline constexpr uint64_t kDefaultCheckpointInterval = 262144;

struct RecordConfig {
  uint64_t digest_interval = kDefaultDigestInterval;          ///< cycles, > 0
  uint64_t checkpoint_interval = kDefaultCheckpointInterval;  ///< cycles, a multiple of the above
  int zstd_level = 3;
  /// Test hook: raise SIGKILL when the recording reaches this cycle (BUD_TEST_KILL_AT_CYCLE).
  std::optional<uint64_t> kill_at_cycle;
  /// Called about every 2^20 cycles with the current cycle (progress display only).
  std::function<void(uint64_t)> progress;

  /// Empty when usable, else one line naming the bad option.
  std::string validate() const;
  /// Reads BUD_TEST_KILL_AT_CYCLE into kill_at_cycle.
  void read_environment();
};

/// What a recording wrote.
struct RecordSummary {
  std::string path;
  uint64_t bytes = 0;
  uint64_t cycles = 0;  ///< cycles covered
  uint64_t checkpoints = 0;
  uint64_t windows = 0;
  uint64_t digests = 0;
  uint64_t state_bytes = 0;      ///< raw checkpoint state offered
  uint64_t new_chunk_bytes = 0;  ///< raw bytes stored after dedupe (before zstd)
  SizeBreakdown breakdown{};
};

/// Writes one packet for one emulator. Use: begin(), then drive the run with the recorder added
/// to the driver (or call run()), then end().
class Recorder final : public drive::Participant {
 public:
  Recorder(PacketWriter& writer, emu::Emulator& emu, RecordConfig config);

  /// Writes the same packet to `writer` too (before begin(); not owned): one run recorded into
  /// several files, e.g. a trigger's `record` action beside `--record`.
  void add_target(PacketWriter& writer);
  /// Writes the header, the stimulus (encode_job), the annotations and a checkpoint of the
  /// current state.
  bool begin(const pb::Header& header, std::span<const uint8_t> stimulus,
             const std::vector<std::string>& annotations);
  /// Runs until cycle `limit` or until the run leaves the Ready state, on a driver of its own.
  bool run(uint64_t limit);

  // drive::Participant: a pause at every digest point.
  uint64_t next_pause(uint64_t now) const override;
  drive::PauseAction on_pause(uint64_t cycle) override;
  std::string stop_detail() const override { return error_; }
  /// Writes an intervention the recorded run will see (before driving past its cycle), so
  /// replay applies it too.
  bool write_intervention(const drive::Intervention& iv);
  /// Adds a note to one target only (between begin() and end()).
  bool annotate(PacketWriter& writer, uint64_t cycle, const std::string& text);
  /// Closes the last window; writes the symptom and result (when `report` is given), the index
  /// and the trailer. `stopped`: the recording ends before the run does; `prefix_symptom` is
  /// then what the golden check of the recorded cycles found (replay::PrefixChecker).
  bool end(const run::RunReport* report, bool stopped,
           const std::optional<pb::Symptom>& prefix_symptom = std::nullopt);

  const std::string& error() const { return error_; }
  RecordSummary summary() const;

 private:
  template <class F>
  bool to_all(F&& write);
  void add_digest_point();
  bool close_window();
  bool write_checkpoint(uint64_t cycle);

  PacketWriter& writer_;  ///< the primary target (summary())
  emu::Emulator& emu_;
  RecordConfig config_;
  std::string error_;
  pb::Window window_;
  uint32_t windows_ = 0;
  uint64_t checkpoints_ = 0;
  uint64_t digests_ = 0;
  uint64_t start_cycle_ = 0;
  uint64_t next_progress_ = 0;
  std::vector<uint8_t> state_;
  std::vector<PacketWriter*> targets_;  ///< every file written, the primary first
};

/// What record_run() produced.
struct RecordOutcome {
  run::RunReport report;
  RecordSummary summary;
  std::string error;  ///< non-empty: the packet could not be written or the run not started
};

/// Runs `prepared` (as described by `spec`) on a fresh emulator of the spec's design and records
/// it to `path`.
RecordOutcome record_run(const std::string& path, const RunSpec& spec,
                         const run::PreparedRun& prepared, const RecordConfig& config);

}  // namespace bud::replay
