#include "debugger/session/Timeline.h"

// For ZSTD_c_literalCompressionMode (see make_cctx); used only when the runtime library is the
// version these headers describe.
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include <algorithm>
#include <cstring>

#include "replay/Chunker.h"
#include "replay/Framing.h"

namespace bud::debugger {

Timeline::Timeline(emu::Emulator& emu, TimelineConfig config)
    : emu_(emu), config_(config), interval_(config.interval ? config.interval : 65536) {}

uint64_t Timeline::auto_interval(size_t state_bytes) {
  uint64_t want = state_bytes / 8;
  uint64_t p = 65536;
  while (p * 2 <= want && p < (1u << 20)) p *= 2;
  return p;
}

void Timeline::set_interval(uint64_t cycles) {
  interval_ = std::max<uint64_t>(1, cycles);
  config_.interval = interval_;
}

void Timeline::CctxFree::operator()(ZSTD_CCtx_s* c) const { ZSTD_freeCCtx(c); }

namespace {

// Checkpoints are mostly int8 tensors and scratchpad words: long matches are rare, skewed byte
// values are not. A negative level (fast match search) that still entropy-codes its literals
// compresses this data as well as level 1 in about half the time (CheckpointCost.test.cpp). zstd
// turns literal compression off at negative levels unless told otherwise, and the parameter that
// tells it is experimental: it is set only when the runtime library is the version compiled
// against; otherwise the level falls back to 1.
ZSTD_CCtx* make_cctx(const TimelineConfig& config) {
  ZSTD_CCtx* c = ZSTD_createCCtx();
  if (!c) return nullptr;
  int level = config.compression_level;
  if (level < 0 && config.entropy_literals) {
#if ZSTD_VERSION_NUMBER >= 10501  // ZSTD_ps_enable
    const bool same_library = ZSTD_versionNumber() == ZSTD_VERSION_NUMBER;
    if (!same_library || ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_literalCompressionMode,
                                                             ZSTD_ps_enable))) {
      level = 1;
    }
#else
    level = 1;
#endif
  }
  ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
  return c;
}

}  // namespace

std::shared_ptr<const Timeline::Chunk> Timeline::store_piece(std::span<const uint8_t> piece,
                                                             Checkpoint& c) {
  const uint64_t key = replay::hash64(piece) ^ (static_cast<uint64_t>(piece.size()) << 48);
  if (auto it = store_.find(key); it != store_.end()) {
    if (auto existing = it->second.lock(); existing && existing->raw_size == piece.size())
      return existing;
  }
  if (!cctx_) cctx_.reset(make_cctx(config_));
  auto chunk = std::make_unique<Chunk>();
  chunk->raw_size = static_cast<uint32_t>(piece.size());
  chunk->zstd.resize(ZSTD_compressBound(piece.size()));
  const size_t n = cctx_ ? ZSTD_compress2(cctx_.get(), chunk->zstd.data(), chunk->zstd.size(),
                                          piece.data(), piece.size())
                         : ZSTD_compress(chunk->zstd.data(), chunk->zstd.size(), piece.data(),
                                         piece.size(), 1);
  if (ZSTD_isError(n)) {
    chunk->zstd.assign(piece.begin(), piece.end());
    chunk->raw_size = 0;  // stored raw
  } else {
    chunk->zstd.resize(n);
    chunk->zstd.shrink_to_fit();
  }
  // The store's byte count follows the chunk's life.
  const size_t bytes = chunk->zstd.size();
  *store_bytes_ += bytes;
  std::shared_ptr<const Chunk> shared(chunk.release(),
                                      [counter = store_bytes_, bytes](const Chunk* p) {
                                        *counter -= bytes;
                                        delete p;
                                      });
  c.new_bytes += bytes;
  store_[key] = shared;
  return shared;
}

Timeline::Checkpoint Timeline::capture() {
  emu_.save_segments(segments_);
  Checkpoint c;
  c.cycle = emu_.cycle();
  c.raw_bytes = segments_.size_bytes();
  c.chunks.reserve(segments_.count() + 64);
  for (size_t i = 0; i < segments_.count(); ++i) {
    const auto seg = segments_.at(i);
    if (seg.version != 0 && seg.bytes.size() <= replay::kChunkMax) {
      // A versioned segment seen at this version: its chunk, without reading its bytes.
      SegmentChunk& known = by_segment_[seg.key];
      if (known.version == seg.version) {
        if (auto chunk = known.chunk.lock()) {
          c.chunks.push_back(std::move(chunk));
          continue;
        }
      }
      auto chunk = store_piece(seg.bytes, c);
      known = {seg.version, chunk};
      c.chunks.push_back(std::move(chunk));
      continue;
    }
    for (const auto& sp : replay::split_chunks(seg.bytes))
      c.chunks.push_back(store_piece(seg.bytes.subspan(sp.offset, sp.size), c));
  }
  return c;
}

