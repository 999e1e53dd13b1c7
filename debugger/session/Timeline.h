// Checkpoints along one execution and travel to any cycle of it: restore the nearest earlier
// checkpoint, then re-execute deterministically (re-applying the user's interventions at their
// cycles). Automatic checkpoints every `interval` cycles live in a bounded memory budget; when
// the budget is exceeded every other automatic checkpoint is dropped and the interval doubles, so
// a jump re-executes at most one (current) interval. Checkpoints are emulator states
// (Emulator::save_segments) cut into chunks that are shared between checkpoints and
// zstd-compressed once: successive checkpoints mostly differ in a few DRAM pages and scratchpad
// entries. A versioned segment (a DRAM page) whose version has not changed since the previous
// checkpoint reuses its chunk without being read, so a checkpoint costs only what changed plus
// the small unversioned segments (header, design registers and scratchpads), which are cut into
// content-defined chunks.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "emu/core/Emulator.h"
#include "emu/drive/Intervention.h"

struct ZSTD_CCtx_s;

namespace bud::debugger {

/// A change the user made to the design's state (the run's intervention log, emu/drive).
using Intervention = drive::Intervention;

struct TimelineConfig {
  /// Cycles between automatic checkpoints; 0 = automatic: one cycle per 8 bytes of saved state,
  /// as a power of two in [65,536, 1,048,576], so that taking checkpoints costs a few percent of
  /// simulating whatever the design's size (a checkpoint's cost grows with its bytes).
  uint64_t interval = 0;
  uint64_t memory_budget = 512ull << 20;   ///< bytes for automatic checkpoints
  /// zstd level. Negative levels search matches faster; with `entropy_literals` they still
  /// Huffman-code literals, which is where checkpoint data compresses (see Timeline.cpp).
  int compression_level = -5;
  bool entropy_literals = true;
};

struct CheckpointInfo {
  std::string name;        ///< empty for automatic ones
  uint64_t cycle = 0;
  size_t bytes = 0;        ///< compressed bytes of the chunks it added (shared ones not counted)
  size_t raw_bytes = 0;    ///< uncompressed state size
};

/// The one way back in time. As a participant of a run it takes the automatic checkpoints (a
/// pause on the interval grid); as the driver's rewinder it seeks back, re-applying the log set
/// with set_log().
class Timeline final : public drive::Participant, public drive::Rewinder {
 public:
  Timeline(emu::Emulator& emu, TimelineConfig config);

  /// The intervention log re-applied by rewind_to() (not owned; null: none).
  void set_log(const std::vector<Intervention>* log) { log_ = log; }
  // drive::Participant: automatic checkpoints.
  uint64_t next_pause(uint64_t now) const override;
  drive::PauseAction on_pause(uint64_t cycle) override;
  // drive::Rewinder
  std::string rewind_to(uint64_t cycle) override;

  /// The automatic interval for a state of `state_bytes` (see TimelineConfig::interval).
  static uint64_t auto_interval(size_t state_bytes);

  const TimelineConfig& config() const { return config_; }
  /// Current automatic interval (grows when the budget forces thinning).
  uint64_t interval() const { return interval_; }
  void set_interval(uint64_t cycles);

  /// Forgets everything and takes an automatic checkpoint of the current state.
  void reset();
  /// Takes an automatic checkpoint if the current cycle is on the interval grid and none exists
  /// there yet. Cheap when there is nothing to do. The grid is interval multiples.
  void maybe_checkpoint();
  /// Next cycle (> now) at which maybe_checkpoint() would take one.
  uint64_t next_checkpoint_cycle() const;

  /// Named checkpoints (kept until deleted, outside the automatic budget).
  void save_named(const std::string& name);
  bool has_named(const std::string& name) const;
  std::optional<uint64_t> named_cycle(const std::string& name) const;
  bool remove_named(const std::string& name);
  /// Restores a named checkpoint exactly (no re-execution). Error text on failure.
  std::string restore_named(const std::string& name);

