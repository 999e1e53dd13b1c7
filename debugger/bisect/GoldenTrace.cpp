#include "debugger/bisect/GoldenTrace.h"

#include <algorithm>

#include "emu/golden/GoldenNpu.h"

namespace bud::debugger {
namespace {

/// Runs the golden model over `p` with `observer` watching; returns its verdict and final state.
golden::RunResult run_golden(const run::PreparedRun& p, golden::GoldenNpu& g,
                             golden::GoldenNpu::Observer observer) {
  for (const auto& r : p.program.dram_init) g.write_dram(r.addr, r.bytes);
  g.set_observer(std::move(observer));
  return g.run(p.program.commands);
}

}  // namespace

GoldenTrace GoldenTrace::build(const run::PreparedRun& p) {
  GoldenTrace t;
  t.prepared_ = &p;
  golden::GoldenNpu g(p.program.dram_bytes, p.program.array);
  const auto result = run_golden(p, g, [&t](const emu::StageTxn& x) {
    Stream& s = t.streams_[static_cast<int>(x.stage)];
    const uint64_t index = s.hash.size();
    if (s.commands.empty() || s.commands.back().cmd_id != x.cmd_id)
      s.commands.push_back(Command{x.cmd_id, index, index, s.total.sum});
    s.commands.back().last = index + 1;
    s.hash.push_back(x.hash());
    s.addr.push_back(x.addr);
    s.buffer.push_back(x.buffer);
    s.total.add(x);
  });
  if (!result.ok) t.error = result.error;
  for (auto& s : t.streams_) {
    s.hash.shrink_to_fit();
    s.addr.shrink_to_fit();
    s.buffer.shrink_to_fit();
    s.commands.shrink_to_fit();
  }
  for (int b = 0; b < isa::kNumBuffers; ++b) {
    auto sp = g.scratchpad(static_cast<isa::Buffer>(b));
    t.spads[b].assign(sp.begin(), sp.end());
  }
  t.dram.assign(g.dram().begin(), g.dram().end());
  return t;
}

const GoldenTrace::Command* GoldenTrace::command(emu::Stage stage, uint32_t cmd_id) const {
  const auto& v = stream(stage).commands;
  // Lowered programs number commands in program order; any other order falls back to a scan.
  const auto it = std::lower_bound(v.begin(), v.end(), cmd_id,
                                   [](const Command& c, uint32_t id) { return c.cmd_id < id; });
  if (it != v.end() && it->cmd_id == cmd_id) return &*it;
  for (const auto& c : v)
    if (c.cmd_id == cmd_id) return &c;
  return nullptr;
}

emu::StageDigest GoldenTrace::prefix(emu::Stage stage, uint64_t n) const {
  const Stream& s = stream(stage);
  emu::StageDigest d;
  d.count = n;
  if (n == 0) return d;
  // The command holding transaction n-1: its sum_before plus its transactions up to n.
  const auto it = std::upper_bound(s.commands.begin(), s.commands.end(), n - 1,
                                   [](uint64_t i, const Command& c) { return i < c.first; });
  const Command& c = *(it - 1);
  d.sum = c.sum_before;
  for (uint64_t i = c.first; i < n; ++i) d.sum += s.hash[i];
  return d;
}

bool GoldenTrace::prefix_matches(emu::Stage stage, const emu::StageDigest& d) const {
  if (d.count > stream(stage).size()) return false;
  return prefix(stage, d.count) == d;
}

bool GoldenTrace::digest_consistent(emu::Stage stage, const emu::StageDigest& d) const {
  if (prefix_matches(stage, d)) return true;
  if (d.open_count == 0 || d.open_count > d.count) return false;
  const Command* c = command(stage, d.open_cmd);
  if (!c) return false;
  const emu::StageDigest closed = d.closed();
  return closed.count == c->first && prefix_matches(stage, closed) &&
         d.open_count <= c->last - c->first;
}

GoldenTrace::Resume GoldenTrace::resume_at(emu::Stage stage, const emu::StageDigest& d) const {
  Resume r;
  r.consumed = d.count;
  if (prefix_matches(stage, d) || !digest_consistent(stage, d)) return r;
  r.consumed = d.count - d.open_count;
  r.open = true;
  r.open_cmd = d.open_cmd;
  r.open_count = d.open_count;
  r.open_sum = d.open_sum;
  return r;
}

void GoldenTrace::replay(
    const std::function<void(const emu::StageTxn&, uint64_t index)>& visit) const {
  if (!prepared_) return;
  golden::GoldenNpu g(prepared_->program.dram_bytes, prepared_->program.array);
  std::array<uint64_t, emu::kNumStages> next{};
  run_golden(*prepared_, g, [&](const emu::StageTxn& x) {
    visit(x, next[static_cast<int>(x.stage)]++);
  });
}

std::vector<emu::StageTxn> GoldenTrace::materialize(
    std::span<const std::pair<emu::Stage, uint64_t>> wanted) const {
  std::vector<emu::StageTxn> out(wanted.size());
  if (wanted.empty()) return out;
  // Per stage, the wanted indices in stream order with where each goes.
  std::array<std::vector<std::pair<uint64_t, size_t>>, emu::kNumStages> want;
  for (size_t i = 0; i < wanted.size(); ++i)
    want[static_cast<int>(wanted[i].first)].emplace_back(wanted[i].second, i);
  for (auto& w : want) std::sort(w.begin(), w.end());
  std::array<size_t, emu::kNumStages> cursor{};
  replay([&](const emu::StageTxn& x, uint64_t index) {
    const int s = static_cast<int>(x.stage);
    auto& c = cursor[s];
    for (; c < want[s].size() && want[s][c].first == index; ++c) out[want[s][c].second] = x;
  });
  return out;
}

}  // namespace bud::debugger
