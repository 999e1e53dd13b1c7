#include "debugger/bisect/TxnChecker.h"

#include <algorithm>

namespace bud::debugger {

namespace {
constexpr int kKeepPerStage = 64;
/// How far ahead of the last command it fetched a fetch unit can be believed to jump: twice the
/// host's command ring (HostDriver's 2048 entries).
constexpr uint64_t kMaxFetchSkip = 4096;
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
    : trace_(trace),
      golden_(trace.prepared(), [this](const emu::StageTxn& x, uint64_t i) { on_golden(x, i); }) {
  start(consumed);
}

TxnChecker::TxnChecker(const GoldenTrace& trace,
                       const std::array<emu::StageDigest, emu::kNumStages>& at)
    : trace_(trace),
      golden_(trace.prepared(), [this](const emu::StageTxn& x, uint64_t i) { on_golden(x, i); }) {
  std::array<uint64_t, emu::kNumStages> consumed{};
  for (int s = 0; s < emu::kNumStages; ++s) {
    const auto stage = static_cast<emu::Stage>(s);
    const auto& d = at[s];
    consumed[s] = d.count;
    if (!trace.boundary_prefix(stage, d) && trace.digest_consistent(stage, d)) {
      // Inside a command: its transactions so far are settled when the golden model runs it.
      consumed[s] = d.count - d.open_count;
      candidate_[s] = Candidate{true, d.open_cmd, d.open_count, d.open_sum, 0, 0};
    }
  }
  start(consumed);
}

void TxnChecker::start(const std::array<uint64_t, emu::kNumStages>& consumed) {
  for (int s = 0; s < emu::kNumStages; ++s) {
    const auto& stream = trace_.stream(static_cast<emu::Stage>(s));
    auto& w = win_[s];
    w.txns.set_capacity(stream.window_capacity());
    w.cmds.set_capacity(2 * GoldenTrace::kWindowCommands);
    w.consumed = consumed[s];
    // Keep the command holding transaction `consumed` whole (its first ones marked produced).
    const auto* holding = trace_.command_holding(static_cast<emu::Stage>(s), consumed[s]);
    w.keep_from = holding ? holding->first : consumed[s];
    w.base = w.keep_from;
  }
  found_.reserve(static_cast<size_t>(kKeepPerStage) * emu::kNumStages);
  // The golden model runs the commands the RTL fetched before the start, from the latest golden
  // snapshot before the first command any stage still needs (from reset if there is none).
  const uint64_t fetched = consumed[static_cast<int>(emu::Stage::Fetch)];
  uint64_t need = fetched;
  for (int s = 0; s < emu::kNumStages; ++s) {
    const auto stage = static_cast<emu::Stage>(s);
    if (win_[s].keep_from < trace_.stream(stage).size())
      need = std::min<uint64_t>(need, trace_.program_index(stage, win_[s].keep_from));
  }
  if (const auto* snap = trace_.snapshot_at_or_before(static_cast<size_t>(need))) {
    golden_.restore(*snap);
    golden_start_ = golden_.next();
    last_run_id_ = trace_.prepared().program.commands[golden_.next() - 1].cmd_id;
  }
  while (golden_.next() < fetched && step_golden()) {
  }
  for (int s = 0; s < emu::kNumStages; ++s) {
    auto& k = candidate_[s];
    // Its command did not run (the fetch stage's start is off): the open part stays unsettled.
    if (k.active) open_[s] = Open{true, k.cmd_id, k.count, k.sum};
    k.active = false;
    if (open_[s].active) start_exact_ = false;
  }
}

void TxnChecker::on_golden(const emu::StageTxn& x, uint64_t index) {
  const int s = static_cast<int>(x.stage);
  auto& w = win_[s];
  if (index < w.keep_from) return;
  if (flushing_) {
    // finish(): a command the RTL never fetched.
    Divergence d;
    d.kind = Divergence::Kind::Missing;
    d.stage = x.stage;
    d.cycle = flush_cycle_;
    d.cmd_id = x.cmd_id;
    d.expected_index = index;
    note(std::move(d));
    return;
  }
  if (w.txns.empty()) w.base = index;
  // Only an RTL with more commands unfinished than its queues hold gets here.
  if (w.txns.full()) w.txns.set_capacity(w.txns.capacity() * 2);
  const uint64_t h = x.hash();
  const bool produced = index < w.consumed;
  w.txns.push_back(Golden{h, x.addr, x.buffer, produced});
  if (w.cmds.empty() || w.cmds.back().cmd_id != x.cmd_id) {
    if (w.cmds.full()) w.cmds.set_capacity(w.cmds.capacity() * 2);
    w.cmds.push_back(Cmd{x.cmd_id, index, index, 0, index, true});
  }
  Cmd& c = w.cmds.back();
  c.last = index + 1;
  if (produced)
    c.scan = index + 1;
  else
    ++c.left;
  auto& k = candidate_[s];
  if (k.active && k.cmd_id == x.cmd_id && k.seen < k.count) {
    ++k.seen;
    k.seen_sum += h;
  }
}

bool TxnChecker::step_golden() {
  if (!golden_.step()) return false;
  last_run_id_ = trace_.prepared().program.commands[golden_.next() - 1].cmd_id;
  for (int s = 0; s < emu::kNumStages; ++s) {
    if (candidate_[s].active && last_run_id_ >= candidate_[s].cmd_id) settle(s);
    trim(s);
  }
  return true;
}

void TxnChecker::settle(int stage) {
  auto& k = candidate_[stage];
  k.active = false;
  Cmd* c = find(stage, k.cmd_id);
  if (c && k.seen == k.count && k.seen_sum == k.sum) {
    // The RTL produced the command's first transactions in golden order: an exact prefix.
    for (uint64_t i = c->first; i < c->first + k.count; ++i) golden(stage, i).produced = true;
    c->left -= k.count;
    c->scan = c->first + k.count;
    if (c->left == 0) c->present = false;
    return;
  }
  open_[stage] = Open{true, k.cmd_id, k.count, k.sum};
}

void TxnChecker::advance_to(uint32_t cmd_id) {
  if (golden_.next() > 0 && cmd_id <= last_run_id_) return;
  const auto* c = trace_.command(emu::Stage::Fetch, cmd_id);
  // Not a command of the program, or further ahead than a fetch unit reading the command ring
  // can skip: the fetch is wrong, and the golden model stays where it is.
  if (!c || c->first >= golden_.next() + kMaxFetchSkip) return;
  while (golden_.next() <= c->first && step_golden()) {
  }
}

void TxnChecker::drop_front(int stage) {
  auto& w = win_[stage];
  w.cmds.pop_front();
  const uint64_t to = w.cmds.empty() ? w.base + w.txns.size() : w.cmds.front().first;
  w.txns.erase_begin(static_cast<size_t>(to - w.base));
  w.base = to;
}

void TxnChecker::trim(int stage) {
  auto& w = win_[stage];
  while (!w.cmds.empty()) {
    Cmd& c = w.cmds.front();
    if (c.present && c.left == 0 && !keep_open(stage, c.cmd_id)) c.present = false;
    if (c.present) break;
    drop_front(stage);
  }
}

uint64_t TxnChecker::window_size() const {
  uint64_t n = 0;
  for (const auto& w : win_) n += w.txns.size();
  return n;
}

TxnChecker::Cmd* TxnChecker::find(int stage, uint32_t cmd_id) {
  auto& cmds = win_[stage].cmds;
  const auto it = std::lower_bound(cmds.begin(), cmds.end(), cmd_id,
                                   [](const Cmd& c, uint32_t id) { return c.cmd_id < id; });
  if (it == cmds.end() || it->cmd_id != cmd_id || !it->present) return nullptr;
  return &*it;
}

void TxnChecker::take(int stage, Cmd& c, uint64_t idx) {
  golden(stage, idx).produced = true;
  --c.left;
  while (c.scan < c.last && golden(stage, c.scan).produced) ++c.scan;
  if (c.left == 0 && !keep_open(stage, c.cmd_id)) {
    c.present = false;
    trim(stage);
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
  auto& w = win_[stage];
  auto& open = open_[stage];
  while (!w.cmds.empty() && w.cmds.front().cmd_id < before_cmd) {
    const Cmd& c = w.cmds.front();
    if (c.present && open.active && c.cmd_id == open.cmd_id) {
      // What was not seen must be what was produced before the start.
      open.active = false;
      uint64_t sum = 0;
      for (uint64_t i = c.scan; i < c.last; ++i)
        if (!golden(stage, i).produced) sum += golden(stage, i).hash;
      if ((c.left != open.count || sum != open.sum) && !before_start_)
        before_start_ = BeforeStart{static_cast<emu::Stage>(stage), c.cmd_id, cycle};
    } else if (c.present) {
      for (uint64_t i = c.scan; i < c.last; ++i) {
        if (golden(stage, i).produced) continue;
        Divergence d;
        d.kind = Divergence::Kind::Missing;
        d.stage = static_cast<emu::Stage>(stage);
        d.cycle = cycle;
        d.cmd_id = c.cmd_id;
        d.expected_index = i;
        note(std::move(d));
      }
    }
    drop_front(stage);
  }
  trim(stage);
}

bool TxnChecker::keep_open(int stage, uint32_t cmd_id) const {
  // A command caught mid-way at the start stays until the stage moves past it, where what was not
  // seen is compared with what was produced before the start.
  return open_[stage].active && open_[stage].cmd_id == cmd_id;
}

void TxnChecker::on_txn(const emu::StageTxn& t) {
  ++checked_;
  const int s = static_cast<int>(t.stage);
  if (t.stage == emu::Stage::Fetch) advance_to(t.cmd_id);
  // What the RTL produced, as a divergence of `kind`.
  auto seen = [&t](Divergence::Kind kind) {
    Divergence d;
    d.kind = kind;
    d.stage = t.stage;
    d.cycle = t.cycle;
    d.cmd_id = t.cmd_id;
    d.actual = t;
    return d;
  };
  auto extra = [&] { note(seen(Divergence::Kind::Extra)); };
  // A command not fetched (by the golden model's account): nothing to compare, nothing to sweep.
  if (golden_.next() == 0 || t.cmd_id > last_run_id_) return extra();
  // The load stage may finish a command's writes after the next command started issuing, but its
  // writes are still grouped per command in order; sweeping at a later command is safe for all.
  sweep_missing(s, t.cmd_id, t.cycle);
  // GEMM and POST share the compute engine, which runs them in program order: work of either
  // for command c means every earlier command of both is complete.
  if (t.stage == emu::Stage::Gemm) sweep_missing(static_cast<int>(emu::Stage::Post), t.cmd_id, t.cycle);
  if (t.stage == emu::Stage::Post) sweep_missing(static_cast<int>(emu::Stage::Gemm), t.cmd_id, t.cycle);
  Cmd* c = find(s, t.cmd_id);
  if (!c) return extra();
  // Equal hashes are equal transactions (64-bit hashes of everything but the cycle; the stage
  // digests rest on the same assumption).
  const uint64_t h = t.hash();
  for (uint64_t i = c->scan; i < c->last; ++i) {
    const Golden& g = golden(s, i);
    if (!g.produced && g.hash == h) {
      take(s, *c, i);
      return;
    }
  }
  // Not expected: the closest golden transaction is the one at the same address (and buffer).
  Divergence d = seen(Divergence::Kind::Wrong);
  std::optional<uint64_t> pick;
  for (uint64_t i = c->scan; i < c->last && !pick; ++i) {
    const Golden& g = golden(s, i);
    if (!g.produced && g.addr == t.addr && g.buffer == t.buffer) pick = i;
  }
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
  const size_t from = found_.size();
  for (int s = 0; s < emu::kNumStages; ++s) sweep_missing(s, UINT32_MAX, cycle);
  // The commands the RTL never fetched: every transaction of theirs is missing.
  flushing_ = true;
  flush_cycle_ = cycle;
  while (step_golden()) {
  }
  flushing_ = false;
  // Stage by stage, as a sweep of each whole stream would list them (an insertion sort: at most
  // kKeepPerStage per stage, and it allocates nothing).
  for (size_t i = from + 1; i < found_.size(); ++i) {
    Divergence d = std::move(found_[i]);
    size_t j = i;
    for (; j > from && found_[j - 1].stage > d.stage; --j) found_[j] = std::move(found_[j - 1]);
    found_[j] = std::move(d);
  }
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