  /// Moves the emulator to `cycle` (backward or forward): restores the nearest checkpoint at or
  /// before it and re-executes, re-applying `interventions`. No breakpoints are evaluated.
  /// Returns an error message (state unchanged) or empty.
  std::string seek(uint64_t cycle, const std::vector<Intervention>& interventions);
  /// Restores the latest checkpoint at or before `cycle` without re-executing; returns its
  /// cycle, or nullopt if there is none. Used by reverse-continue to scan windows.
  std::optional<uint64_t> restore_at_or_before(uint64_t cycle, std::string& error);
  /// The state of the latest checkpoint at or before `cycle` (of this execution), without
  /// touching the emulator: its cycle, or nullopt and `error`.
  std::optional<uint64_t> state_at_or_before(uint64_t cycle, std::vector<uint8_t>& state,
                                             std::string& error) const;
  /// Cycles of the automatic and named checkpoints, ascending, strictly before `cycle`.
  std::vector<uint64_t> checkpoint_cycles_before(uint64_t cycle) const;

  /// Drops every automatic checkpoint after `cycle` (the execution diverged from what they
  /// recorded); named ones after it are kept for `restore NAME` but leave the timeline.
  void truncate_after(uint64_t cycle);

  std::vector<CheckpointInfo> list() const;
  size_t bytes() const;          ///< compressed bytes held (every distinct chunk once)
  size_t count() const;
  /// Cycles re-executed by the last seek().
  uint64_t last_resimulated() const { return last_resimulated_; }

  /// How a run_to() ended.
  struct RunTo {
    std::string error;    ///< empty unless the run failed or ended before `target`
    bool halted = false;  ///< `with` halted the run early (not an error)
  };
  /// Drives the emulator from its cycle to `target` (taking automatic checkpoints), applying
  /// interventions whose cycle falls in [now, target]. `with` (optional) takes part in the run
  /// (e.g. breakpoints or a checker) and may halt it early.
  RunTo run_to(uint64_t target, const std::vector<Intervention>& interventions,
               drive::Participant* with = nullptr);

 private:
  /// A zstd-compressed piece of a state, shared by every checkpoint that contains it.
  struct Chunk {
    std::vector<uint8_t> zstd;
    uint32_t raw_size = 0;
  };
  /// The chunk a versioned segment was stored as, while a checkpoint holds it.
  struct SegmentChunk {
    uint64_t version = 0;
    std::weak_ptr<const Chunk> chunk;
  };
  struct CctxFree {
    void operator()(ZSTD_CCtx_s* c) const;
  };
  struct Checkpoint {
    uint64_t cycle = 0;
    size_t raw_bytes = 0;
    size_t new_bytes = 0;  ///< compressed bytes of chunks first stored by this checkpoint
    /// A state of the current execution (always, for automatic ones). A named checkpoint after
    /// a cycle where the user changed the past is not: `restore NAME` still restores it, but
    /// goto and reverse execution do not start from it.
    bool on_timeline = true;
    std::vector<std::shared_ptr<const Chunk>> chunks;
  };
  Checkpoint capture();
  /// The stored chunk holding `piece` (found by content, or compressed and added).
  std::shared_ptr<const Chunk> store_piece(std::span<const uint8_t> piece, Checkpoint& c);
  std::string restore(const Checkpoint& c);
  /// The uncompressed state of `c` into `raw`. Error text or empty.
  std::string state_of(const Checkpoint& c, std::vector<uint8_t>& raw) const;
  /// The latest checkpoint of this execution at or before `cycle` (null: none).
  const Checkpoint* latest_at_or_before(uint64_t cycle) const;
  void enforce_budget();
  void forget_expired_chunks();

  emu::Emulator& emu_;
  const std::vector<Intervention>* log_ = nullptr;
  TimelineConfig config_;
  uint64_t interval_;
  std::map<uint64_t, Checkpoint> auto_;
  std::map<std::string, Checkpoint> named_;
  /// Content hash -> chunk, while any checkpoint holds it. Lookups only; never iterated in an
  /// order that matters.
  std::unordered_map<uint64_t, std::weak_ptr<const Chunk>> store_;
  std::shared_ptr<size_t> store_bytes_ = std::make_shared<size_t>(0);
  /// Segment key -> its chunk at its last seen version (versioned segments of up to
  /// replay::kChunkMax bytes, stored as one chunk each).
  std::unordered_map<uint64_t, SegmentChunk> by_segment_;
  emu::StateSegments segments_;  ///< reused by capture(), so its buffers keep their capacity
  std::unique_ptr<ZSTD_CCtx_s, CctxFree> cctx_;
  uint64_t last_resimulated_ = 0;
};

}  // namespace bud::debugger
