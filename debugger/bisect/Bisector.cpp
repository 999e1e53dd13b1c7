#include "debugger/bisect/Bisector.h"

#include <algorithm>
#include <cstring>
#include <functional>

#include "bud/ModelRevision.h"
#include "emu/drive/Driver.h"
#include "emu/drive/Intervention.h"
#include "emu/golden/Checker.h"
#include "emu/run/Designs.h"
#include "replay/PacketReader.h"
#include "replay/PacketRun.h"

namespace bud::debugger {

namespace {

// The rungs between lowering and the results are the dataflow stages, in the same order.
static_assert(static_cast<int>(Rung::Store) - static_cast<int>(Rung::Fetch) + 1 == emu::kNumStages);

/// The failure kind of a recorded symptom (a trigger halt or the cycle limit: Mismatch, as for
/// a live run that hit its cycle limit).
FailureKind failure_kind_of(const replay::pb::Symptom& s) {
  switch (s.kind()) {
    case replay::pb::Symptom::ASSERTION: return FailureKind::Assertion;
    case replay::pb::Symptom::HANG: return FailureKind::Hang;
    case replay::pb::Symptom::DESIGN_ERROR: return FailureKind::Error;
    default: return FailureKind::Mismatch;
  }
}

/// DRAM byte address -> "tensor NAME [y,x,c]" if it lies in a layer output.
std::string tensor_element(const workload::Program& p, uint32_t addr) {
  for (const auto& t : p.tensors) {
    if (addr < t.addr || addr >= t.addr + t.bytes || t.row_pitch == 0 || t.pixel_pitch == 0)
      continue;
    const uint32_t off = addr - t.addr;
    const int64_t y = static_cast<int64_t>(off / t.row_pitch) - t.border;
    const int64_t x = static_cast<int64_t>((off % t.row_pitch) / t.pixel_pitch) - t.border;
    const int64_t c = static_cast<int64_t>(off % t.pixel_pitch);
    return "tensor " + t.name + " [" + std::to_string(y) + "," + std::to_string(x) + "," +
           std::to_string(c) + "]";
  }
  return "";
}

/// "[1, -3, ...]": a transaction's data as int32 lanes (ACC) or int8 values.
std::string lanes(const emu::StageTxn& t) {
  std::string s = "[";
  const bool acc = t.stage == emu::Stage::Gemm || (t.stage == emu::Stage::Load && t.buffer == 2);
  const size_t n = acc ? t.size / 4 : t.size;
  for (size_t i = 0; i < n && i < 64; ++i) {
    int v;
    if (acc) {
      int32_t x;
      std::memcpy(&x, t.data.data() + 4 * i, 4);
      v = x;
    } else {
      v = static_cast<int8_t>(t.data[i]);
    }
    s += (i ? ", " : "") + std::to_string(v);
  }
  return s + "]";
}

}  // namespace

/// What exactly differs between an expected and an actual transaction.
void describe_element(const Divergence& d, const run::PreparedRun& p, BisectReport& r) {
  const auto* e = d.expected ? &*d.expected : nullptr;
  const auto* a = d.actual ? &*d.actual : nullptr;
  if (!e && !a) {
    // A hang whose owner produced every transaction it should have but never retired its command
    // (a lost write acknowledgement, a token that never came).
    r.element = "command #" + std::to_string(d.cmd_id) + " never completed";
    r.expected = "command #" + std::to_string(d.cmd_id) + " retires";
    r.actual = "(never retired)";
    return;
  }
  const auto& any = a ? *a : *e;
  char buf[160];
  switch (any.stage) {
    case emu::Stage::Fetch: {
      auto decode = [](const emu::StageTxn& t) {
        std::array<uint64_t, 4> w{};
        std::memcpy(w.data(), t.data.data(), 32);
        return isa::Command::decode(w).to_string();
      };
      r.element = "command #" + std::to_string(any.cmd_id);
      if (e) r.expected = decode(*e);
      if (a) r.actual = decode(*a);
      return;
    }
    case emu::Stage::Gemm:
    case emu::Stage::Load: {
      const bool acc = any.stage == emu::Stage::Gemm || any.buffer == 2;
      const char* buf_name = isa::buffer_name(static_cast<isa::Buffer>(any.buffer));
      if (a && e && acc) {
        for (int lane = 0; lane < 8; ++lane) {
          int32_t x, y;
          std::memcpy(&x, e->data.data() + 4 * lane, 4);
          std::memcpy(&y, a->data.data() + 4 * lane, 4);
          if (x != y) {
            std::snprintf(buf, sizeof buf, "%s[%u] lane %d", buf_name, any.addr, lane);
            r.element = buf;
            r.expected = std::to_string(x);
            r.actual = std::to_string(y);
            return;
          }
        }
      }
      if (a && e) {
        for (size_t i = 0; i < any.size; ++i) {
          if (e->data[i] != a->data[i]) {
            std::snprintf(buf, sizeof buf, "%s[%u] byte %zu", buf_name, any.addr, i);
            r.element = buf;
            r.expected = std::to_string(static_cast<int8_t>(e->data[i]));
            r.actual = std::to_string(static_cast<int8_t>(a->data[i]));
            return;
          }
        }
      }
      std::snprintf(buf, sizeof buf, "%s[%u]", buf_name, any.addr);
      r.element = buf;
      r.expected = e ? lanes(*e) : "(nothing)";
      r.actual = a ? lanes(*a) : "(never written)";
      return;
    }
    case emu::Stage::Post: {
      if (a && e) {
        for (int lane = 0; lane < 8; ++lane) {
          if (e->data[lane] != a->data[lane]) {
            std::snprintf(buf, sizeof buf, "out[%u] lane %d", any.addr, lane);
            r.element = buf;
            r.expected = std::to_string(static_cast<int8_t>(e->data[lane]));
            r.actual = std::to_string(static_cast<int8_t>(a->data[lane]));
            return;
          }
        }
      }
      std::snprintf(buf, sizeof buf, "out[%u]", any.addr);
      r.element = buf;
      r.expected = e ? lanes(*e) : "(nothing)";
      r.actual = a ? lanes(*a) : "(never written)";
      return;
    }
    case emu::Stage::Store: {
      if (a && e && a->addr == e->addr) {
        for (size_t i = 0; i < any.size; ++i) {
          if (e->data[i] != a->data[i]) {
            const std::string t = tensor_element(p.program, any.addr + static_cast<uint32_t>(i));
            std::snprintf(buf, sizeof buf, "dram 0x%x", any.addr + static_cast<uint32_t>(i));
            r.element = std::string(buf) + (t.empty() ? "" : " (" + t + ")");
            r.expected = std::to_string(static_cast<int8_t>(e->data[i]));
            r.actual = std::to_string(static_cast<int8_t>(a->data[i]));
            return;
          }
        }
      }
      r.element = "DRAM write of command #" + std::to_string(any.cmd_id);
      auto where = [](const emu::StageTxn& t) {
        char h[48];
        std::snprintf(h, sizeof h, "0x%x (%u bytes)", t.addr, t.size);
        return std::string(h);
      };
      r.expected = e ? where(*e) : "(nothing)";
      r.actual = a ? where(*a) : "(never written)";
      return;
    }
  }
}

namespace {

/// Fills the verdict from what the checker found and whether the results are wrong.
/// How the run ended, for divergences that only show because it stopped.
struct RunEnd {
  uint64_t cycle = 0;        ///< cycle the re-simulation ended at
  bool stopped = false;      ///< by an assertion, a hang or an error (not by finishing)
  std::optional<emu::AssertionReport> assertion;  ///< what the design's assertion port said
  uint64_t hang_cycles = 0;  ///< watchdog setting, to date a hang's start
  bool hang = false;
  std::vector<emu::EngineStatus> engines;  ///< what each engine held when the run stopped
};

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

/// The command, layer and element of the first divergence, for every verdict that has one.
void describe_first(const Divergence& first, const run::PreparedRun& p, BisectReport& r) {
  r.command_index = first.cmd_id;
  r.divergence_kind = first.kind;
  if (first.cmd_id < p.program.commands.size()) {
    r.command = p.program.commands[first.cmd_id].to_string();
    if (auto l = p.program.layer_of_command(first.cmd_id);
        l && *l >= 0 && static_cast<size_t>(*l) < p.workload.layers.size())
      r.layer = p.workload.layers[*l].name;
  }
  describe_element(first, p, r);
}

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
    std::string what = d ? d->describe() : "";
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
    for (const auto& d : firsts) r.transients.push_back({d.stage, d.cycle, d.describe()});
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

/// Whether the final state differs from the golden model's: outputs or DRAM data region.
bool final_state_failed(const run::PreparedRun& p, const GoldenTrace& trace, emu::Emulator& emu,
                        std::string& detail) {
  if (emu.state() != emu::RunState::Finished) {
    detail = std::string(emu::run_state_name(emu.state())) + " at cycle " +
             std::to_string(emu.cycle());
    return true;
  }
  const auto out = golden::check_outputs(p.program, p.reference, [&](uint32_t a, std::span<uint8_t> o) {
    return emu.read_memory("dram", a, o);
  });
  if (!out.ok()) {
    detail = out.summary();
    return true;
  }
  // Every layer's output in DRAM (inputs and weights are the run's inputs, not its results:
  // a fault injected there is not a difference in what the NPU computed).
  for (const auto& t : p.program.tensors) {
    if (t.role != workload::TensorRole::Activation || t.layer < 0) continue;
    std::vector<uint8_t> rtl(t.bytes);
    if (rtl.empty() || !emu.read_memory("dram", t.addr, rtl)) continue;
    if (t.addr + rtl.size() > trace.dram.size()) continue;
    if (std::memcmp(rtl.data(), trace.dram.data() + t.addr, rtl.size()) == 0) continue;
    for (size_t i = 0; i < rtl.size(); ++i)
      if (rtl[i] != trace.dram[t.addr + i]) {
        char b[96];
        std::snprintf(b, sizeof b, "DRAM 0x%zx (tensor %s) differs from the golden model",
                      t.addr + i, t.name.c_str());
        detail = b;
        break;
      }
    return true;
  }
  return false;
}

/// The first byte of a layer output in the final DRAM that differs from the golden model's.
std::optional<uint32_t> first_wrong_output_byte(const run::PreparedRun& p, const GoldenTrace& trace,
                                                emu::Emulator& emu) {
  for (const auto& t : p.program.tensors) {
    if (t.role != workload::TensorRole::Activation || t.layer < 0) continue;
    if (t.bytes == 0 || t.addr + t.bytes > trace.dram.size()) continue;
    std::vector<uint8_t> rtl(t.bytes);
    if (!emu.read_memory("dram", t.addr, rtl)) continue;
    for (size_t i = 0; i < rtl.size(); ++i)
      if (rtl[i] != trace.dram[t.addr + i]) return static_cast<uint32_t>(t.addr + i);
  }
  return std::nullopt;
}

/// Steps `emu` from where it is to `end` and returns the cycle from which DRAM byte `addr` differs
/// from `want` for good: after the last cycle it held `want` (or, if it never did from here, the
/// last cycle it changed). The state at cycle N is the state after N edges.
std::optional<uint64_t> date_wrong_byte(emu::Emulator& emu, uint32_t addr, uint8_t want, uint64_t end,
                                        drive::Participant* actor) {
  // A pause every cycle: the byte is read after each edge.
  struct ByteWatch final : drive::Participant {
    emu::Emulator* emu = nullptr;
    uint32_t addr = 0;
    uint8_t want = 0, prev = 0;
    bool seen_right = false;
    std::optional<uint64_t> wrong_from, last_change;
    uint64_t next_pause(uint64_t now) const override { return now + 1; }
    drive::PauseAction on_pause(uint64_t cycle) override {
      uint8_t b = 0;
      emu->read_memory("dram", addr, {&b, 1});
      if (b != prev) last_change = cycle;
      prev = b;
      if (b == want) {
        seen_right = true;
        wrong_from.reset();
      } else if (seen_right && !wrong_from) {
        wrong_from = cycle;
      }
      return drive::PauseAction::Continue;
    }
  } watch;
  uint8_t b = 0;
  if (!emu.read_memory("dram", addr, {&b, 1})) return std::nullopt;
  watch.emu = &emu;
  watch.addr = addr;
  watch.want = want;
  watch.prev = b;
  watch.seen_right = b == want;
  drive::advance(emu, end, {actor, &watch});
  return watch.seen_right ? watch.wrong_from : watch.last_change;
}

/// Completes a result-only verdict (every stage matched, the results did not): the element,
/// golden and actual values of the first wrong output byte, the layer and STORE command that wrote
/// it, and the cycle it went wrong (`date` positions the emulator and dates the byte).
void complete_result_verdict(BisectReport& r, const run::PreparedRun& p, const GoldenTrace& trace,
                             uint32_t addr, uint8_t actual,
                             const std::function<std::optional<uint64_t>(uint32_t, uint8_t)>& date) {
  const uint8_t want = trace.dram[addr];
  const std::string where = tensor_element(p.program, addr);
  char b[64];
  std::snprintf(b, sizeof b, "dram 0x%x", addr);
  r.element = std::string(b) + (where.empty() ? "" : " (" + where + ")");
  r.expected = std::to_string(static_cast<int8_t>(want));
  r.actual = std::to_string(static_cast<int8_t>(actual));
  r.divergence_kind = Divergence::Kind::Wrong;
  trace.replay([&](const emu::StageTxn& t, uint64_t) {
    if (t.stage == emu::Stage::Store && addr >= t.addr && addr < t.addr + t.size)
      r.command_index = t.cmd_id;  // the last write
  });
  if (r.command_index && *r.command_index < p.program.commands.size()) {
    r.command = p.program.commands[*r.command_index].to_string();
    if (auto l = p.program.layer_of_command(*r.command_index);
        l && *l >= 0 && static_cast<size_t>(*l) < p.workload.layers.size())
      r.layer = p.workload.layers[*l].name;
  }
  r.first_divergence_cycle = date(addr, want);
  r.message += "; first wrong byte " + r.element + " expected " + r.expected + " actual " +
               r.actual + (r.first_divergence_cycle
                               ? " since cycle " + std::to_string(*r.first_divergence_cycle)
                               : "");
}

void write_wave(const BisectOptions& o, BisectReport& r, emu::Emulator& emu,
                const std::function<bool()>& rewind, uint64_t run_end,
                drive::Participant* actor = nullptr) {
  if (o.wave_file.empty() || !r.first_divergence_cycle) return;
  if (!rewind()) return;
  const uint64_t div = *r.first_divergence_cycle;
  const uint64_t from = div > o.wave_radius ? div - o.wave_radius : 0;
  const uint64_t start = emu.cycle();
  if (from > start) drive::advance(emu, from, {actor});
  if (!emu.wave_open(o.wave_file).empty()) return;
  const uint64_t to = std::min(run_end, div + o.wave_radius);
  if (to > emu.cycle()) drive::advance(emu, to, {actor});
  emu.wave_close();
  r.wave_file = o.wave_file;
  r.resimulated_cycles += emu.cycle() - start;
}

}  // namespace

std::string BisectReport::text() const {
  std::string s;
  s += std::string("verdict    ") + bisect_verdict_name(verdict) +
       (message.empty() ? "" : ": " + message) + "\n";
  if (first_failing_stage)
    s += std::string("first failing stage  ") + rung_name(*first_failing_stage) + "\n";
  if (first_divergence_cycle) s += "cycle      " + std::to_string(*first_divergence_cycle) + "\n";
  if (command_index)
    s += "command    " + command +
         (layer.empty() ? "" : "  [layer " + layer + "]") + "\n";
  if (!element.empty()) s += "element    " + element + "\n";
  if (!expected.empty() || !actual.empty())
    s += "expected   " + expected + "\nactual     " + actual + "\n";
  if (!downstream_stages.empty()) {
    s += "downstream ";
    for (size_t i = 0; i < downstream_stages.size(); ++i)
      s += std::string(i ? ", " : "") + rung_name(downstream_stages[i]);
    s += "\n";
  }
  if (verdict == BisectVerdict::Fail) s += std::string("persistent ") + (persistent ? "yes" : "no") + "\n";
  for (const auto& t : transients)
    s += std::string("transient  ") + emu::stage_name(t.stage) + " at cycle " + std::to_string(t.cycle) + ": " + t.detail + "\n";
  if (!symptom.empty()) s += "symptom    " + symptom + "\n";
  s += "cost       re-simulated " + std::to_string(resimulated_cycles) + " of " +
       std::to_string(run_cycles) + " cycles";
  if (run_cycles) {
    char b[32];
    std::snprintf(b, sizeof b, " (%.3f)", static_cast<double>(resimulated_cycles) / run_cycles);
    s += b;
  }
  if (windows_checked) s += "; " + std::to_string(windows_checked) + " recorded windows checked without simulating";
  s += "\n";
  if (!wave_file.empty()) s += "waveform   " + wave_file + "\n";
  s += "ladder\n";
  for (const auto& l : ladder) s += "  " + l + "\n";
  return s;
}

json::Json BisectReport::to_json() const {
  json::Json j = json::Json::object();
  j["verdict"] = bisect_verdict_name(verdict);
  j["message"] = message;
  j["first_failing_stage"] =
      first_failing_stage ? json::Json(rung_name(*first_failing_stage)) : json::Json();
  j["first_divergence_cycle"] =
      first_divergence_cycle ? json::Json(*first_divergence_cycle) : json::Json();
  j["persistent"] = persistent;
  j["command_index"] =
      command_index ? json::Json(static_cast<uint64_t>(*command_index)) : json::Json();
  j["command"] = command;
  j["layer"] = layer;
  j["element"] = element;
  j["expected"] = expected;
  j["actual"] = actual;
  j["divergence_kind"] = divergence_kind ? Divergence::kind_name(*divergence_kind) : "";
  json::Json ds = json::Json::array();
  for (const auto& d : downstream_stages) ds.push_back(rung_name(d));
  j["downstream_stages"] = ds;
  json::Json ts = json::Json::array();
  for (const auto& t : transients) {
    json::Json x = json::Json::object();
    x["stage"] = emu::stage_name(t.stage);
    x["cycle"] = t.cycle;
    x["detail"] = t.detail;
    ts.push_back(x);
  }
  j["transients"] = ts;
  j["symptom"] = symptom;
  j["run_cycles"] = run_cycles;
  j["resimulated_cycles"] = resimulated_cycles;
  j["resimulated_fraction"] =
      run_cycles ? static_cast<double>(resimulated_cycles) / static_cast<double>(run_cycles) : 0.0;
  j["windows_checked"] = windows_checked;
  j["wave_file"] = wave_file.empty() ? json::Json() : json::Json(wave_file);
  json::Json l = json::Json::array();
  for (const auto& x : ladder) l.push_back(x);
  j["ladder"] = l;
  return j;
}

BisectReport bisect_run(const run::PreparedRun& p, const run::RunOptions& options,
                        const BisectOptions& bopts) {
  BisectReport r;
  r.ladder.push_back("ingress: the workload is valid");
  if (!p.lowering_failures.empty()) {
    r.verdict = BisectVerdict::Fail;
    r.first_failing_stage = Rung::Lowering;
    r.persistent = true;
    r.message = p.lowering_failures.front();
    r.ladder.push_back("lowering: FAILS (" + r.message + ")");
    return r;
  }
  const GoldenTrace trace = GoldenTrace::build(p);
  if (!trace.error.empty()) {
    r.verdict = BisectVerdict::Fail;
    r.first_failing_stage = Rung::Lowering;
    r.message = "the golden model rejects the command stream: " + trace.error;
    r.ladder.push_back("lowering: FAILS (" + r.message + ")");
    return r;
  }
  r.ladder.push_back("lowering: the golden model's command stream matches the direct reference");
  auto made = emu::make_emulator(options.emulator, r.message);
  if (!made) return r;
  emu::Emulator& emu = *made;
  if (auto e = run::start(p, options, emu); !e.empty()) {
    r.message = e;
    return r;
  }
  TxnChecker chk(trace, std::array<emu::StageDigest, emu::kNumStages>{});
  drive::HookParticipant checking(nullptr, &chk);
  drive::advance(emu, options.max_cycles, {&checking});
  chk.finish(emu.cycle());
  r.run_cycles = emu.cycle();
  r.resimulated_cycles = emu.cycle();
  std::string detail;
  const bool failed = final_state_failed(p, trace, emu, detail);
  r.symptom = failed ? detail : "";
  r.failure = failed ? failure_kind_of(emu.state()) : FailureKind::None;
  RunEnd end;
  end.cycle = emu.cycle();
  end.stopped = emu.state() != emu::RunState::Finished;
  end.hang = emu.state() == emu::RunState::Hang || emu.state() == emu::RunState::Ready;
  end.assertion = emu.assertion();
  end.hang_cycles = options.emulator.hang_cycles;
  end.engines = emu.engines();
  conclude(r, chk, p, failed, detail, end);
  if (r.first_failing_stage == Rung::Result && emu.state() == emu::RunState::Finished) {
    if (auto addr = first_wrong_output_byte(p, trace, emu)) {
      uint8_t actual = 0;
      emu.read_memory("dram", *addr, {&actual, 1});
      const uint64_t run_end = emu.cycle();
      complete_result_verdict(r, p, trace, *addr, actual, [&](uint32_t a, uint8_t want) {
        if (!run::start(p, options, emu).empty()) return std::optional<uint64_t>();
        r.resimulated_cycles += run_end;
        return date_wrong_byte(emu, a, want, run_end, nullptr);
      });
    }
  }
  write_wave(bopts, r, emu, [&] {
    return run::start(p, options, emu).empty();
  }, r.run_cycles);
  return r;
}

BisectReport bisect_packet(const replay::Packet& packet, const BisectOptions& bopts) {
  BisectReport r;
  if (!packet.complete) {
    r.message = packet.name + ": incomplete packet (" + packet.incomplete +
                "); bisect needs a finished recording";
    return r;
  }
  auto spec = replay::spec_from_header(packet.header);
  if (!spec) {
    r.message = packet.name + ": " + spec.error();
    return r;
  }
  // The revision this bud has for the packet's design (an array variant's own revision).
  std::string design_error;
  const std::string revision = emu::packet_design_revision(packet.header.design(), design_error);
  if (revision.empty()) {
    r.message = packet.name + ": " + design_error;
    return r;
  }
  if (!bopts.allow_revision_mismatch && packet.header.model_revision() != revision) {
    r.message = packet.name + " was recorded with model revision " +
                packet.header.model_revision() + ", this is " + revision +
                " (use --allow-revision-mismatch)";
    return r;
  }
  // A packet whose embedded run cannot be prepared here is unusable (exit 125), never a verdict
  // about the design.
  auto prepared = replay::prepare_spec(*spec, true);
  if (!prepared) {
    r.message = packet.name + ": unusable packet: " + prepared.error();
    r.ladder.push_back("ingress: cannot prepare the packet's run (" + prepared.error() + ")");
    return r;
  }
  const auto& p = *prepared;
  r.ladder.push_back("ingress: the workload is valid");
  if (!p.lowering_failures.empty()) {
    r.verdict = BisectVerdict::Fail;
    r.first_failing_stage = Rung::Lowering;
    r.persistent = true;
    r.message = p.lowering_failures.front();
    r.ladder.push_back("lowering: FAILS (" + r.message + ")");
    return r;
  }
  const GoldenTrace trace = GoldenTrace::build(p);
  r.ladder.push_back("lowering: the golden model's command stream matches the direct reference");
  r.run_cycles = packet.last_cycle();
  if (packet.symptom) {
    r.symptom = replay::symptom_kind_name(packet.symptom->kind()) + std::string(" at cycle ") +
                std::to_string(packet.symptom->cycle()) + ": " + packet.symptom->message();
    r.failure = failure_kind_of(*packet.symptom);
  }

  // 1. The recorded windows, checked against the golden prefix digests without simulating.
  const auto& windows = packet.windows;
  auto totals = [](const replay::pb::StageTotals& t) {
    emu::StageDigest d;
    d.count = t.count();
    d.sum = t.sum();
    d.open_cmd = t.open_cmd();
    d.open_count = t.open_count();
    d.open_sum = t.open_sum();
    return d;
  };
  std::vector<bool> ok(windows.size(), true);
  for (size_t w = 0; w < windows.size(); ++w) {
    for (int s = 0; s < emu::kNumStages && s < windows[w].stages_size(); ++s)
      if (!trace.digest_consistent(static_cast<emu::Stage>(s), totals(windows[w].stages(s))))
        ok[w] = false;
  }
  r.windows_checked = windows.size();
  // First window of the all-divergent suffix; a clean window before it is a safe start.
  size_t first_bad = windows.size();
  while (first_bad > 0 && !ok[first_bad - 1]) --first_bad;
  // 2. Re-execute from the checkpoint at the start of that window (or the latest before it).
  uint64_t from_cycle = first_bad < windows.size() ? windows[first_bad].start_cycle()
                                                    : (windows.empty() ? 0 : windows.back().start_cycle());
  auto ck = packet.checkpoint_at_or_before(from_cycle);
  // The stage digests at a checkpoint come from the window that ends there.
  auto digests_at = [&](uint64_t cycle) {
    std::array<emu::StageDigest, emu::kNumStages> out{};
    for (const auto& w : windows)
      if (w.end_cycle() == cycle)
        for (int s = 0; s < emu::kNumStages && s < w.stages_size(); ++s) out[s] = totals(w.stages(s));
    return out;
  };
  auto made = emu::make_emulator(spec->options.emulator, r.message);
  if (!made) return r;
  emu::Emulator& emu = *made;
  if (auto e = run::start(p, spec->options, emu); !e.empty()) {
    r.message = e;
    return r;
  }
  uint64_t start_cycle = 0;
  auto rewind = [&]() -> bool {
    if (auto e = run::start(p, spec->options, emu); !e.empty()) return false;
    if (ck && packet.checkpoints[*ck].cycle() > 0) {
      std::string error;
      auto state = packet.checkpoint_state(*ck, error);
      if (!state || !emu.restore(*state, error)) {
        r.message = "checkpoint at cycle " + std::to_string(packet.checkpoints[*ck].cycle()) +
                    ": " + error;
        return false;
      }
    }
    return true;
  };
  const uint64_t stop_at = first_bad < windows.size() ? windows[first_bad].end_cycle() : UINT64_MAX;
  const uint64_t limit = spec->options.max_cycles;
  // The packet's interventions (deposits and forces made at a prompt) happen again.
  std::vector<drive::Intervention> log;
  for (const auto& rec : packet.interventions) {
    std::string error;
    auto iv = replay::intervention_from(rec, emu, error);
    if (!iv) {
      r.message = packet.name + ": " + error;
      return r;
    }
    log.push_back(std::move(*iv));
  }
  drive::InterventionActor actor(emu, log);
  std::optional<TxnChecker> checker;
  // Runs through the first divergent window, and on (to the end, if need be) until a divergence
  // is pinned, or until the checker finds the start caught a command mid-way.
  struct Pinned final : drive::Participant {
    std::optional<TxnChecker>* checker = nullptr;
    uint64_t stop_at = 0;
    emu::TxnObserver* txn_observer() override { return &**checker; }
    uint64_t next_pause(uint64_t) const override { return stop_at; }
    drive::PauseAction on_pause(uint64_t cycle) override {
      const bool pinned = cycle >= stop_at && (*checker)->divergence_count() > 0;
      return pinned || (*checker)->before_start() ? drive::PauseAction::Halt
                                                  : drive::PauseAction::Continue;
    }
  } pinned;
  pinned.checker = &checker;
  pinned.stop_at = stop_at;
  for (;;) {
    if (!rewind()) return r;
    start_cycle = emu.cycle();
    checker.emplace(trace, start_cycle > 0 ? digests_at(start_cycle)
                                           : std::array<emu::StageDigest, emu::kNumStages>{});
    drive::advance(emu, limit, {&actor, &pinned});
    if (emu.state() != emu::RunState::Ready) checker->finish(emu.cycle());
    // A command caught mid-way at the checkpoint had produced wrong transactions before it: the
    // divergence lies earlier. Start again one checkpoint back (the reset at the latest).
    if (!checker->before_start() || !ck || packet.checkpoints[*ck].cycle() == 0) break;
    r.resimulated_cycles += emu.cycle() - start_cycle;
    ck = *ck > 0 ? std::optional<size_t>(*ck - 1) : std::nullopt;
  }
  const TxnChecker& chk = *checker;
  r.resimulated_cycles += emu.cycle() - start_cycle;
  // 3. Persistence from what the run itself recorded.
  bool failed = false;
  std::string detail;
  if (packet.symptom) {
    const auto kind = packet.symptom->kind();
    if (kind != replay::pb::Symptom::RESULT_MISMATCH) {
      failed = true;
      detail = r.symptom;
    }
    for (const auto& d : packet.symptom->details())
      if (d.rfind("outputs:", 0) == 0 || d.rfind("lowering:", 0) == 0) {
        failed = true;
        detail = d;
      }
  }
  RunEnd end;
  end.cycle = emu.cycle();
  end.stopped = emu.state() != emu::RunState::Ready && emu.state() != emu::RunState::Finished;
  end.hang = emu.state() == emu::RunState::Hang;
  end.assertion = emu.assertion();
  end.hang_cycles = spec->options.emulator.hang_cycles;
  end.engines = emu.engines();
  conclude(r, chk, p, failed, detail, end);
  if (r.first_failing_stage == Rung::Result && emu.state() == emu::RunState::Finished) {
    if (auto addr = first_wrong_output_byte(p, trace, emu)) {
      uint8_t actual = 0;
      emu.read_memory("dram", *addr, {&actual, 1});
      const uint64_t run_end = emu.cycle();
      complete_result_verdict(r, p, trace, *addr, actual, [&](uint32_t a, uint8_t want) {
        // From the latest checkpoint at which the byte still held the golden value (the reset
        // if none did), cycle by cycle.
        std::optional<size_t> start;
        for (size_t i = packet.checkpoints.size(); i-- > 0;) {
          ck = i;
          uint8_t b = 0;
          if (rewind() && emu.read_memory("dram", a, {&b, 1}) && b == want) {
            start = i;
            break;
          }
        }
        ck = start;
        if (!rewind()) return std::optional<uint64_t>();
        const uint64_t from = emu.cycle();
        const auto c = date_wrong_byte(emu, a, want, run_end, &actor);
        r.resimulated_cycles += emu.cycle() - from;
        return c;
      });
    }
  }
  // Downstream stages also from the recorded end totals (no simulation needed).
  if (!windows.empty() && r.verdict == BisectVerdict::Fail) {
    const auto& last = windows.back();
    for (int s = 0; s < emu::kNumStages && s < last.stages_size(); ++s) {
      const Rung name = rung_of(static_cast<emu::Stage>(s));
      emu::StageDigest d{last.stages(s).count(), last.stages(s).sum()};
      const bool same = d == trace.stream(static_cast<emu::Stage>(s)).total;
      if (!same && name != r.first_failing_stage &&
          std::find(r.downstream_stages.begin(), r.downstream_stages.end(), name) ==
              r.downstream_stages.end() &&
          name > *r.first_failing_stage)
        r.downstream_stages.insert(r.downstream_stages.end() - 1, name);
    }
  }
  write_wave(bopts, r, emu, rewind, r.run_cycles, &actor);
  return r;
}

const char* bisect_verdict_name(BisectVerdict v) {
  switch (v) {
    case BisectVerdict::Fail: return "fail";
    case BisectVerdict::Pass: return "pass";
    case BisectVerdict::Transient: return "transient";
    case BisectVerdict::Error: return "error";
  }
  return "?";
}

const char* rung_name(Rung r) {
  switch (r) {
    case Rung::Ingress: return "ingress";
    case Rung::Lowering: return "lowering";
    case Rung::Result: return "result";
    default:
      return emu::stage_name(
          static_cast<emu::Stage>(static_cast<int>(r) - static_cast<int>(Rung::Fetch)));
  }
}

Rung rung_of(emu::Stage s) {
  return static_cast<Rung>(static_cast<int>(Rung::Fetch) + static_cast<int>(s));
}

const char* failure_kind_name(FailureKind k) {
  switch (k) {
    case FailureKind::None: return "none";
    case FailureKind::Mismatch: return "mismatch";
    case FailureKind::Assertion: return "assertion";
    case FailureKind::Hang: return "hang";
    case FailureKind::Error: return "error";
  }
  return "?";
}

FailureKind failure_kind_of(emu::RunState state) {
  switch (state) {
    case emu::RunState::Assertion: return FailureKind::Assertion;
    case emu::RunState::Hang: return FailureKind::Hang;
    case emu::RunState::Error: return FailureKind::Error;
    default: return FailureKind::Mismatch;
  }
}

}  // namespace bud::debugger