std::string Timeline::state_of(const Checkpoint& c, std::vector<uint8_t>& raw) const {
  raw.clear();
  raw.reserve(c.raw_bytes);
  for (const auto& chunk : c.chunks) {
    if (chunk->raw_size == 0) {
      raw.insert(raw.end(), chunk->zstd.begin(), chunk->zstd.end());
      continue;
    }
    const size_t at = raw.size();
    raw.resize(at + chunk->raw_size);
    const size_t n = ZSTD_decompress(raw.data() + at, chunk->raw_size, chunk->zstd.data(),
                                     chunk->zstd.size());
    if (ZSTD_isError(n) || n != chunk->raw_size)
      return "checkpoint at cycle " + std::to_string(c.cycle) + " is corrupt";
  }
  return {};
}

std::string Timeline::restore(const Checkpoint& c) {
  std::vector<uint8_t> raw;
  if (auto e = state_of(c, raw); !e.empty()) return e;
  std::string error;
  if (!emu_.restore(raw, error)) return error;
  return {};
}

const Timeline::Checkpoint* Timeline::latest_at_or_before(uint64_t cycle) const {
  const Checkpoint* best = nullptr;
  auto it = auto_.upper_bound(cycle);
  if (it != auto_.begin()) best = &std::prev(it)->second;
  for (const auto& [name, c] : named_)
    if (c.on_timeline && c.cycle <= cycle && (!best || c.cycle > best->cycle)) best = &c;
  return best;
}

std::optional<uint64_t> Timeline::state_at_or_before(uint64_t cycle, std::vector<uint8_t>& state,
                                                     std::string& error) const {
  const Checkpoint* best = latest_at_or_before(cycle);
  if (!best) {
    error = "no checkpoint at or before cycle " + std::to_string(cycle);
    return std::nullopt;
  }
  error = state_of(*best, state);
  if (!error.empty()) return std::nullopt;
  return best->cycle;
}

void Timeline::forget_expired_chunks() {
  for (auto it = store_.begin(); it != store_.end();) {
    if (it->second.expired()) it = store_.erase(it);
    else ++it;
  }
  for (auto it = by_segment_.begin(); it != by_segment_.end();) {
    if (it->second.chunk.expired()) it = by_segment_.erase(it);
    else ++it;
  }
}

void Timeline::reset() {
  auto_.clear();
  forget_expired_chunks();
  auto c = capture();
  interval_ = config_.interval ? config_.interval : auto_interval(c.raw_bytes);
  auto_.emplace(c.cycle, std::move(c));
}

uint64_t Timeline::next_checkpoint_cycle() const {
  const uint64_t now = emu_.cycle();
  return (now / interval_ + 1) * interval_;
}

void Timeline::maybe_checkpoint() {
  const uint64_t now = emu_.cycle();
  if (now % interval_ != 0 || auto_.count(now)) return;
  auto c = capture();
  auto_.emplace(now, std::move(c));
  enforce_budget();
}

void Timeline::enforce_budget() {
  while (*store_bytes_ > config_.memory_budget && auto_.size() > 2) {
    // Double the interval and keep only checkpoints on the new grid (cycle 0 always stays).
    interval_ *= 2;
    for (auto it = auto_.begin(); it != auto_.end();) {
      if (it->first != 0 && it->first % interval_ != 0) it = auto_.erase(it);
      else ++it;
    }
    forget_expired_chunks();
  }
}

void Timeline::save_named(const std::string& name) { named_[name] = capture(); }
bool Timeline::has_named(const std::string& name) const { return named_.count(name) != 0; }
std::optional<uint64_t> Timeline::named_cycle(const std::string& name) const {
  auto it = named_.find(name);
  if (it == named_.end()) return std::nullopt;
  return it->second.cycle;
}
bool Timeline::remove_named(const std::string& name) {
  const bool removed = named_.erase(name) != 0;
  forget_expired_chunks();
  return removed;
}

