#include "debugger/bisect/TxnChecker.h"

#include <algorithm>

namespace bud::debugger {

namespace {
constexpr int kKeepPerStage = 64;
}

const char* Divergence::kind_name(Kind kind) {
  switch (kind) {
    case Kind::Wrong: return "wrong";
    case Kind::Extra: return "extra";
    case Kind::Missing: return "missing";
  }
  return "?";
}

std::string Divergence::describe() const {
  std::string s = std::string(emu::stage_name(stage)) + " cycle " + std::to_string(cycle) + " #" +
                  std::to_string(cmd_id) + " " + kind_name() + ": ";
  if (kind == Kind::Missing && expected) return s + "never produced " + expected->to_string();
  if (expected && actual) return s + "expected " + expected->to_string() + ", actual " + actual->to_string();
  if (actual) return s + "unexpected " + actual->to_string();
  return s;
}

TxnChecker::TxnChecker(const GoldenTrace& trace,
                       const std::array<uint64_t, emu::kNumStages>& consumed)
    : trace_(trace) {
  init(consumed);
}

TxnChecker::TxnChecker(const GoldenTrace& trace,
                       const std::array<emu::StageDigest, emu::kNumStages>& at)
    : trace_(trace) {
  std::array<uint64_t, emu::kNumStages> consumed{};
  for (int s = 0; s < emu::kNumStages; ++s) {
    const auto r = trace.resume_at(static_cast<emu::Stage>(s), at[s]);
    consumed[s] = r.consumed;
    if (r.open) open_[s] = Open{true, r.open_cmd, r.open_count, r.open_sum};
  }
  init(consumed);
}

void TxnChecker::init(const std::array<uint64_t, emu::kNumStages>& consumed) {
  for (int s = 0; s < emu::kNumStages; ++s) {
    const auto& golden = trace_.stream(static_cast<emu::Stage>(s));
    auto& e = expect_[s];
    e.produced.assign(golden.size(), false);
    e.cmds.reserve(golden.commands.size());
    for (const auto& g : golden.commands) {
      Cmd c{g.cmd_id, g.first, g.last, 0, g.first, false};
      const uint64_t done = std::clamp(consumed[s], g.first, g.last);
      for (uint64_t i = g.first; i < done; ++i) e.produced[i] = true;
      c.scan = done;
      c.left = g.last - done;
      c.present = c.left > 0;
      e.cmds.push_back(c);
    }
    std::stable_sort(e.cmds.begin(), e.cmds.end(),
                     [](const Cmd& a, const Cmd& b) { return a.cmd_id < b.cmd_id; });
  }
  found_.reserve(static_cast<size_t>(kKeepPerStage) * emu::kNumStages);
}

TxnChecker::Cmd* TxnChecker::find(int stage, uint32_t cmd_id) {
  auto& e = expect_[stage];
  const auto it = std::lower_bound(e.cmds.begin() + static_cast<long>(e.cursor), e.cmds.end(),
                                   cmd_id, [](const Cmd& c, uint32_t id) { return c.cmd_id < id; });
  if (it == e.cmds.end() || it->cmd_id != cmd_id || !it->present) return nullptr;
  return &*it;
}

void TxnChecker::take(int stage, Cmd& c, uint64_t idx) {
  auto& produced = expect_[stage].produced;
  produced[idx] = true;
  --c.left;
  while (c.scan < c.last && produced[c.scan]) ++c.scan;
  if (c.left == 0 && !keep_open(stage, c.cmd_id)) c.present = false;
}

void TxnChecker::note(Divergence d) {
  auto& n = per_stage_[static_cast<int>(d.stage)];
  if (n >= kKeepPerStage) return;
  ++n;
  found_.push_back(std::move(d));
}

void TxnChecker::sweep_missing(int stage, uint32_t before_cmd, uint64_t cycle) {
  // Stages process their commands in order: once a later command produces transactions, what an
  // earlier command did not produce never will.
  auto& e = expect_[stage];
  auto& open = open_[stage];
  const auto& golden = trace_.stream(static_cast<emu::Stage>(stage));
  for (; e.cursor < e.cmds.size() && e.cmds[e.cursor].cmd_id < before_cmd; ++e.cursor) {
    Cmd& c = e.cmds[e.cursor];
    if (!c.present) continue;
    c.present = false;
    if (open.active && c.cmd_id == open.cmd_id) {
      // What was not seen must be what was produced before the start.
      open.active = false;
      uint64_t sum = 0;
      for (uint64_t i = c.scan; i < c.last; ++i)
        if (!e.produced[i]) sum += golden.hash[i];
      if (c.left != open.count || sum != open.sum) {
        if (!before_start_)
          before_start_ = BeforeStart{static_cast<emu::Stage>(stage), c.cmd_id, cycle};
      }
      continue;
    }
    for (uint64_t i = c.scan; i < c.last; ++i) {
      if (e.produced[i]) continue;
      Divergence d;
      d.kind = Divergence::Kind::Missing;
      d.stage = static_cast<emu::Stage>(stage);
      d.cycle = cycle;
      d.cmd_id = c.cmd_id;
      d.expected_index = i;
      note(std::move(d));
    }
  }
}

bool TxnChecker::keep_open(int stage, uint32_t cmd_id) const {
  // A command caught mid-way at the start stays until the stage moves past it, where what was not
  // seen is compared with what was produced before the start.
  return open_[stage].active && open_[stage].cmd_id == cmd_id;
}

void TxnChecker::on_txn(const emu::StageTxn& t) {
  ++checked_;
  const int s = static_cast<int>(t.stage);
  // The load stage may finish a command's writes after the next command started issuing, but its
  // writes are still grouped per command in order; sweeping at a later command is safe for all.
  sweep_missing(s, t.cmd_id, t.cycle);
  // GEMM and POST share the compute engine, which runs them in program order: work of either
  // for command c means every earlier command of both is complete.
  if (t.stage == emu::Stage::Gemm) sweep_missing(static_cast<int>(emu::Stage::Post), t.cmd_id, t.cycle);
  if (t.stage == emu::Stage::Post) sweep_missing(static_cast<int>(emu::Stage::Gemm), t.cmd_id, t.cycle);
  Cmd* c = find(s, t.cmd_id);
  if (!c) {
    Divergence d;
    d.kind = Divergence::Kind::Extra;
    d.stage = t.stage;
    d.cycle = t.cycle;
    d.cmd_id = t.cmd_id;
    d.actual = t;
    note(std::move(d));
    return;
  }
  const auto& golden = trace_.stream(t.stage);
  const auto& produced = expect_[s].produced;
  // Equal hashes are equal transactions (64-bit hashes of everything but the cycle; the stage
  // digests rest on the same assumption).
  const uint64_t h = t.hash();
  for (uint64_t i = c->scan; i < c->last; ++i) {
    if (!produced[i] && golden.hash[i] == h) {
      take(s, *c, i);
      return;
    }
  }
  // Not expected: the closest golden transaction is the one at the same address (and buffer).
  Divergence d;
  d.kind = Divergence::Kind::Wrong;
  d.stage = t.stage;
  d.cycle = t.cycle;
  d.cmd_id = t.cmd_id;
  d.actual = t;
  std::optional<uint64_t> pick;
  for (uint64_t i = c->scan; i < c->last && !pick; ++i)
    if (!produced[i] && golden.addr[i] == t.addr && golden.buffer[i] == t.buffer) pick = i;
  // No transaction at that address: it went to the wrong place. Compare with the next one the
  // command should have produced (stages produce a command's transactions in order, up to the
  // memory system's reordering).
  if (!pick && c->left > 0) pick = c->scan;
  if (pick) {
    d.expected_index = *pick;
    take(s, *c, *pick);
  } else {
    d.kind = Divergence::Kind::Extra;
  }
  note(std::move(d));
}

void TxnChecker::finish(uint64_t cycle) {
  for (int s = 0; s < emu::kNumStages; ++s) sweep_missing(s, UINT32_MAX, cycle);
}

const std::vector<Divergence>& TxnChecker::divergences() const {
  if (resolved_ == found_.size()) return found_;
  std::vector<std::pair<emu::Stage, uint64_t>> wanted;
  std::vector<size_t> which;
  for (size_t i = resolved_; i < found_.size(); ++i)
    if (found_[i].expected_index && !found_[i].expected) {
      wanted.emplace_back(found_[i].stage, *found_[i].expected_index);
      which.push_back(i);
    }
  const auto txns = trace_.materialize(wanted);
  for (size_t k = 0; k < which.size(); ++k) found_[which[k]].expected = txns[k];
  resolved_ = found_.size();
  return found_;
}

std::optional<Divergence> TxnChecker::first_of(emu::Stage s) const {
  std::optional<Divergence> best;
  for (const auto& d : divergences())
    if (d.stage == s && (!best || d.cycle < best->cycle)) best = d;
  return best;
}

}  // namespace bud::debugger
