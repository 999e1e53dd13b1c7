#include "debugger/bisect/Minimizer.h"

#include <google/protobuf/text_format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "debugger/bisect/Bisector.h"
#include "emu/drive/Driver.h"
#include "emu/run/Designs.h"
#include "emu/workload/Lowering.h"
#include "emu/workload/Workload.h"
#include "workload.pb.h"

namespace bud::debugger {

namespace {

namespace pb = bud::workload;

/// What a candidate run showed.
struct Outcome {
  bool valid = false;       ///< the workload parsed and lowered
  FailureKind kind = FailureKind::None;  ///< None: the candidate passed
  std::optional<Rung> stage;             ///< first failing stage
  uint64_t cycles = 0;
  uint64_t commands = 0;
  uint32_t layers = 0;
  std::optional<uint32_t> command;  ///< the command the failure was pinned to
};

FailureKind failure_of(const BisectReport& r) {
  if (r.verdict != BisectVerdict::Fail) return FailureKind::None;
  // A failure localized before the run (ingress, lowering) has no run symptom: results differ.
  return r.failure == FailureKind::None ? FailureKind::Mismatch : r.failure;
}

std::optional<run::PreparedRun> prepare_input(const MinimizeInput& in) {
  workload::LoadOptions lo;
  lo.seed = in.options.seed;
  auto w = workload::parse_workload(in.workload_text, "candidate", lo);
  if (!w) return std::nullopt;
  run::RunOptions opts = in.options;
  opts.progress = nullptr;
  auto prepared = run::prepare_workload(std::move(w).value(), opts);
  if (!prepared) return std::nullopt;
  return std::move(prepared).value();
}

// --- Faults that follow their command --------------------------------------------------------

/// A command's identity across reductions: its layer, opcode and ordinal among the layer's
/// commands of that opcode.
struct CmdKey {
  std::string layer;
  isa::Opcode op = isa::Opcode::Sync;
  uint32_t ordinal = 0;
  uint32_t of = 0;  ///< the layer's commands of that opcode in the original run
  std::string text() const {
    return isa::opcode_name(static_cast<uint8_t>(op)) + " " + std::to_string(ordinal) + " of layer '" +
           layer + "'";
  }
};

std::optional<CmdKey> key_of(const run::PreparedRun& p, uint32_t cmd) {
  const auto& cmds = p.program.commands;
  if (cmd >= cmds.size()) return std::nullopt;
  const auto layer = p.program.layer_of_command(cmd);
  if (!layer || *layer < 0 || static_cast<size_t>(*layer) >= p.workload.layers.size())
    return std::nullopt;
  CmdKey k{p.workload.layers[*layer].name, cmds[cmd].opcode, 0, 0};
  for (uint32_t i = 0; i < cmds.size(); ++i) {
    if (cmds[i].opcode != k.op || p.program.layer_of_command(i) != layer) continue;
    if (i < cmd) ++k.ordinal;
    ++k.of;
  }
  return k;
}

/// The command with key `k` in `p`, or why there is none. When the layer has fewer commands of
/// that opcode now (its rows were halved), the one at the same place in the layer, and `why`
/// says so.
std::optional<uint32_t> cmd_of(const run::PreparedRun& p, const CmdKey& k, std::string& why) {
  std::optional<int> layer;
  for (size_t l = 0; l < p.workload.layers.size(); ++l)
    if (p.workload.layers[l].name == k.layer) layer = static_cast<int>(l);
  if (!layer) {
    why = "layer '" + k.layer + "' was removed";
    return std::nullopt;
  }
  std::vector<uint32_t> same;  // the layer's commands of that opcode, in order
  for (uint32_t i = 0; i < p.program.commands.size(); ++i)
    if (p.program.commands[i].opcode == k.op && p.program.layer_of_command(i) == layer)
      same.push_back(i);
  if (k.ordinal < same.size()) return same[k.ordinal];
  why = "layer '" + k.layer + "' has " + std::to_string(same.size()) + " " +
        isa::opcode_name(static_cast<uint8_t>(k.op)) + " commands now, the fault's was number " +
        std::to_string(k.ordinal) + " of " + std::to_string(k.of);
  if (same.empty() || k.of == 0) return std::nullopt;
  const auto at = static_cast<uint32_t>(uint64_t{k.ordinal} * same.size() / k.of);
  why += ": moved to number " + std::to_string(at) + ", the same place in the layer";
  return same[std::min<size_t>(at, same.size() - 1)];
}

/// The engine that executes commands of `op` ("" for none: SYNC, END).
std::string engine_of(isa::Opcode op) {
  switch (op) {
    case isa::Opcode::Load: return "load";
    case isa::Opcode::Gemm:
    case isa::Opcode::Post: return "compute";
    case isa::Opcode::Store: return "store";
    default: return "";
  }
}

/// The engine whose work a signal fault acts on ("compute.shift" -> compute), or "".
std::string signal_engine(const emu::FaultSpec& f) {
  if (f.kind != emu::FaultKind::Flip && f.kind != emu::FaultKind::Stuck) return "";
  const auto dot = f.target.find('.');
  const std::string unit = dot == std::string::npos ? "" : f.target.substr(0, dot);
  return unit == "load" || unit == "compute" || unit == "store" ? unit : "";
}

/// Watches which command the load, compute and store engines hold, and since when (engines
/// hold one command at a time), and calls `each` after every cycle (true: stop the run).
class TakeWatch final : public emu::CycleHook, public drive::Participant {
 public:
  using Each = std::function<bool(const TakeWatch&, uint64_t cycle)>;
  TakeWatch(emu::Emulator& emu, Each each) : emu_(emu), each_(std::move(each)) {
    for (const char* e : {"load", "compute", "store"}) {
      auto st = emu.find_signal(std::string(e) + ".state");
      auto id = emu.find_signal(std::string(e) + ".id_q");
      if (st && id) engines_.push_back({e, *st, *id});
    }
  }
  bool after_cycle(uint64_t cycle) override {
    for (auto& e : engines_) {
      const bool held = emu_.read_signal(e.state).low() != 0;
      const auto cmd = static_cast<uint32_t>(emu_.read_signal(e.id).low());
      if (held && (!e.held || cmd != e.cmd)) e.since = cycle;
      e.held = held;
      e.cmd = cmd;
    }
    done_ = each_(*this, cycle);
    return done_;
  }
  // drive::Participant: watches every cycle; `each` saying stop halts the run.
  emu::CycleHook* cycle_hook() override { return this; }
  drive::PauseAction on_pause(uint64_t) override {
    return done_ ? drive::PauseAction::Halt : drive::PauseAction::Continue;
  }
  /// The command `engine` holds now and the cycle it took it, if it holds one.
  std::optional<std::pair<uint32_t, uint64_t>> holding(const std::string& engine) const {
    for (const auto& e : engines_)
      if (e.name == engine && e.held) return std::make_pair(e.cmd, e.since);
    return std::nullopt;
  }

