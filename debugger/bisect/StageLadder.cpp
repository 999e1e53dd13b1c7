#include "debugger/bisect/StageLadder.h"

#include <algorithm>

#include "debugger/bisect/DivergenceElement.h"

namespace bud::debugger {

namespace {

/// The stage whose work a hang lost: the busy engine holding the earliest command (the command
/// that never completed: a lost read leaves LOAD waiting, a lost write acknowledgement STORE, a
/// lost token the engine waiting for it). The command's opcode says which stage of the shared
/// compute engine (GEMM or POST). nullopt when no engine holds a command (a lost command fetch).
std::optional<std::pair<emu::Stage, uint32_t>> hang_owner(const std::vector<emu::EngineStatus>& engines,
                                                          const workload::Program& program) {
  std::optional<std::pair<emu::Stage, uint32_t>> best;
  for (const auto& e : engines) {
    if (!e.cmd_id || *e.cmd_id >= program.commands.size()) continue;
    if (best && best->second <= *e.cmd_id) continue;
    emu::Stage stage = emu::Stage::Fetch;
    switch (program.commands[*e.cmd_id].opcode) {
      case isa::Opcode::Load: stage = emu::Stage::Load; break;
      case isa::Opcode::Gemm: stage = emu::Stage::Gemm; break;
      case isa::Opcode::Post: stage = emu::Stage::Post; break;
      case isa::Opcode::Store: stage = emu::Stage::Store; break;
      default: break;
    }
    best = std::pair{stage, *e.cmd_id};
  }
  return best;
}

/// The stage and cycle an assertion implicates, from the design's assertion port. An engine
/// that runs two stages (the NPU's compute: gemm and post) reports its first; the opcode of the
/// command it held says which.
std::optional<std::pair<emu::Stage, uint64_t>> implicated(
    const std::optional<emu::AssertionReport>& a, const workload::Program& program) {
  if (!a) return std::nullopt;
  emu::Stage stage = a->stage;
  if (stage == emu::Stage::Gemm && a->cmd < program.commands.size() &&
      program.commands[a->cmd].opcode == isa::Opcode::Post)
    stage = emu::Stage::Post;
  return {{stage, a->cycle}};
}

}  // namespace

void conclude(BisectReport& r, const TxnChecker& chk, const run::PreparedRun& p,
              bool results_failed, const std::string& result_detail, const RunEnd& end) {
  // Transactions missing only because the run stopped are consequences of the stop: they do not
  // compete with divergences seen while it ran.
  auto at_stop = [&](const Divergence& d) {
    return end.stopped && d.kind == Divergence::Kind::Missing && d.cycle >= end.cycle;
  };
  std::vector<Divergence> firsts;
  for (int s = 0; s < emu::kNumStages; ++s) {
    std::optional<Divergence> best;
    for (const auto& d : chk.divergences())
      if (d.stage == static_cast<emu::Stage>(s) && !at_stop(d) && (!best || d.cycle < best->cycle))
        best = d;
    if (best) firsts.push_back(*best);
  }
  std::stable_sort(firsts.begin(), firsts.end(), [](const Divergence& a, const Divergence& b) {
    return a.cycle != b.cycle ? a.cycle < b.cycle : a.stage < b.stage;
  });
  if (firsts.empty() && end.stopped && !chk.divergences().empty()) {
    // Only the stop shows: the stage the assertion names, or (a hang) the stage holding the
    // earliest command that never completed, dated to when progress stopped.
    std::optional<Divergence> pick;
    const auto imp = implicated(end.assertion, p.program);
    const auto owner = end.hang ? hang_owner(end.engines, p.program) : std::nullopt;
    if (owner) {
      // The command an engine still holds is the work that was lost; its own missing
      // transaction if it has one, else the command itself never completed.
      for (const auto& d : chk.divergences())
        if (d.stage == owner->first && d.cmd_id == owner->second && (!pick || d.cycle < pick->cycle))
          pick = d;
      if (!pick) {
        Divergence d;
        d.kind = Divergence::Kind::Missing;
        d.stage = owner->first;
        d.cmd_id = owner->second;
        pick = d;
      }
    }
    for (const auto& d : chk.divergences()) {
      if (owner) break;
      if (imp && d.stage != imp->first) continue;
      if (!pick || d.cmd_id < pick->cmd_id || (d.cmd_id == pick->cmd_id && d.stage < pick->stage))
        pick = d;
    }
    if (!pick && imp) {
      Divergence d;
      d.kind = Divergence::Kind::Extra;
      d.stage = imp->first;
      pick = d;
    }
    if (pick) {
      pick->cycle = imp ? imp->second
                        : (end.hang && end.cycle > end.hang_cycles ? end.cycle - end.hang_cycles
                                                                   : end.cycle);
      firsts.push_back(*pick);
      // Stages after it on the ladder that never completed their work are consequences; earlier
      // ones (e.g. fetch's END never dispatched) only show that the run stopped.
      for (int s = static_cast<int>(pick->stage) + 1; s < emu::kNumStages; ++s) {
        if (auto d = chk.first_of(static_cast<emu::Stage>(s))) {
          Divergence later = *d;
          later.cycle = end.cycle;
          firsts.push_back(later);
        }
      }
    }
  }
  for (int s = 2; s < 7; ++s) {
    const auto st = static_cast<emu::Stage>(s - 2);
    std::optional<Divergence> d;
    for (const auto& f : firsts)
      if (f.stage == st) d = f;
    if (!d && !end.stopped) d = chk.first_of(st);
    // The divergence without its "stage S diverged at cycle C: " (the line says both).
    std::string what = d ? render_divergence(*d, p) : "";
    if (auto colon = what.find(": "); colon != std::string::npos) what.erase(0, colon + 2);
    if (what.size() > 140) what = what.substr(0, 137) + "...";
    r.ladder.push_back(std::string(rung_name(static_cast<Rung>(s))) + ": " +
                       (d ? "DIVERGES at cycle " + std::to_string(d->cycle) + " (" + what + ")"
                          : "matches the golden model"));
  }
  r.ladder.push_back(std::string("result: ") + (results_failed ? "FAILS (" + result_detail + ")" : "matches"));
  if (firsts.empty()) {
    if (results_failed) {
      r.verdict = BisectVerdict::Fail;
      r.first_failing_stage = Rung::Result;
      r.persistent = true;
      r.message = "every stage matched the golden model, but the result did not: " + result_detail;
    } else {
      r.verdict = BisectVerdict::Pass;
      r.message = "no divergence: every stage and the results match the golden model";
    }
    return;
  }
  const Divergence& first = firsts.front();
  if (!results_failed) {
    r.verdict = BisectVerdict::Transient;
    for (const auto& d : firsts) {
      // The stage and cycle are fields of their own; the detail is what went wrong.
      std::string what = render_divergence(d, p);
      if (auto colon = what.find(": "); colon != std::string::npos) what.erase(0, colon + 2);
      r.transients.push_back({d.stage, d.cycle, what});
    }
    r.message = std::string(emu::stage_name(first.stage)) + " diverged at cycle " +
                std::to_string(first.cycle) + " but the results are right (overwritten or masked)";
    r.first_divergence_cycle = first.cycle;
    describe_first(first, p, r);
    return;
  }
  r.verdict = BisectVerdict::Fail;
  r.persistent = true;
  r.first_failing_stage = rung_of(first.stage);
  r.first_divergence_cycle = first.cycle;
  describe_first(first, p, r);
  for (size_t i = 1; i < firsts.size(); ++i) {
    const Rung s = rung_of(firsts[i].stage);
    if (std::find(r.downstream_stages.begin(), r.downstream_stages.end(), s) ==
        r.downstream_stages.end())
      r.downstream_stages.push_back(s);
  }
  r.downstream_stages.push_back(Rung::Result);
  r.message = std::string(rung_name(*r.first_failing_stage)) + " first went wrong at cycle " +
              std::to_string(first.cycle) + " on command #" + std::to_string(first.cmd_id) +
              (r.layer.empty() ? "" : " (layer " + r.layer + ")") + ": " + r.element +
              (r.expected.empty() && r.actual.empty() ? ""
                                                      : " expected " + r.expected + " actual " +
                                                            r.actual);
}

}  // namespace bud::debugger
