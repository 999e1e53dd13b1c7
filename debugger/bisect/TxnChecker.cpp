#include "debugger/bisect/TxnChecker.h"

namespace bud::debugger {

namespace {
constexpr int kKeepPerStage = 64;
}

const char* Divergence::kind_name() const {
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
  for (int s = 0; s < emu::kNumStages; ++s) {
    const auto& v = trace.txns[s];
    for (size_t i = consumed[s]; i < v.size(); ++i) expect_[s][v[i].cmd_id].left.push_back(i);
  }
}

TxnChecker::TxnChecker(const GoldenTrace& trace,
                       const std::array<emu::StageDigest, emu::kNumStages>& at)
    : trace_(trace) {
  for (int s = 0; s < emu::kNumStages; ++s) {
    const auto r = trace.resume_at(static_cast<emu::Stage>(s), at[s]);
    const auto& v = trace.txns[s];
    for (size_t i = r.consumed; i < v.size(); ++i) expect_[s][v[i].cmd_id].left.push_back(i);
    if (r.open) open_[s] = Open{true, r.open_cmd, r.open_count, r.open_sum};
  }
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
  auto& m = expect_[stage];
  auto& open = open_[stage];
  for (auto it = m.begin(); it != m.end() && it->first < before_cmd;) {
    if (open.active && it->first == open.cmd_id) {
      // What was not seen must be what was produced before the start.
      open.active = false;
      uint64_t sum = 0;
      for (size_t idx : it->second.left) sum += trace_.txns[stage][idx].hash();
      if (it->second.left.size() != open.count || sum != open.sum) {
        if (!before_start_)
          before_start_ = BeforeStart{static_cast<emu::Stage>(stage), it->first, cycle};
      }
      it = m.erase(it);
      continue;
    }
    for (size_t idx : it->second.left) {
      Divergence d;
      d.kind = Divergence::Kind::Missing;
      d.stage = static_cast<emu::Stage>(stage);
      d.cycle = cycle;
      d.cmd_id = it->first;
      d.expected = trace_.txns[stage][idx];
      note(std::move(d));
    }
    it = m.erase(it);
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
  auto it = expect_[s].find(t.cmd_id);
  if (it == expect_[s].end()) {
    Divergence d;
    d.kind = Divergence::Kind::Extra;
    d.stage = t.stage;
    d.cycle = t.cycle;
    d.cmd_id = t.cmd_id;
    d.actual = t;
    note(std::move(d));
    return;
  }
  auto& left = it->second.left;
  const uint64_t h = t.hash();
  for (size_t k = 0; k < left.size(); ++k) {
    if (trace_.txns[s][left[k]].hash() == h && trace_.txns[s][left[k]].same_content(t)) {
      left.erase(left.begin() + static_cast<long>(k));
      if (left.empty() && !keep_open(s, t.cmd_id)) expect_[s].erase(it);
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
  for (size_t k = 0; k < left.size(); ++k) {
    const auto& g = trace_.txns[s][left[k]];
    if (g.addr == t.addr && g.buffer == t.buffer) {
      d.expected = g;
      left.erase(left.begin() + static_cast<long>(k));
      break;
    }
  }
  if (!d.expected && !left.empty()) {
    // No transaction at that address: it went to the wrong place. Compare with the next one the
    // command should have produced (stages produce a command's transactions in order, up to the
    // memory system's reordering).
    d.expected = trace_.txns[s][left.front()];
    left.erase(left.begin());
  }
  if (!d.expected) d.kind = Divergence::Kind::Extra;
  if (left.empty() && !keep_open(s, t.cmd_id)) expect_[s].erase(it);
  note(std::move(d));
}

void TxnChecker::finish(uint64_t cycle) {
  for (int s = 0; s < emu::kNumStages; ++s) sweep_missing(s, UINT32_MAX, cycle);
}

std::optional<Divergence> TxnChecker::first_of(emu::Stage s) const {
  std::optional<Divergence> best;
  for (const auto& d : found_)
    if (d.stage == s && (!best || d.cycle < best->cycle)) best = d;
  return best;
}

}  // namespace bud::debugger
