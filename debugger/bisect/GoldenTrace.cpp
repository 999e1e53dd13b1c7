#include "debugger/bisect/GoldenTrace.h"

#include <algorithm>
#include <optional>
#include <string>

#include "debugger/bisect/GoldenStream.h"

namespace bud::debugger {

GoldenTrace GoldenTrace::build(const run::PreparedRun& p, const GoldenTraceOptions& options) {
  GoldenTrace t;
  t.prepared_ = &p;
  std::optional<uint32_t> last_id;  // of the previous command (fetch transactions)
  GoldenStream golden(p, [&t, &last_id](const emu::StageTxn& x, uint64_t index) {
    Stream& s = t.streams_[static_cast<int>(x.stage)];
    if (x.stage == emu::Stage::Fetch) {
      if (last_id && x.cmd_id <= *last_id && t.error.empty())
        t.error = "command #" + std::to_string(index) + " has id " + std::to_string(x.cmd_id) +
                  " after id " + std::to_string(*last_id) +
                  ": the golden check needs command ids ascending in program order";
      last_id = x.cmd_id;
    }
    if (s.commands.empty() || s.commands.back().cmd_id != x.cmd_id)
      s.commands.push_back(Command{x.cmd_id, index, index, s.total.sum});
    s.commands.back().last = index + 1;
    s.total.add(x);
  });
  // Snapshots every `interval` commands, thinned to the budget.
  constexpr size_t kSnapshots = 16, kMinInterval = 4096;
  size_t interval = options.snapshot_interval;
  if (interval == 0)
    interval = std::max(kMinInterval, (p.program.commands.size() + kSnapshots - 1) / kSnapshots);
  uint64_t held = 0;
  while (true) {
    const size_t at = golden.next();
    if (at > 0 && interval != SIZE_MAX && at % interval == 0 && !golden.ended()) {
      t.snapshots_.push_back(golden.snapshot());
      held += t.snapshots_.back().bytes();
      while (held > options.snapshot_budget && !t.snapshots_.empty()) {
        // Keep the ones at multiples of twice the interval.
        interval = interval > SIZE_MAX / 2 ? SIZE_MAX : interval * 2;
        std::vector<GoldenStream::Snapshot> kept;
        held = 0;
        for (auto& s : t.snapshots_)
          if (interval != SIZE_MAX && s.next % interval == 0) {
            held += s.bytes();
            kept.push_back(std::move(s));
          }
        t.snapshots_ = std::move(kept);
      }
    }
    if (!golden.step()) break;
  }
  if (!golden.result().ok && t.error.empty()) t.error = golden.result().error;
  for (auto& s : t.streams_) {
    s.commands.shrink_to_fit();
    // The most transactions in any kWindowCommands consecutive commands (a sliding sum).
    uint64_t sum = 0;
    for (size_t i = 0; i < s.commands.size(); ++i) {
      sum += s.commands[i].last - s.commands[i].first;
      if (i >= kWindowCommands)
        sum -= s.commands[i - kWindowCommands].last - s.commands[i - kWindowCommands].first;
      s.window_txns = std::max(s.window_txns, sum);
    }
  }
  for (int b = 0; b < isa::kNumBuffers; ++b) {
    auto sp = golden.npu().scratchpad(static_cast<isa::Buffer>(b));
    t.spads[b].assign(sp.begin(), sp.end());
  }
  t.dram.assign(golden.npu().dram().begin(), golden.npu().dram().end());
  return t;
}

const GoldenStream::Snapshot* GoldenTrace::snapshot_at_or_before(size_t command) const {
  const auto it = std::upper_bound(
      snapshots_.begin(), snapshots_.end(), command,
      [](size_t c, const GoldenStream::Snapshot& s) { return c < s.next; });
  return it == snapshots_.begin() ? nullptr : &*(it - 1);
}

const GoldenTrace::Command* GoldenTrace::command(emu::Stage stage, uint32_t cmd_id) const {
  const auto& v = stream(stage).commands;
  // Command ids ascend in program order (build() checks).
  const auto it = std::lower_bound(v.begin(), v.end(), cmd_id,
                                   [](const Command& c, uint32_t id) { return c.cmd_id < id; });
  return it != v.end() && it->cmd_id == cmd_id ? &*it : nullptr;
}

const GoldenTrace::Command* GoldenTrace::command_holding(emu::Stage stage, uint64_t n) const {
  const auto& v = stream(stage).commands;
  const auto it = std::upper_bound(v.begin(), v.end(), n,
                                   [](uint64_t i, const Command& c) { return i < c.first; });
  return it != v.begin() && n < (it - 1)->last ? &*(it - 1) : nullptr;
}

size_t GoldenTrace::program_index(emu::Stage stage, uint64_t n) const {
  const Command* c = command_holding(stage, n);
  // Every command produces one fetch transaction: its index in the fetch stream is its place.
  const Command* f = c ? command(emu::Stage::Fetch, c->cmd_id) : nullptr;
  return f ? static_cast<size_t>(f->first) : 0;
}

const GoldenTrace::Command* GoldenTrace::command_at(emu::Stage stage, uint64_t n) const {
  const auto& v = stream(stage).commands;
  const auto it = std::lower_bound(v.begin(), v.end(), n,
                                   [](const Command& c, uint64_t i) { return c.first < i; });
  return it != v.end() && it->first == n ? &*it : nullptr;
}

bool GoldenTrace::boundary_prefix(emu::Stage stage, const emu::StageDigest& d) const {
  const Stream& s = stream(stage);
  if (d.count == 0) return d.sum == 0;
  if (d.count == s.size()) return d.sum == s.total.sum;
  const Command* c = command_at(stage, d.count);
  return c && c->sum_before == d.sum;
}

bool GoldenTrace::digest_consistent(emu::Stage stage, const emu::StageDigest& d) const {
  if (boundary_prefix(stage, d)) return true;
  if (d.open_count == 0 || d.open_count > d.count) return false;
  const Command* c = command(stage, d.open_cmd);
  if (!c) return false;
  const emu::StageDigest closed = d.closed();
  return closed.count == c->first && boundary_prefix(stage, closed) &&
         d.open_count <= c->last - c->first;
}

void GoldenTrace::replay(
    const std::function<void(const emu::StageTxn&, uint64_t index)>& visit) const {
  if (!prepared_) return;
  GoldenStream golden(*prepared_, visit);
  golden.run_to_end();
}

std::vector<emu::StageTxn> GoldenTrace::materialize(
    std::span<const std::pair<emu::Stage, uint64_t>> wanted) const {
  std::vector<emu::StageTxn> out(wanted.size());
  if (wanted.empty() || !prepared_) return out;
  // Per stage, the wanted indices in stream order with where each goes; and the first program
  // command that produces any of them (the golden model starts from the snapshot before it).
  std::array<std::vector<std::pair<uint64_t, size_t>>, emu::kNumStages> want;
  size_t first = SIZE_MAX;
  for (size_t i = 0; i < wanted.size(); ++i) {
    const auto [stage, index] = wanted[i];
    want[static_cast<int>(stage)].emplace_back(index, i);
    first = std::min(first, program_index(stage, index));
  }
  for (auto& w : want) std::sort(w.begin(), w.end());
  std::array<size_t, emu::kNumStages> cursor{};
  size_t left = wanted.size();
  GoldenStream golden(*prepared_, [&](const emu::StageTxn& x, uint64_t index) {
    const int s = static_cast<int>(x.stage);
    auto& c = cursor[s];
    while (c < want[s].size() && want[s][c].first < index) ++c;  // beyond the stream: not found
    for (; c < want[s].size() && want[s][c].first == index; ++c, --left)
      out[want[s][c].second] = x;
  });
  if (const auto* snap = snapshot_at_or_before(first)) golden.restore(*snap);
  while (left > 0 && golden.step()) {
  }
  return out;
}

}  // namespace bud::debugger
