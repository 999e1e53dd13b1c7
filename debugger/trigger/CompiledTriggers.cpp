#include "debugger/trigger/CompiledTriggers.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "emu/isa/Isa.h"

namespace bud::debugger {

namespace {

// Reads the quantities of one program: the design through the emulator, the program's own
// variables (events, state-machine counters and flags, built-ins) from its variable array.
class VarSampler final : public Sampler {
 public:
  VarSampler(const emu::Emulator& emu, const uint64_t* vars) : emu_(emu), vars_(vars) {}
  uint64_t sample(const Ref& ref) override {
    // Counters, signals and the cycle are frame slots (layout()) or the emulator.
    return ref.kind == RefKind::Other ? vars_[ref.id] : read_ref(emu_, ref);
  }

 private:
  const emu::Emulator& emu_;
  const uint64_t* vars_;
};

std::string ref_name(const emu::Emulator& emu, const TriggerProgram& prog, const Ref& r) {
  switch (r.kind) {
    case RefKind::Counter:
      return r.id < emu.describe().counters.size() ? emu.describe().counters[r.id] : "?";
    case RefKind::Cycle:
      return "cycle";
    case RefKind::Signal: {
      std::string n = r.id < emu.signals().size() ? emu.signals()[r.id].name : "?";
      if (r.elements > 1) n += "[" + std::to_string(r.element) + "]";
      return n;
    }
    case RefKind::Other: {
      // Per-trigger variables are stored as "trigger.name"; show the short name.
      std::string n = r.id < prog.var_names.size() ? prog.var_names[r.id] : "?";
      if (r.id >= kNumBuiltinVars)
        if (auto dot = n.rfind('.'); dot != std::string::npos) n = n.substr(dot + 1);
      return n;
    }
  }
  return "?";
}

std::string join_actions(const std::vector<TriggerAction>& actions) {
  std::string acts;
  for (const auto& a : actions) acts += (acts.empty() ? "" : ", ") + a.to_string();
  return acts;
}

}  // namespace

bool needs_hit_cycle(ActionKind k) {
  return k == ActionKind::Halt || k == ActionKind::Checkpoint || k == ActionKind::Snapshot;
}

struct CompiledTriggers::Runtime {
  int id = 0;
  TriggerDef* def = nullptr;
  bool enabled = true;
  bool exhausted = false;
  bool armed = false;
  bool was_true = false;
  uint32_t state = 0;
  uint64_t hits = 0;
  uint64_t shots_used = 0;
  uint64_t armed_cycles = 0;
  std::vector<uint8_t> truth;
  std::vector<uint64_t> true_cycles;
  std::vector<uint64_t> first_true;  ///< UINT64_MAX: never
  std::vector<uint64_t> entered;     ///< per state
  std::vector<std::pair<std::string, Ref>> refs;
  std::vector<uint64_t> hit_values;  ///< refs sampled at the last hit
  /// Per state: the conditions evaluated while in it. Stateful conditions are in every list (their
  /// windows must see every cycle); a stateless one only in the states whose branches use it.
  std::vector<std::vector<uint32_t>> eval_lists;
  bool reads_mismatch = false;
};

struct CompiledTriggers::Program {
  Program(const emu::Emulator& emu, TriggerProgram p)
      : prog(std::move(p)), vars(prog.var_names.size(), 0), sampler(emu, vars.data()) {}
  TriggerProgram prog;
  std::vector<uint64_t> vars;  ///< never resized: the sampler points into it
  VarSampler sampler;
  std::vector<uint64_t> every_base;
  std::vector<Runtime> triggers;
};

CompiledTriggers::CompiledTriggers(const emu::Emulator& emu)
    : emu_(emu), frame_(new uint64_t[kMaxFrameSlots]()) {}

CompiledTriggers::~CompiledTriggers() = default;

std::vector<int> CompiledTriggers::add(TriggerProgram program) {
  auto p = std::make_unique<Program>(emu_, std::move(program));
  p->every_base.assign(p->prog.events.size(), 0);
  std::vector<int> ids;
  for (auto& def : p->prog.triggers) {
    Runtime rt;
    rt.id = next_id_++;
    rt.def = &def;
    rt.truth.assign(def.conds.size(), 0);
    rt.true_cycles.assign(def.conds.size(), 0);
    rt.first_true.assign(def.conds.size(), UINT64_MAX);
    rt.entered.assign(def.states.size(), 0);
    for (const auto& c : def.conds)
      for (const auto& r : c.expr.refs()) {
        bool seen = false;
        for (const auto& [n, x] : rt.refs) seen |= x == r;
        if (!seen) rt.refs.emplace_back(ref_name(emu_, p->prog, r), r);
      }
    rt.hit_values.assign(rt.refs.size(), 0);
    for (const auto& [n, r] : rt.refs)
      rt.reads_mismatch |=
          r.kind == RefKind::Other && r.id == static_cast<uint32_t>(BuiltinVar::Mismatch);
    for (const auto& st : def.states) {
      std::vector<uint32_t> list;
      for (uint32_t c = 0; c < def.conds.size(); ++c) {
        bool used = def.conds[c].expr.stateful();
        for (const auto& b : st.branches) used |= b.cond == static_cast<int>(c);
        if (used) list.push_back(c);
      }
      rt.eval_lists.push_back(std::move(list));
    }
    ids.push_back(rt.id);
    p->triggers.push_back(std::move(rt));
  }
  programs_.push_back(std::move(p));
  return ids;
}

CompiledTriggers::Runtime* CompiledTriggers::find(int id) {
  for (auto& p : programs_)
    for (auto& rt : p->triggers)
      if (rt.id == id) return &rt;
  return nullptr;
}

bool CompiledTriggers::remove(int id) {
  for (auto& p : programs_)
    for (auto it = p->triggers.begin(); it != p->triggers.end(); ++it)
      if (it->id == id) {
        p->triggers.erase(it);
        return true;
      }
  return false;
}

bool CompiledTriggers::set_enabled(int id, bool enabled) {
  Runtime* rt = find(id);
  if (!rt) return false;
  rt->enabled = enabled;
  if (enabled) {
    rt->exhausted = false;
    rt->shots_used = 0;
    rt->armed = false;  // armed (windows restart) at the next run
  }
  return true;
}

size_t CompiledTriggers::size() const {
  size_t n = 0;
  for (const auto& p : programs_) n += p->triggers.size();
  return n;
}

bool CompiledTriggers::active() const {
  for (const auto& p : programs_)
    for (const auto& rt : p->triggers)
      if (rt.enabled && !rt.exhausted) return true;
  return false;
}

size_t CompiledTriggers::history_bytes() const {
  size_t n = 0;
  for (const auto& p : programs_) n += p->prog.history_bytes();
  return n;
}

HistoryNeeds CompiledTriggers::history_needs() const {
  HistoryNeeds n;
  for (const auto& p : programs_)
    for (const auto& rt : p->triggers) {
      if (!rt.enabled) continue;
      if (rt.def->captures()) {
        n.captures = true;
        n.max_pre = std::max(n.max_pre, rt.def->max_pre());
      }
      for (const auto& st : rt.def->states)
        for (const auto& b : st.branches)
          for (const auto& a : b.actions) n.hit_cycle |= needs_hit_cycle(a.kind);
    }
  return n;
}

FrameLayout CompiledTriggers::layout() {
  bool overflow = false;
  auto bind = [&](Ref& r) {
    if (r.kind == RefKind::Other) return;
    if (r.kind == RefKind::Cycle) {
      r.direct = frame_.get();
      r.direct_bytes = 8;
      return;
    }
    size_t i = 0;
    while (i < slots_.size() && !(slots_[i] == r)) ++i;
    if (i == slots_.size()) {
      if (kFrameFixed + i >= kMaxFrameSlots) {
        overflow = true;  // read from the emulator directly; evaluation stays inline
        return;
      }
      slots_.push_back(r);
    }
    r.direct = frame_.get() + kFrameFixed + i;
    r.direct_bytes = 8;
  };
  FrameLayout out;
  dispatch_events_.clear();
  for (size_t pi = 0; pi < programs_.size(); ++pi) {
    Program& p = *programs_[pi];
    for (auto& def : p.prog.triggers)
      for (auto& c : def.conds) c.expr.rebind(bind);
    for (auto& rt : p.triggers)
      for (auto& [name, r] : rt.refs) bind(r);
    for (size_t i = 0; i < p.prog.events.size(); ++i) {
      EventDef& ev = p.prog.events[i];
      if (ev.kind == EventDef::Kind::Every) bind(ev.source);
      if (ev.kind == EventDef::Kind::Dispatch) {
        dispatch_events_.push_back({static_cast<uint32_t>(pi), static_cast<uint32_t>(i)});
        out.dispatch.push_back({ev.opcode, ev.cmd_id, ev.layer});
      }
    }
  }
  if (out.dispatch.size() > 64) overflow = true;
  stride_ = kFrameFixed + slots_.size();
  out.slots = slots_;
  out.stride = stride_;
  out.fits = !overflow;
  return out;
}

void CompiledTriggers::set_frame(const uint64_t* f) {
  std::memcpy(frame_.get(), f, stride_ * sizeof(uint64_t));
}

void CompiledTriggers::load_frame(const uint64_t* f) {
  set_frame(f);
  progress_ = (f[1] & 1) != 0;
  const auto st = static_cast<emu::RunState>((f[1] >> 8) & 0xff);
  // The emulator calls its hook on the cycle the run ends too, with the state already set.
  if (st != emu::RunState::Ready) set_symptoms(st, false);
  for (uint64_t bits = f[2]; bits != 0; bits &= bits - 1) {
    const DispatchEvent& d = dispatch_events_[static_cast<size_t>(__builtin_ctzll(bits))];
    Program& p = *programs_[d.program];
    p.vars[p.prog.events[d.event].var] = 1;
  }
}

void CompiledTriggers::set_symptoms(emu::RunState state, bool mismatch) {
  for (auto& p : programs_) {
    auto& v = p->vars;
    v[static_cast<uint32_t>(BuiltinVar::Assertion)] = state == emu::RunState::Assertion;
    v[static_cast<uint32_t>(BuiltinVar::Hang)] = state == emu::RunState::Hang;
    v[static_cast<uint32_t>(BuiltinVar::Error)] = state == emu::RunState::Error;
    v[static_cast<uint32_t>(BuiltinVar::Finished)] = state == emu::RunState::Finished;
    v[static_cast<uint32_t>(BuiltinVar::Mismatch)] = mismatch ? 1 : 0;
  }
}

void CompiledTriggers::arm_one(Program& p, Runtime& rt) {
  rt.state = 0;
  ++rt.entered[0];
  for (auto& c : rt.def->conds) c.expr.arm(p.sampler);
  rt.was_true = !rt.def->machine && !rt.def->conds[0].expr.stateful() &&
                Expr(rt.def->conds[0].expr).eval(p.sampler).truthy();
  rt.armed = true;
}

void CompiledTriggers::arm_all(uint64_t now) {
  for (auto& p : programs_) {
    std::fill(p->vars.begin(), p->vars.end(), 0);
    for (size_t i = 0; i < p->prog.events.size(); ++i)
      if (p->prog.events[i].kind == EventDef::Kind::Every)
        p->every_base[i] = p->sampler.sample(p->prog.events[i].source);
    for (auto& rt : p->triggers) {
      rt.armed = false;
      if (rt.enabled) arm_one(*p, rt);
    }
  }
  last_cycle_ = now;
  last_progress_ = now;
  progress_ = false;
}

bool CompiledTriggers::arm_new() {
  bool any_new = false;
  for (auto& p : programs_)
    for (auto& rt : p->triggers)
      if (rt.enabled && !rt.armed) any_new = true;
  if (!any_new) return false;
  for (auto& p : programs_)
    for (auto& rt : p->triggers) {
      if (!rt.enabled || rt.armed) continue;
      auto& v = p->vars;
      for (auto var : rt.def->counter_vars) v[var] = 0;
      for (auto var : rt.def->flag_vars) v[var] = 0;
      v[rt.def->state_cycles_var] = 0;
      arm_one(*p, rt);
    }
  return true;
}

void CompiledTriggers::evaluate(uint64_t cycle, std::vector<PendingHit>& hits) {
  if (progress_) last_progress_ = cycle;
  for (auto& pp : programs_) {
    Program& p = *pp;
    auto& v = p.vars;
    v[static_cast<uint32_t>(BuiltinVar::Progress)] = progress_ ? 1 : 0;
    v[static_cast<uint32_t>(BuiltinVar::SinceProgress)] = cycle - last_progress_;
    const auto& events = p.prog.events;
    for (size_t i = 0; i < events.size(); ++i) {
      const EventDef& ev = events[i];
      if (ev.kind != EventDef::Kind::Every) continue;
      const uint64_t x = p.sampler.sample(ev.source);
      const uint64_t d = x - p.every_base[i];
      if (d >= ev.period) {
        v[ev.var] = 1;
        p.every_base[i] += d / ev.period * ev.period;
      } else {
        v[ev.var] = 0;
      }
    }
    for (auto& rt : p.triggers) {
      if (!rt.enabled || rt.exhausted || !rt.armed) continue;
      if (only_mismatch_ && !rt.reads_mismatch) continue;
      TriggerDef& def = *rt.def;
      ++rt.armed_cycles;
      ++v[def.state_cycles_var];
      for (const uint32_t c : rt.eval_lists[rt.state]) {
        const bool t = def.conds[c].expr.eval(p.sampler).truthy();
        rt.truth[c] = t;
        if (t) {
          ++rt.true_cycles[c];
          if (rt.first_true[c] == UINT64_MAX) rt.first_true[c] = cycle;
        }
      }
      const TriggerState& st = def.states[rt.state];
      int taken = -1;
      if (!def.machine) {
        const bool t = rt.truth[0] != 0;
        if (t && !rt.was_true) taken = 0;
        rt.was_true = t;
      } else {
        for (size_t b = 0; b < st.branches.size(); ++b) {
          const int c = st.branches[b].cond;
          if (c < 0 || rt.truth[c]) {
            taken = static_cast<int>(b);
            break;
          }
        }
      }
      if (taken < 0) continue;
      const TriggerBranch& br = st.branches[taken];
      const uint32_t from = rt.state;
      const bool fires = br.fires();
      // Values at the hit are those the conditions saw, before this branch's own actions.
      if (fires)
        for (size_t i = 0; i < rt.refs.size(); ++i)
          rt.hit_values[i] = p.sampler.sample(rt.refs[i].second);
      bool rearm = false;
      for (const auto& a : br.actions) {
        switch (a.kind) {
          case ActionKind::Incr:
            v[a.var] += static_cast<uint64_t>(a.amount);
            break;
          case ActionKind::Reset:
          case ActionKind::ClearFlag:
            v[a.var] = 0;
            break;
          case ActionKind::SetFlag:
            v[a.var] = 1;
            break;
          case ActionKind::Goto:
            rt.state = a.target;
            v[def.state_cycles_var] = 0;
            ++rt.entered[a.target];
            break;
          case ActionKind::Rearm:
            rearm = true;
            break;
          default:
            break;
        }
      }
      if (fires) {
        ++rt.hits;
        PendingHit ph;
        ph.program = static_cast<uint32_t>(&pp - programs_.data());
        ph.trigger = static_cast<uint32_t>(&rt - p.triggers.data());
        ph.from_state = from;
        ph.branch = static_cast<uint32_t>(taken);
        ph.cycle = cycle;
        ph.number = rt.hits;
        ph.values = rt.hit_values;
        hits.push_back(std::move(ph));
        if (def.shots && ++rt.shots_used >= *def.shots) rt.exhausted = true;
      }
      if (rearm) {
        for (auto& c : def.conds) c.expr.arm(p.sampler);
        // As when first armed: a stateless condition that holds must turn false first.
        rt.was_true = !def.machine && !def.conds[0].expr.stateful() && rt.truth[0];
      }
    }
    for (const auto& ev : events)
      if (ev.kind == EventDef::Kind::Dispatch) v[ev.var] = 0;
  }
  progress_ = false;
  last_cycle_ = cycle;
}

bool CompiledTriggers::is_barrier(const PendingHit& h) const {
  const TriggerDef& def = *programs_[h.program]->triggers[h.trigger].def;
  for (const auto& a : def.states[h.from_state].branches[h.branch].actions)
    if (needs_hit_cycle(a.kind)) return true;
  return false;
}

bool CompiledTriggers::captures(const PendingHit& h) const {
  return programs_[h.program]->triggers[h.trigger].def->captures();
}

HitTrigger CompiledTriggers::trigger_of(const PendingHit& h) const {
  const Runtime& rt = programs_[h.program]->triggers[h.trigger];
  return {rt.id, rt.def, &rt.def->states[h.from_state].branches[h.branch], &rt.refs};
}

std::vector<TriggerStatus> CompiledTriggers::status() const {
  std::vector<TriggerStatus> out;
  for (const auto& p : programs_)
    for (const auto& rt : p->triggers) {
      const TriggerDef& d = *rt.def;
      TriggerStatus s;
      s.id = rt.id;
      s.name = d.name;
      s.file = p->prog.file;
      s.machine = d.machine;
      s.enabled = rt.enabled;
      s.exhausted = rt.exhausted;
      s.shots = d.shots;
      s.hits = rt.hits;
      s.armed_cycles = rt.armed_cycles;
      s.state = d.states.empty() ? "" : d.states[rt.state].name;
      for (size_t c = 0; c < d.conds.size(); ++c) {
        ConditionCoverage cc;
        cc.text = d.conds[c].text;
        cc.loc = d.conds[c].loc;
        cc.true_cycles = rt.true_cycles[c];
        if (rt.first_true[c] != UINT64_MAX) cc.first_true = rt.first_true[c];
        s.conditions.push_back(cc);
      }
      if (d.machine)
        for (size_t i = 0; i < d.states.size(); ++i)
          s.states_entered.emplace_back(d.states[i].name, rt.entered[i]);
      std::string shots = d.shots ? " shots " + std::to_string(*d.shots) : "";
      if (!d.machine) {
        s.summary.push_back("trigger " + d.name + shots + " when " + d.conds[0].text + " do " +
                            join_actions(d.states[0].branches[0].actions));
      } else {
        s.summary.push_back("trigger " + d.name + shots + " (state machine, " +
                            std::to_string(d.states.size()) + " states)");
        for (const auto& st : d.states) {
          s.summary.push_back("  state " + st.name);
          for (const auto& b : st.branches) {
            const std::string acts = join_actions(b.actions);
            s.summary.push_back(b.cond >= 0 ? "    if " + d.conds[b.cond].text + " then " + acts
                                            : "    else " + acts);
          }
        }
      }
      out.push_back(std::move(s));
    }
  return out;
}

}  // namespace bud::debugger
