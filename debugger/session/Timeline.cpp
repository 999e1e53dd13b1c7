#include "debugger/session/Timeline.h"

#include <zstd.h>

#include <algorithm>

namespace bud::debugger {

bool Intervention::apply(emu::Emulator& emu) const {
  switch (kind) {
    case Kind::Deposit: return emu.deposit_signal(signal, element, value);
    case Kind::Force: return emu.force_signal(signal, element, value);
    case Kind::Release: emu.release_signal(signal, element); return true;
    case Kind::MemoryWrite: return emu.write_memory(memory, offset, bytes);
  }
  return false;
}

Timeline::Timeline(emu::Emulator& emu, TimelineConfig config)
    : emu_(emu), config_(config), interval_(std::max<uint64_t>(1, config.interval)) {}

void Timeline::set_interval(uint64_t cycles) {
  interval_ = std::max<uint64_t>(1, cycles);
  config_.interval = interval_;
}

Timeline::Checkpoint Timeline::capture() const {
  std::vector<uint8_t> raw;
  emu_.save(raw);
  Checkpoint c;
  c.cycle = emu_.cycle();
  c.raw_bytes = raw.size();
  c.data.resize(ZSTD_compressBound(raw.size()));
  const size_t n =
      ZSTD_compress(c.data.data(), c.data.size(), raw.data(), raw.size(), config_.compression_level);
  if (ZSTD_isError(n)) {
    c.data = std::move(raw);  // keep it uncompressed rather than lose it
    c.raw_bytes = 0;
  } else {
    c.data.resize(n);
    c.data.shrink_to_fit();
  }
  return c;
}

std::string Timeline::restore(const Checkpoint& c) {
  std::vector<uint8_t> raw;
  if (c.raw_bytes == 0) {
    raw = c.data;
  } else {
    raw.resize(c.raw_bytes);
    const size_t n = ZSTD_decompress(raw.data(), raw.size(), c.data.data(), c.data.size());
    if (ZSTD_isError(n) || n != c.raw_bytes)
      return "checkpoint at cycle " + std::to_string(c.cycle) + " is corrupt";
  }
  std::string error;
  if (!emu_.restore(raw, error)) return error;
  return {};
}

void Timeline::reset() {
  auto_.clear();
  auto_bytes_ = 0;
  interval_ = std::max<uint64_t>(1, config_.interval);
  auto c = capture();
  auto_bytes_ += c.data.size();
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
  auto_bytes_ += c.data.size();
  auto_.emplace(now, std::move(c));
  enforce_budget();
}

void Timeline::enforce_budget() {
  while (auto_bytes_ > config_.memory_budget && auto_.size() > 2) {
    // Double the interval and keep only checkpoints on the new grid (cycle 0 always stays).
    interval_ *= 2;
    for (auto it = auto_.begin(); it != auto_.end();) {
      if (it->first != 0 && it->first % interval_ != 0) {
        auto_bytes_ -= it->second.data.size();
        it = auto_.erase(it);
      } else {
        ++it;
      }
    }
  }
}

void Timeline::save_named(const std::string& name) { named_[name] = capture(); }
bool Timeline::has_named(const std::string& name) const { return named_.count(name) != 0; }
std::optional<uint64_t> Timeline::named_cycle(const std::string& name) const {
  auto it = named_.find(name);
  if (it == named_.end()) return std::nullopt;
  return it->second.cycle;
}
bool Timeline::remove_named(const std::string& name) { return named_.erase(name) != 0; }

std::string Timeline::restore_named(const std::string& name) {
  auto it = named_.find(name);
  if (it == named_.end()) return "no checkpoint named '" + name + "'";
  return restore(it->second);
}

std::optional<uint64_t> Timeline::restore_at_or_before(uint64_t cycle, std::string& error) {
  // Best source: the latest automatic or named checkpoint at or before `cycle`.
  const Checkpoint* best = nullptr;
  auto it = auto_.upper_bound(cycle);
  if (it != auto_.begin()) best = &std::prev(it)->second;
  for (const auto& [name, c] : named_)
    if (c.cycle <= cycle && (!best || c.cycle > best->cycle)) best = &c;
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
    if (cp.cycle < cycle) out.push_back(cp.cycle);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string Timeline::run_to(uint64_t target, const std::vector<Intervention>& interventions) {
  // Interventions are sorted by cycle; apply each when the emulator reaches its cycle.
  auto next = std::lower_bound(interventions.begin(), interventions.end(), emu_.cycle(),
                               [](const Intervention& i, uint64_t c) { return i.cycle < c; });
  while (true) {
    while (next != interventions.end() && next->cycle == emu_.cycle()) {
      if (!next->apply(emu_)) return "could not re-apply a change at cycle " +
                                     std::to_string(next->cycle);
      ++next;
    }
    if (emu_.cycle() >= target) return {};
    uint64_t stop = target;
    if (next != interventions.end() && next->cycle < stop) stop = next->cycle;
    // Keep automatic checkpoints flowing while re-executing forward past the known end.
    const uint64_t ck = next_checkpoint_cycle();
    if (ck < stop) stop = ck;
    const auto r = emu_.step(stop - emu_.cycle());
    maybe_checkpoint();
    if (emu_.cycle() < stop) {
      return "the run ended at cycle " + std::to_string(emu_.cycle()) + " (" +
             emu::run_state_name(r.state) + ")";
    }
  }
}

std::string Timeline::seek(uint64_t cycle, const std::vector<Intervention>& interventions) {
  const uint64_t now = emu_.cycle();
  std::string error;
  last_resimulated_ = 0;
  if (cycle == now) return {};
  // Going forward within the current interval: just run.
  uint64_t from = now;
  if (cycle < now || (auto_.upper_bound(cycle) != auto_.begin() &&
                      std::prev(auto_.upper_bound(cycle))->first > now)) {
    std::vector<uint8_t> undo;
    emu_.save(undo);
    auto c = restore_at_or_before(cycle, error);
    if (!c) {
      std::string ignored;
      emu_.restore(undo, ignored);
      return error;
    }
    from = *c;
    error = run_to(cycle, interventions);
    if (!error.empty()) {
      std::string ignored;
      emu_.restore(undo, ignored);
      return error;
    }
  } else {
    std::vector<uint8_t> undo;
    emu_.save(undo);
    error = run_to(cycle, interventions);
    if (!error.empty()) {
      std::string ignored;
      emu_.restore(undo, ignored);
      return error;
    }
  }
  last_resimulated_ = cycle - from;
  return {};
}

void Timeline::truncate_after(uint64_t cycle) {
  for (auto it = auto_.upper_bound(cycle); it != auto_.end();) {
    auto_bytes_ -= it->second.data.size();
    it = auto_.erase(it);
  }
}

std::vector<CheckpointInfo> Timeline::list() const {
  std::vector<CheckpointInfo> out;
  for (const auto& [c, cp] : auto_) out.push_back({"", c, cp.data.size(), cp.raw_bytes});
  for (const auto& [n, cp] : named_) out.push_back({n, cp.cycle, cp.data.size(), cp.raw_bytes});
  std::stable_sort(out.begin(), out.end(),
                   [](const CheckpointInfo& a, const CheckpointInfo& b) { return a.cycle < b.cycle; });
  return out;
}

size_t Timeline::bytes() const {
  size_t n = auto_bytes_;
  for (const auto& [name, cp] : named_) n += cp.data.size();
  return n;
}

size_t Timeline::count() const { return auto_.size() + named_.size(); }

}  // namespace bud::debugger
