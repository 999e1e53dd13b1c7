#include "debugger/bisect/GoldenTrace.h"

#include "emu/golden/GoldenNpu.h"

namespace bud::debugger {

GoldenTrace GoldenTrace::build(const run::PreparedRun& p) {
  GoldenTrace t;
  golden::GoldenNpu g(p.program.dram_bytes);
  for (const auto& r : p.program.dram_init) g.write_dram(r.addr, r.bytes);
  g.set_observer([&t](const emu::StageTxn& x) { t.txns[static_cast<int>(x.stage)].push_back(x); });
  const auto result = g.run(p.program.commands);
  if (!result.ok) t.error = result.error;
  for (int s = 0; s < emu::kNumStages; ++s) {
    auto& pre = t.prefix[s];
    pre.resize(t.txns[s].size() + 1);
    for (size_t i = 0; i < t.txns[s].size(); ++i) {
      pre[i + 1] = pre[i];
      pre[i + 1].add(t.txns[s][i]);
    }
  }
  for (int s = 0; s < emu::kNumStages; ++s) {
    auto& groups = t.groups[s];
    const auto& v = t.txns[s];
    for (size_t i = 0; i < v.size(); ++i) {
      auto [it, fresh] = groups.try_emplace(v[i].cmd_id, i, i + 1);
      if (!fresh) it->second.second = i + 1;
    }
  }
  for (int b = 0; b < isa::kNumBuffers; ++b) {
    auto sp = g.scratchpad(static_cast<isa::Buffer>(b));
    t.spads[b].assign(sp.begin(), sp.end());
  }
  t.dram.assign(g.dram().begin(), g.dram().end());
  return t;
}

bool GoldenTrace::prefix_matches(emu::Stage stage, const emu::StageDigest& d) const {
  const auto& pre = prefix[static_cast<int>(stage)];
  if (d.count >= pre.size()) return false;
  return pre[d.count] == d;
}

bool GoldenTrace::digest_consistent(emu::Stage stage, const emu::StageDigest& d) const {
  if (prefix_matches(stage, d)) return true;
  if (d.open_count == 0 || d.open_count > d.count) return false;
  const auto& g = groups[static_cast<int>(stage)];
  const auto it = g.find(d.open_cmd);
  if (it == g.end()) return false;
  const auto [first, last] = it->second;
  const emu::StageDigest closed = d.closed();
  return closed.count == first && prefix_matches(stage, closed) && d.open_count <= last - first;
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

}  // namespace bud::debugger