 private:
  struct Engine {
    std::string name;
    emu::SignalId state, id;
    bool held = false;
    uint32_t cmd = 0;
    uint64_t since = 0;
  };
  emu::Emulator& emu_;
  Each each_;
  bool done_ = false;
  std::vector<Engine> engines_;
};

/// Where a fault pinned to a cycle acts, in terms of the work: a command of its engine and the
/// cycles from when the engine took that command to the fault's cycle (negative: before).
struct Anchor {
  std::string engine;
  CmdKey key;
  int64_t offset = 0;
};

/// Runs `p` without its faults, watching the engines, until `each` says stop or the run ends.
void run_watching(const run::PreparedRun& p, const run::RunOptions& options, TakeWatch::Each each) {
  run::RunOptions o = options;
  o.faults.clear();
  std::string error;
  auto made = emu::make_emulator(o.emulator, error);
  if (!made) return;
  emu::Emulator& emu = *made;
  if (!run::start(p, o, emu).empty()) return;
  TakeWatch watch(emu, std::move(each));
  drive::advance(emu, o.max_cycles, {&watch});
}

/// The anchors of the original run's faults, with one line each for the result. Positions come
/// from the run without faults, so the faults' own effects cannot move them (and the candidates
/// are located the same way).
std::vector<std::optional<Anchor>> make_anchors(const MinimizeInput& in,
                                                std::optional<uint32_t> verdict_cmd,
                                                std::vector<std::string>& lines) {
  const auto& faults = in.options.faults;
  std::vector<std::optional<Anchor>> out(faults.size());
  auto p = prepare_input(in);
  if (!p) return out;
  // A signal fault of a unit follows the command that unit holds at the fault's cycle (or takes
  // next). Memory, DRAM and token faults act on data or responses that a later command uses:
  // they follow the command the failure was pinned to.
  struct Want {
    std::string engine;
    std::optional<uint32_t> cmd;
    std::optional<uint64_t> taken;
  };
  std::vector<Want> want(faults.size());
  for (size_t i = 0; i < faults.size(); ++i) {
    want[i].engine = signal_engine(faults[i]);
    if (want[i].engine.empty() && verdict_cmd && *verdict_cmd < p->program.commands.size()) {
      want[i].engine = engine_of(p->program.commands[*verdict_cmd].opcode);
      want[i].cmd = verdict_cmd;
    }
  }
  run_watching(*p, in.options, [&](const TakeWatch& tw, uint64_t cycle) {
    bool all = true;
    for (size_t i = 0; i < faults.size(); ++i) {
      auto& w = want[i];
      if (w.engine.empty() || w.taken) continue;
      const auto h = tw.holding(w.engine);
      if (w.cmd) {
        if (h && h->first == *w.cmd) w.taken = h->second;
      } else if (cycle >= faults[i].cycle && h) {
        w.cmd = h->first;
        w.taken = h->second;
      }
      all &= w.taken.has_value();
    }
    return all;
  });
  for (size_t i = 0; i < faults.size(); ++i) {
    const auto& w = want[i];
    const std::string f = faults[i].to_string();
    if (w.engine.empty()) {
      lines.push_back(f + ": stays at its cycle: it acts on no engine's command");
      continue;
    }
    if (!w.cmd || !w.taken) {
      lines.push_back(f + ": stays at its cycle: " + w.engine + " takes no command at or after it");
      continue;
    }
    auto key = key_of(*p, *w.cmd);
    if (!key) {
      lines.push_back(f + ": stays at its cycle: command #" + std::to_string(*w.cmd) +
                      " belongs to no layer");
      continue;
    }
    Anchor a{w.engine, *key, static_cast<int64_t>(faults[i].cycle) - static_cast<int64_t>(*w.taken)};
    lines.push_back(f + ": follows command #" + std::to_string(*w.cmd) + " (" + key->text() +
                    ") on " + w.engine + ", " + std::to_string(a.offset) +
                    " cycles from when the engine took it");
    out[i] = a;
  }
  return out;
}

/// Moves the faults of `in` with their anchors to the candidate's commands. Returns, per fault
/// that cannot follow its own command, why (it moves to the same place in the layer, or keeps
/// the reduction's own cycle).
struct Reanchored {
  std::vector<std::string> notes;  ///< one per fault not on its own command
  bool moved_all = true;           ///< every anchored fault was moved
};
Reanchored reanchor(MinimizeInput& in, const run::PreparedRun& p,
                    const std::vector<std::optional<Anchor>>& anchors) {
  Reanchored out;
  auto& why = out.notes;
  auto& faults = in.options.faults;
  std::vector<std::optional<uint32_t>> target(faults.size());
  std::vector<std::optional<uint64_t>> taken(faults.size());
  size_t wanted = 0;
  for (size_t i = 0; i < faults.size() && i < anchors.size(); ++i) {
    if (!anchors[i]) continue;
    std::string reason;
    target[i] = cmd_of(p, anchors[i]->key, reason);
    if (!reason.empty()) why.push_back(reason + (target[i] ? "" : ": keeps the reduction's cycle"));
    if (target[i])
      ++wanted;
    else
      out.moved_all = false;
  }
  if (wanted == 0) return out;
  size_t found = 0;
  run_watching(p, in.options, [&](const TakeWatch& tw, uint64_t) {
    for (size_t i = 0; i < faults.size(); ++i) {
      if (!target[i] || taken[i]) continue;
      if (const auto h = tw.holding(anchors[i]->engine); h && h->first == *target[i]) {
        taken[i] = h->second;
        ++found;
      }
    }
    return found == wanted;
  });
  for (size_t i = 0; i < faults.size(); ++i) {
    if (!target[i]) continue;
    if (!taken[i]) {
      why.push_back(anchors[i]->engine + " never takes its command (" + anchors[i]->key.text() +
                    "): keeps the reduction's cycle");
      out.moved_all = false;
      continue;
    }
    const int64_t c = static_cast<int64_t>(*taken[i]) + anchors[i]->offset;
    faults[i].cycle = static_cast<uint64_t>(std::max<int64_t>(1, c));
  }
  return out;
}

Outcome evaluate(const run::PreparedRun& p, const MinimizeInput& in) {
  Outcome o;
  run::RunOptions opts = in.options;
  opts.progress = nullptr;
  o.valid = true;
  o.commands = p.program.commands.size();
  o.layers = static_cast<uint32_t>(p.workload.layers.size());
  const auto r = bisect_run(p, opts, {});
  if (r.verdict == BisectVerdict::Error) {
    o.valid = false;  // e.g. a fault that no longer lands inside the run
    return o;
  }
  o.kind = failure_of(r);
  o.stage = r.first_failing_stage;
  o.cycles = r.run_cycles;
  o.command = r.command_index;
  return o;
}

/// What makes two candidates the same run.
std::string identity(const MinimizeInput& in) {
  std::string s = in.workload_text;
  for (const auto& f : in.options.faults) s += "\n" + f.to_string();
  return s + "\n" + std::to_string(in.options.emulator.hang_cycles);
}

std::string print(const pb::WorkloadSpec& s) {
  std::string out;
  google::protobuf::TextFormat::PrintToString(s, &out);
  return out;
}

/// One reduction: returns false when it does not apply.
using Reduce = std::function<bool(pb::WorkloadSpec&, run::RunOptions&, std::string& what)>;

std::vector<Reduce> reductions(const pb::WorkloadSpec& base) {
  std::vector<Reduce> out;
  // Fewer passes over the layer list (workload.proto `repeat`): the run shrinks about twice and
  // a fault in the first half of the passes keeps its cycle.
  out.push_back([](pb::WorkloadSpec& s, run::RunOptions&, std::string& what) {
    if (s.repeat() <= 1) return false;
    const uint32_t now = s.repeat() / 2;
    what = "halve the passes " + std::to_string(s.repeat()) + " -> " + std::to_string(now);
    s.set_repeat(now);
    return true;
  });
  // Shortest failing prefix: drop the last layer.
  out.push_back([](pb::WorkloadSpec& s, run::RunOptions&, std::string& what) {
    if (s.layer_size() <= 1) return false;
    what = "drop the last layer '" + s.layer(s.layer_size() - 1).name() + "'";
    s.mutable_layer()->RemoveLast();
    return true;
  });
  // Single layers.
  for (int i = 0; i < base.layer_size(); ++i) {
    out.push_back([i](pb::WorkloadSpec& s, run::RunOptions&, std::string& what) {
      if (s.layer_size() <= 1 || i >= s.layer_size()) return false;
      what = "drop layer '" + s.layer(i).name() + "'";
      s.mutable_layer()->DeleteSubrange(i, 1);
      return true;
    });
  }
  // Halve the rows (M) with the faults' cycles: the whole run shrinks about twice.
  auto halve_rows = [](bool move_faults) {
    return [move_faults](pb::WorkloadSpec& s, run::RunOptions& o, std::string& what) {
      if (s.input_shape_size() < 1 || s.input_shape(0) < 2) return false;
      const int old = s.input_shape(0);
      const int now = old / 2;
      s.set_input_shape(0, now);
      for (auto& l : *s.mutable_layer())
        if (l.has_dense() && l.dense().m() == old) l.mutable_dense()->set_m(now);
      if (s.input_shape_size() >= 3 && s.input_shape(1) >= 2)
        s.set_input_shape(1, s.input_shape(1) / 2);  // an image: halve both sides
      what = "halve the rows " + std::to_string(old) + " -> " + std::to_string(now);
      if (move_faults) {
        for (auto& f : o.faults) f.cycle /= 2;
        what += " and bring the faults twice as early";
      }
      return true;
    };
  };
  out.push_back(halve_rows(true));
  out.push_back(halve_rows(false));
  // Halve the output width of the last dense layer (nothing consumes it).
  out.push_back([](pb::WorkloadSpec& s, run::RunOptions&, std::string& what) {
    for (int i = s.layer_size() - 1; i >= 0; --i) {
      auto* l = s.mutable_layer(i);
      if (!l->has_dense()) continue;
      if (i != s.layer_size() - 1 || l->dense().n() < 2) return false;
      const int old = l->dense().n();
      l->mutable_dense()->set_n(old / 2);
      what = "halve N of '" + l->name() + "' " + std::to_string(old) + " -> " + std::to_string(old / 2);
      return true;
    }
    return false;
  });
  // Halve the reduction length of the first dense layer (the input's K).
  out.push_back([](pb::WorkloadSpec& s, run::RunOptions&, std::string& what) {
    if (s.layer_size() < 1 || !s.layer(0).has_dense() || s.input_shape_size() != 2) return false;
    const int old = s.layer(0).dense().k();
    if (old < 2) return false;
    s.mutable_layer(0)->mutable_dense()->set_k(old / 2);
    s.set_input_shape(1, old / 2);
    what = "halve K of '" + s.layer(0).name() + "' " + std::to_string(old) + " -> " + std::to_string(old / 2);
    return true;
  });
  // Bring every fault earlier on its own.
  out.push_back([](pb::WorkloadSpec&, run::RunOptions& o, std::string& what) {
    bool any = false;
    for (auto& f : o.faults)
      if (f.cycle >= 2) f.cycle /= 2, any = true;
    what = "bring the faults twice as early";
    return any;
  });
  // A hang shows sooner with a tighter watchdog.
  out.push_back([](pb::WorkloadSpec&, run::RunOptions& o, std::string& what) {
    if (o.emulator.hang_cycles <= 500) return false;
    o.emulator.hang_cycles = std::max<uint64_t>(500, o.emulator.hang_cycles / 4);
    what = "watchdog " + std::to_string(o.emulator.hang_cycles) + " cycles";
    return true;
  });
  return out;
}

}  // namespace

MinimizeResult minimize(const MinimizeInput& input, const MinimizeOptions& mo) {
  MinimizeResult r;
  pb::WorkloadSpec spec;
  if (!google::protobuf::TextFormat::ParseFromString(input.workload_text, &spec)) {
    r.error = "the packet's workload text does not parse";
    return r;
  }
  auto base_run = prepare_input(input);
  const Outcome base = base_run ? evaluate(*base_run, input) : Outcome{};
  if (!base.valid) {
    r.error = "the recorded run cannot be rebuilt";
    return r;
  }
  if (base.kind == FailureKind::None) {
    r.error = "the run does not fail (nothing to minimize)";
    return r;
  }
  r.symptom = base.kind;
  r.first_failing_stage = base.stage;
  r.cycles_before = base.cycles;
  r.commands_before = base.commands;
  r.layers_before = base.layers;
  const auto anchors = make_anchors(input, base.command, r.anchors);
  const bool anchored = std::any_of(anchors.begin(), anchors.end(),
                                    [](const auto& a) { return a.has_value(); });
  std::map<std::string, uint32_t> not_followed;  // reason -> candidates
  MinimizeInput best = input;
  Outcome best_out = base;
  std::set<std::string> tried{identity(input)};
  const auto reds = reductions(spec);
  bool progress = true;
  while (progress && r.candidates < mo.max_candidates) {
    progress = false;
    for (const auto& reduce : reds) {
      if (r.candidates >= mo.max_candidates) break;
      pb::WorkloadSpec s;
      google::protobuf::TextFormat::ParseFromString(best.workload_text, &s);
      MinimizeInput cand = best;
      std::string what;
      if (!reduce(s, cand.options, what)) continue;
      cand.workload_text = print(s);
      auto p = prepare_input(cand);
      // Faults pinned to a cycle follow their command into the smaller run.
      if (p && anchored) {
        const auto moved = reanchor(cand, *p, anchors);
        for (const auto& w : moved.notes) ++not_followed[w];
        if (moved.moved_all)
          if (auto at = what.find(" and bring the faults twice as early"); at != std::string::npos)
            what.erase(at);
      }
      if (!tried.insert(identity(cand)).second) continue;  // the same run as one already tried
      ++r.candidates;
      const Outcome o = p ? evaluate(*p, cand) : Outcome{};
      const bool same = o.valid && o.kind == base.kind && o.stage == base.stage;
      const bool smaller = o.cycles < best_out.cycles || o.commands < best_out.commands ||
                           o.layers < best_out.layers;
      if (same && smaller) {
        best = cand;
        best_out = o;
        ++r.accepted;
        r.steps.push_back(what + " (" + std::to_string(o.cycles) + " cycles)");
        progress = true;
      }
      if (mo.progress) mo.progress(r.candidates, r.accepted);
    }
  }
  for (const auto& [why, n] : not_followed)
    r.anchor_notes.push_back(why + " (" + std::to_string(n) + " candidate" + (n == 1 ? "" : "s") +
                             ")");
  r.ok = true;
  r.minimized = best;
  r.cycles_after = best_out.cycles;
  r.commands_after = best_out.commands;
  r.layers_after = best_out.layers;
  return r;
}

std::string MinimizeResult::text() const {
  if (!ok) return "minimize: " + error + "\n";
  auto ratio = [](uint64_t a, uint64_t b) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1fx", b ? static_cast<double>(a) / static_cast<double>(b) : 0.0);
    return std::string(buf);
  };
  std::string s = std::string("kept       ") + failure_kind_name(symptom) +
                  ", first failing stage " + (first_failing_stage ? rung_name(*first_failing_stage) : "-") +
                  "\n";
  s += "cycles     " + std::to_string(cycles_before) + " -> " + std::to_string(cycles_after) + " (" +
       ratio(cycles_before, cycles_after) + " smaller)\n";
  s += "commands   " + std::to_string(commands_before) + " -> " + std::to_string(commands_after) + "\n";
  s += "layers     " + std::to_string(layers_before) + " -> " + std::to_string(layers_after) + "\n";
  s += "candidates " + std::to_string(candidates) + " tried, " + std::to_string(accepted) + " accepted\n";
  for (const auto& st : steps) s += "  - " + st + "\n";
  for (const auto& a : anchors) s += "fault      " + a + "\n";
  for (const auto& n : anchor_notes) s += "  not on its command: " + n + "\n";
  return s;
}

json::Json MinimizeResult::to_json() const {
  json::Json j = json::Json::object();
  j["ok"] = ok;
  if (!ok) j["error"] = error;
  j["symptom"] = failure_kind_name(symptom);
  j["first_failing_stage"] =
      first_failing_stage ? json::Json(rung_name(*first_failing_stage)) : json::Json();
  j["cycles_before"] = cycles_before;
  j["cycles_after"] = cycles_after;
  j["commands_before"] = commands_before;
  j["commands_after"] = commands_after;
  j["layers_before"] = static_cast<uint64_t>(layers_before);
  j["layers_after"] = static_cast<uint64_t>(layers_after);
  j["candidates"] = static_cast<uint64_t>(candidates);
  j["accepted"] = static_cast<uint64_t>(accepted);
  json::Json st = json::Json::array();
  for (const auto& x : steps) st.push_back(x);
  j["steps"] = st;
  json::Json an = json::Json::array();
  for (const auto& x : anchors) an.push_back(x);
  j["anchors"] = an;
  json::Json notes = json::Json::array();
  for (const auto& x : anchor_notes) notes.push_back(x);
  j["anchor_notes"] = notes;
  return j;
}

}  // namespace bud::debugger