std::string Timeline::restore_named(const std::string& name) {
  auto it = named_.find(name);
  if (it == named_.end()) return "no checkpoint named '" + name + "'";
  return restore(it->second);
}

std::optional<uint64_t> Timeline::restore_at_or_before(uint64_t cycle, std::string& error) {
  // Best source: the latest automatic or named checkpoint at or before `cycle`.
  const Checkpoint* best = latest_at_or_before(cycle);
  if (!best) {
    error = "no checkpoint at or before cycle " + std::to_string(cycle);
    return std::nullopt;
  }
  error = restore(*best);
  if (!error.empty()) return std::nullopt;
  return best->cycle;
}

std::vector<uint64_t> Timeline::checkpoint_cycles_before(uint64_t cycle) const {
  std::vector<uint64_t> out;
  for (const auto& [c, cp] : auto_)
    if (c < cycle) out.push_back(c);
  for (const auto& [name, cp] : named_)
    if (cp.on_timeline && cp.cycle < cycle) out.push_back(cp.cycle);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

uint64_t Timeline::next_pause(uint64_t) const { return next_checkpoint_cycle(); }

drive::PauseAction Timeline::on_pause(uint64_t) {
  maybe_checkpoint();
  return drive::PauseAction::Continue;
}

std::string Timeline::rewind_to(uint64_t cycle) {
  static const std::vector<Intervention> kNone;
  return seek(cycle, log_ ? *log_ : kNone);
}

Timeline::RunTo Timeline::run_to(uint64_t target, const std::vector<Intervention>& interventions,
                                 drive::Participant* with) {
  drive::Driver driver(emu_);
  drive::InterventionActor actor(emu_, interventions);
  driver.add(actor);
  driver.add(*this);  // keep automatic checkpoints flowing while re-executing
  if (with) driver.add(*with);
  const auto s = driver.run_until(target, UINT64_MAX);
  if (s.failed) return {s.detail};
  if (s.halted) return {{}, true};
  if (emu_.cycle() < target)
    return {"the run ended at cycle " + std::to_string(emu_.cycle()) + " (" +
            emu::run_state_name(s.state) + ")"};
  return {};
}

std::string Timeline::seek(uint64_t cycle, const std::vector<Intervention>& interventions) {
  const uint64_t now = emu_.cycle();
  last_resimulated_ = 0;
  if (cycle == now) return {};
  uint64_t from = now;
  // Backward, or forward past a checkpoint we already have (automatic, or named on this
  // execution, e.g. a packet's): restore the nearest one first.
  auto later = auto_.upper_bound(cycle);
  bool restore_first = cycle < now || (later != auto_.begin() && std::prev(later)->first > now);
  for (const auto& [name, c] : named_)
    restore_first |= c.on_timeline && c.cycle > now && c.cycle <= cycle;
  std::string error;
  if (restore_first) {
    auto c = restore_at_or_before(cycle, error);
    if (!c) return error;  // a failed restore leaves the emulator unchanged
    from = *c;
  }
  error = run_to(cycle, interventions).error;
  if (!error.empty()) {
    // Put the emulator back where it was: `now` was reached before, so this re-execution works.
    std::string ignored;
    if (restore_at_or_before(now, ignored)) run_to(now, interventions);
    return error;
  }
  last_resimulated_ = cycle - from;
  return {};
}

void Timeline::truncate_after(uint64_t cycle) {
  auto_.erase(auto_.upper_bound(cycle), auto_.end());
  for (auto& [name, c] : named_)
    if (c.cycle > cycle) c.on_timeline = false;
  forget_expired_chunks();
}

std::vector<CheckpointInfo> Timeline::list() const {
  std::vector<CheckpointInfo> out;
  for (const auto& [c, cp] : auto_) out.push_back({"", c, cp.new_bytes, cp.raw_bytes});
  for (const auto& [n, cp] : named_) out.push_back({n, cp.cycle, cp.new_bytes, cp.raw_bytes});
  std::stable_sort(out.begin(), out.end(),
                   [](const CheckpointInfo& a, const CheckpointInfo& b) { return a.cycle < b.cycle; });
  return out;
}

size_t Timeline::bytes() const { return *store_bytes_; }

size_t Timeline::count() const { return auto_.size() + named_.size(); }

}  // namespace bud::debugger
