#include "debugger/bisect/Minimizer.h"

#include <google/protobuf/text_format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "debugger/bisect/Bisector.h"
#include "debugger/bisect/FaultAnchor.h"
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
  const auto anchors = make_anchors(*base_run, input.options, base.command, r.anchors);
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
        const auto moved = reanchor(cand.options, *p, anchors);
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
