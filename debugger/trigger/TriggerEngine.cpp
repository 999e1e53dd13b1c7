#include "debugger/trigger/TriggerEngine.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace bud::debugger {

namespace {

// Actions that need the design at the hit cycle: an evaluation thread that finds them late
// makes the run go back there.
bool needs_hit_cycle(ActionKind k) {
  return k == ActionKind::Halt || k == ActionKind::Checkpoint || k == ActionKind::Snapshot;
}

// Reads a quantity where the resolver said it lives (any width up to 8 bytes), else through the
// emulator.
uint64_t read_ref(const emu::Emulator& emu, const Ref& r) {
  if (r.direct) return read_direct(r);
  switch (r.kind) {
    case RefKind::Counter:
      return emu.counter(static_cast<int>(r.id));
    case RefKind::Signal:
      return emu.read_signal(r.id, r.element).low();
    case RefKind::Cycle:
      return emu.cycle();
    case RefKind::Other:
      return 0;
  }
  return 0;
}

// Saving a snapshot costs a few milliseconds (state checksum included): every 2^19 cycles keeps
// that near 1% of the run; a capture then re-executes at most this many cycles beyond its window.
constexpr uint64_t kMinHistoryInterval = uint64_t{1} << 19;

// Reads the quantities of one program: the design through the emulator, the program's own
// variables (events, state-machine counters and flags, built-ins) from its variable array.
class VarSampler final : public Sampler {
 public:
  VarSampler(const emu::Emulator& emu, const uint64_t* vars) : emu_(emu), vars_(vars) {}
  uint64_t sample(const Ref& ref) override {
    // Counters, signals and the cycle are frame slots (TriggerEngine::layout) or the emulator.
    return ref.kind == RefKind::Other ? vars_[ref.id] : read_ref(emu_, ref);
  }

 private:
  const emu::Emulator& emu_;
  const uint64_t* vars_;
};

std::string ref_name(const emu::Emulator& emu, const TriggerProgram& prog, const Ref& r) {
  switch (r.kind) {
    case RefKind::Counter:
      return isa::counter_name(static_cast<int>(r.id));
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

// Collects the stage transactions of a capture window as compact log lines.
class EventLog final : public emu::TxnObserver {
 public:
  void on_txn(const emu::StageTxn& t) override {
    char buf[160];
    const unsigned long long c = t.cycle + 1;  // the cycle at which triggers see it
    switch (t.stage) {
      case emu::Stage::Fetch: {
        std::array<uint64_t, 4> w{};
        std::memcpy(w.data(), t.data.data(), 32);
        const auto cmd = isa::Command::decode(w);
        std::snprintf(buf, sizeof buf, "%llu fetch dispatch #%u %s layer %u\n", c, cmd.cmd_id,
                      isa::opcode_name(cmd.raw_opcode).c_str(), cmd.layer);
        break;
      }
      case emu::Stage::Load:
        std::snprintf(buf, sizeof buf, "%llu load #%u %s[%u]\n", c, t.cmd_id,
                      isa::buffer_name(static_cast<isa::Buffer>(t.buffer & 3)), t.addr);
        break;
      case emu::Stage::Gemm:
        std::snprintf(buf, sizeof buf, "%llu gemm #%u acc[%u]\n", c, t.cmd_id, t.addr);
        break;
      case emu::Stage::Post:
        std::snprintf(buf, sizeof buf, "%llu post #%u out[%u]\n", c, t.cmd_id, t.addr);
        break;
      case emu::Stage::Store:
        std::snprintf(buf, sizeof buf, "%llu store #%u dram[0x%x] %u bytes\n", c, t.cmd_id, t.addr,
                      t.size);
        break;
    }
    text += buf;
    ++events;
  }
  std::string text;
  uint64_t events = 0;
};

std::string sanitize(const std::string& s) {
  std::string out;
  for (char c : s)
    out +=
        (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
  return out;
}

}  // namespace

struct TriggerEngine::Runtime {
  int id = 0;
  TriggerDef* def = nullptr;
  bool enabled = true;
  bool exhausted = false;
  bool armed = false;
  bool was_true = false;
  uint32_t state = 0;
  uint64_t hits = 0;
  uint64_t shots_used = 0;
  uint64_t captures = 0;
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

struct TriggerEngine::Program {
  Program(const emu::Emulator& emu, TriggerProgram p)
      : prog(std::move(p)), vars(prog.var_names.size(), 0), sampler(emu, vars.data()) {}
  TriggerProgram prog;
  std::vector<uint64_t> vars;  ///< never resized: the sampler points into it
  VarSampler sampler;
  std::vector<uint64_t> every_base;
  std::vector<Runtime> triggers;
};

TriggerEngine::TriggerEngine(emu::Emulator& emu, TriggerEngineConfig config)
    : emu_(emu), config_(std::move(config)), frame_(new uint64_t[kMaxFrameSlots]()) {}

TriggerEngine::~TriggerEngine() {
  stop_worker();
  detach();
}

void TriggerEngine::stop_worker() {
  if (!worker_.joinable()) return;
  quit_.store(true, std::memory_order_seq_cst);
  wake_.fetch_add(1, std::memory_order_seq_cst);
  wake_.notify_one();
  worker_.join();
  quit_.store(false);
}

void TriggerEngine::layout() {
  // The evaluator is idle (callers settle first). Bind every quantity the conditions, hit values
  // and every-N events read to a frame slot; the slots only grow, so earlier bindings stay valid.
  bool overflow = false;
  auto bind = [&](Ref& r) {
    if (r.kind == RefKind::Other) return;
    if (r.kind == RefKind::Cycle) {
      r.direct = frame_.get();
      r.direct_bytes = 8;
      return;
    }
    size_t i = 0;
    while (i < gather_.size() && !(gather_[i] == r)) ++i;
    if (i == gather_.size()) {
      if (kFrameFixed + i >= kMaxFrameSlots) {
        overflow = true;  // read from the emulator directly; evaluation stays inline
        return;
      }
      gather_.push_back(r);
    }
    r.direct = frame_.get() + kFrameFixed + i;
    r.direct_bytes = 8;
  };
  dispatch_bits_.clear();
  for (size_t pi = 0; pi < programs_.size(); ++pi) {
    Program& p = *programs_[pi];
    for (auto& def : p.prog.triggers)
      for (auto& c : def.conds) c.expr.rebind(bind);
    for (auto& rt : p.triggers)
      for (auto& [name, r] : rt.refs) bind(r);
    for (size_t i = 0; i < p.prog.events.size(); ++i) {
      EventDef& ev = p.prog.events[i];
      if (ev.kind == EventDef::Kind::Every) bind(ev.source);
      if (ev.kind == EventDef::Kind::Dispatch)
        dispatch_bits_.push_back({static_cast<uint32_t>(pi), static_cast<uint32_t>(i)});
    }
  }
  if (dispatch_bits_.size() > 64) overflow = true;
  stride_ = kFrameFixed + gather_.size();
  async_ = config_.async && !overflow && std::thread::hardware_concurrency() > 1;
  if (!async_) {
    stop_worker();
    return;
  }
  ring_buf_.assign(kRingFrames * stride_, 0);
  if (!worker_.joinable()) worker_ = std::thread([this] { worker_loop(); });
}

void TriggerEngine::gather(uint64_t* dst, uint64_t cycle) {
  dst[0] = cycle;
  dst[1] = (txn_progress_ ? 1u : 0u) | (uint64_t{static_cast<uint8_t>(emu_.state())} << 8);
  dst[2] = txn_dispatch_;
  txn_progress_ = false;
  txn_dispatch_ = 0;
  uint64_t* out = dst + kFrameFixed;
  for (const Ref& r : gather_) *out++ = read_ref(emu_, r);
}

void TriggerEngine::apply_frame(const uint64_t* f) {
  if (f != frame_.get()) std::memcpy(frame_.get(), f, stride_ * sizeof(uint64_t));
  progress_ = (f[1] & 1) != 0;
  const auto st = static_cast<emu::RunState>((f[1] >> 8) & 0xff);
  // The emulator calls its hook on the cycle the run ends too, with the state already set.
  if (st != emu::RunState::Ready) set_symptoms(st, false);
  for (uint64_t bits = f[2]; bits != 0; bits &= bits - 1) {
    const DispatchBit& d = dispatch_bits_[static_cast<size_t>(__builtin_ctzll(bits))];
    Program& p = *programs_[d.program];
    p.vars[p.prog.events[d.event].var] = 1;
  }
}

bool TriggerEngine::is_barrier(const PendingHit& h) const {
  const TriggerDef& def = *programs_[h.program]->triggers[h.trigger].def;
  for (const auto& a : def.states[h.from_state].branches[h.branch].actions)
    if (needs_hit_cycle(a.kind)) return true;
  return false;
}

void TriggerEngine::publish() {
  head_.store(produced_, std::memory_order_seq_cst);
  if (idle_.load(std::memory_order_seq_cst)) {
    wake_.fetch_add(1, std::memory_order_seq_cst);
    wake_.notify_one();
  }
}

void TriggerEngine::take_hits() {
  std::lock_guard<std::mutex> lock(hits_mu_);
  for (auto& h : shared_hits_) pending_.push_back(std::move(h));
  shared_hits_.clear();
  dropped_hits_ += shared_dropped_;
  shared_dropped_ = 0;
}

void TriggerEngine::worker_loop() {
  for (;;) {
    if (quit_.load(std::memory_order_acquire)) return;
    uint64_t t = tail_.load(std::memory_order_relaxed);
    const bool stopped = barrier_.load(std::memory_order_acquire);
    const uint64_t h = head_.load(std::memory_order_acquire);
    if (stopped || t == h) {
      // Nothing to do: spin briefly (the next batch is usually close), then sleep until the
      // simulation thread publishes (Dekker handshake on idle_/head_, both seq_cst).
      bool more = false;
      for (int i = 0; i < 256 && !more; ++i) {
        __builtin_ia32_pause();
        more = !barrier_.load(std::memory_order_acquire) &&
               head_.load(std::memory_order_acquire) != t;
      }
      if (more) continue;
      const uint32_t w = wake_.load(std::memory_order_seq_cst);
      idle_.store(true, std::memory_order_seq_cst);
      if (!quit_.load(std::memory_order_seq_cst) &&
          (barrier_.load(std::memory_order_seq_cst) || head_.load(std::memory_order_seq_cst) == t))
        wake_.wait(w, std::memory_order_seq_cst);
      idle_.store(false, std::memory_order_seq_cst);
      continue;
    }
    bool stop = false;
    for (; t < h && !stop; ++t) {
      const uint64_t* f = ring_buf_.data() + (t % kRingFrames) * stride_;
      apply_frame(f);
      evaluate(f[0]);
      if (eval_hits_.empty()) continue;
      bool notify = false;
      for (const auto& hit : eval_hits_) {
        stop |= is_barrier(hit);
        const TriggerDef& def = *programs_[hit.program]->triggers[hit.trigger].def;
        notify |= def.captures();
      }
      for (;;) {
        {
          std::lock_guard<std::mutex> lock(hits_mu_);
          if (shared_hits_.size() < kMaxQueuedHits) {
            for (auto& hit : eval_hits_) shared_hits_.push_back(std::move(hit));
            notify |= shared_hits_.size() >= kMaxQueuedHits / 2;
            break;
          }
        }
        // The simulation thread takes hits while it waits for this thread, so this ends.
        attention_.store(true, std::memory_order_release);
        std::this_thread::yield();
      }
      eval_hits_.clear();
      if (stop) barrier_cycle_ = f[0];
      if (notify || stop) attention_.store(true, std::memory_order_release);
    }
    tail_.store(t, std::memory_order_release);
    if (stop) barrier_.store(true, std::memory_order_release);
  }
}

std::optional<uint64_t> TriggerEngine::settle() {
  if (!async_) return std::nullopt;
  quiesce();
  take_hits();
  std::optional<uint64_t> back;
  if (barrier_.load(std::memory_order_acquire)) {
    // The run goes back to the hit; the frames after it are produced again.
    back = barrier_cycle_;
    // Barrier hits tend to come in runs (a condition that fired once fires again soon): evaluate
    // inline for a while, where a hit costs nothing, instead of going back for each one.
    inline_until_ = *back + kInlineAfterBarrier;
    produced_ = tail_.load(std::memory_order_acquire);
    tail_seen_ = produced_;
    head_.store(produced_, std::memory_order_seq_cst);
    barrier_.store(false, std::memory_order_release);
    // Transactions seen after the last frame belong to cycles that happen again.
    txn_progress_ = false;
    txn_dispatch_ = 0;
  }
  attention_.store(false, std::memory_order_relaxed);
  return back;
}

std::string TriggerEngine::rewind_to(uint64_t back) {
  const Snapshot* best = nullptr;
  for (const auto& s : ring_)
    if (s.cycle <= back && (!best || s.cycle > best->cycle)) best = &s;
  if (!best)
    return "no history snapshot at or before cycle " + std::to_string(back) +
           " to return to the trigger hit";
  const auto state = best->state;  // restore() may not keep a reference into ring_
  std::string error;
  if (emu_.restore(*state, error)) error = advance(emu_, back);
  txn_progress_ = false;
  txn_dispatch_ = 0;
  if (snap_interval_) next_snapshot_ = (emu_.cycle() / snap_interval_ + 1) * snap_interval_;
  return error;
}

std::vector<int> TriggerEngine::add(TriggerProgram program) {
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
  settle();
  programs_.push_back(std::move(p));
  layout();
  any_enabled_ = true;
  return ids;
}

TriggerEngine::Runtime* TriggerEngine::find(int id, Program** prog) {
  for (auto& p : programs_)
    for (auto& rt : p->triggers)
      if (rt.id == id) {
        if (prog) *prog = p.get();
        return &rt;
      }
  return nullptr;
}

bool TriggerEngine::remove(int id) {
  settle();
  service(nullptr);  // pending hits name triggers by index
  for (auto& p : programs_)
    for (auto it = p->triggers.begin(); it != p->triggers.end(); ++it)
      if (it->id == id) {
        p->triggers.erase(it);
        any_enabled_ = active();
        return true;
      }
  return false;
}

bool TriggerEngine::set_enabled(int id, bool enabled) {
  Runtime* rt = find(id);
  if (!rt) return false;
  rt->enabled = enabled;
  if (enabled) {
    rt->exhausted = false;
    rt->shots_used = 0;
    rt->armed = false;  // armed (windows restart) at the next run
  }
  any_enabled_ = active();
  return true;
}

size_t TriggerEngine::size() const {
  size_t n = 0;
  for (const auto& p : programs_) n += p->triggers.size();
  return n;
}

namespace {
std::vector<std::pair<const Session*, TriggerEngine*>>& attached() {
  static std::vector<std::pair<const Session*, TriggerEngine*>> v;
  return v;
}
}  // namespace

void TriggerEngine::attach(Session& session) {
  detach();
  session_ = &session;
  session.add_hook(this);
  attached().emplace_back(&session, this);
}

void TriggerEngine::detach() {
  if (session_) session_->remove_hook(this);
  std::erase_if(attached(), [this](const auto& e) { return e.second == this; });
  session_ = nullptr;
}

TriggerEngine* TriggerEngine::of(const Session& session) {
  for (const auto& [s, e] : attached())
    if (s == &session) return e;
  return nullptr;
}

TriggerEnv TriggerEngine::env() const {
  TriggerEnv env;
  env.emu = &emu_;
  if (session_) env.layer_names = &session_->program().layer_names;
  env.limits = config_.limits;
  for (const auto& p : programs_) env.session_history_bytes += p->prog.history_bytes();
  return env;
}

bool TriggerEngine::active() const {
  for (const auto& p : programs_)
    for (const auto& rt : p->triggers)
      if (rt.enabled && !rt.exhausted) return true;
  return false;
}

void TriggerEngine::arm() {
  settle();
  // Conditions read the frame: fill it from the current state for arming.
  gather(frame_.get(), emu_.cycle());
  if (!armed_ || emu_.cycle() != last_cycle_) {
    arm_all();
    return;
  }
  // Same cycle as last seen: keep running windows, arm only what is new or re-enabled.
  bool any_new = false;
  for (auto& p : programs_)
    for (auto& rt : p->triggers)
      if (rt.enabled && !rt.armed) any_new = true;
  if (!any_new) return;
  for (auto& p : programs_)
    for (auto& rt : p->triggers) {
      if (!rt.enabled || rt.armed) continue;
      auto& v = p->vars;
      for (auto var : rt.def->counter_vars) v[var] = 0;
      for (auto var : rt.def->flag_vars) v[var] = 0;
      v[rt.def->state_cycles_var] = 0;
      rt.state = 0;
      ++rt.entered[0];
      for (auto& c : rt.def->conds) c.expr.arm(p->sampler);
      rt.was_true = !rt.def->machine && !rt.def->conds[0].expr.stateful() &&
                    Expr(rt.def->conds[0].expr).eval(p->sampler).truthy();
      rt.armed = true;
    }
  plan_history();
}

void TriggerEngine::arm_all() {
  const uint64_t now = emu_.cycle();
  if (async_) settle();
  inline_until_ = 0;
  gather(frame_.get(), now);
  for (auto& p : programs_) {
    std::fill(p->vars.begin(), p->vars.end(), 0);
    for (size_t i = 0; i < p->prog.events.size(); ++i)
      if (p->prog.events[i].kind == EventDef::Kind::Every)
        p->every_base[i] = p->sampler.sample(p->prog.events[i].source);
    for (auto& rt : p->triggers) {
      rt.armed = false;
      if (!rt.enabled) continue;
      rt.state = 0;
      ++rt.entered[0];
      for (auto& c : rt.def->conds) c.expr.arm(p->sampler);
      rt.was_true = !rt.def->machine && !rt.def->conds[0].expr.stateful() &&
                    Expr(rt.def->conds[0].expr).eval(p->sampler).truthy();
      rt.armed = true;
    }
  }
  armed_ = true;
  last_cycle_ = now;
  last_progress_ = now;
  progress_ = false;
  history_start_ = now;
  ring_.clear();
  plan_history();
}

void TriggerEngine::plan_history() {
  bool any = false;
  uint64_t pmax = 0;
  needs_rewind_ = false;
  for (const auto& p : programs_)
    for (const auto& rt : p->triggers) {
      if (!rt.enabled) continue;
      if (rt.def->captures()) {
        any = true;
        pmax = std::max(pmax, rt.def->max_pre());
      }
      for (const auto& st : rt.def->states)
        for (const auto& b : st.branches)
          for (const auto& a : b.actions) needs_rewind_ |= needs_hit_cycle(a.kind);
    }
  // Without a session (whose checkpoints serve), returning to a barrier hit found by the
  // evaluation thread needs snapshots of the run too.
  const bool rewind = needs_rewind_ && async_ && !session_;
  if (!any && !rewind) {
    snap_interval_ = 0;
    snap_keep_ = 0;
    next_snapshot_ = UINT64_MAX;
    ring_.clear();
    return;
  }
  const bool was_planned = snap_interval_ != 0;
  snap_interval_ = config_.history_interval
                       ? config_.history_interval
                       : std::max(kMinHistoryInterval, (pmax / 2 + 4095) / 4096 * 4096);
  // One more when evaluating asynchronously: the simulation runs up to a ring of frames ahead
  // of the evaluation (kRingFrames < kMinHistoryInterval), so a hit is handled a little late.
  snap_keep_ = static_cast<size_t>((pmax + snap_interval_ - 1) / snap_interval_) + 1 +
               (async_ ? 1 : 0);
  ring_.reserve(snap_keep_ + 1);
  const uint64_t now = emu_.cycle();
  if (!was_planned || ring_.empty()) take_snapshot(now);
  next_snapshot_ = (now / snap_interval_ + 1) * snap_interval_;
}

void TriggerEngine::take_snapshot(uint64_t cycle) {
  if (snap_interval_) next_snapshot_ = (cycle / snap_interval_ + 1) * snap_interval_;
  for (const auto& s : ring_)
    if (s.cycle == cycle) return;  // taken before a rewind: the same state
  Snapshot* slot = nullptr;
  if (ring_.size() < snap_keep_) {
    ring_.push_back({cycle, std::make_shared<std::vector<uint8_t>>()});
    slot = &ring_.back();
  } else {
    slot = &*std::min_element(ring_.begin(), ring_.end(), [](const Snapshot& a, const Snapshot& b) {
      return a.cycle < b.cycle;
    });
    // A capture still holds the oldest snapshot: give the ring a new buffer.
    if (slot->state.use_count() > 1) slot->state = std::make_shared<std::vector<uint8_t>>();
  }
  slot->cycle = cycle;
  slot->state->clear();
  emu_.save(*slot->state);
  if (snap_interval_) next_snapshot_ = (cycle / snap_interval_ + 1) * snap_interval_;
}

size_t TriggerEngine::history_snapshots() const { return ring_.size(); }

size_t TriggerEngine::history_bytes() const {
  size_t n = 0;
  for (const auto& s : ring_) n += s.state ? s.state->capacity() : 0;
  return n;
}

void TriggerEngine::on_txn(const emu::StageTxn& txn) {
  txn_progress_ = true;
  if (txn.stage != emu::Stage::Fetch || dispatch_bits_.empty()) return;
  std::array<uint64_t, 4> w{};
  std::memcpy(w.data(), txn.data.data(), 32);
  const auto cmd = isa::Command::decode(w);
  for (size_t b = 0; b < dispatch_bits_.size(); ++b) {
    const EventDef& ev = programs_[dispatch_bits_[b].program]->prog.events[dispatch_bits_[b].event];
    if (ev.opcode && *ev.opcode != cmd.raw_opcode) continue;
    if (ev.cmd_id && *ev.cmd_id != cmd.cmd_id) continue;
    if (ev.layer && *ev.layer != cmd.layer) continue;
    txn_dispatch_ |= uint64_t{1} << b;
  }
}

bool TriggerEngine::after_cycle(uint64_t cycle) {
  if (cycle >= next_snapshot_) take_snapshot(cycle);
  if (!async_ || cycle <= inline_until_) {
    gather(frame_.get(), cycle);
    apply_frame(frame_.get());
    eval_current_on_main(cycle);
    return !pending_.empty() || cycle >= next_capture_due_;
  }
  if (produced_ - tail_seen_ >= kRingFrames) {
    // Ring full: wait for the evaluator (taking its hits, so that it never waits for us).
    publish();
    while (produced_ - (tail_seen_ = tail_.load(std::memory_order_acquire)) >= kRingFrames) {
      if (barrier_.load(std::memory_order_acquire)) return true;
      take_hits();
      std::this_thread::yield();
    }
  }
  gather(ring_buf_.data() + (produced_ % kRingFrames) * stride_, cycle);
  ++produced_;
  if (produced_ - head_.load(std::memory_order_relaxed) >= kPublishEvery) publish();
  return attention_.load(std::memory_order_relaxed) || cycle >= next_capture_due_;
}

void TriggerEngine::eval_current_on_main(uint64_t cycle) {
  evaluate(cycle);
  for (auto& h : eval_hits_) pending_.push_back(std::move(h));
  eval_hits_.clear();
}

void TriggerEngine::set_symptoms(emu::RunState state, bool mismatch) {
  for (auto& p : programs_) {
    auto& v = p->vars;
    v[static_cast<uint32_t>(BuiltinVar::Assertion)] = state == emu::RunState::Assertion;
    v[static_cast<uint32_t>(BuiltinVar::Hang)] = state == emu::RunState::Hang;
    v[static_cast<uint32_t>(BuiltinVar::Error)] = state == emu::RunState::Error;
    v[static_cast<uint32_t>(BuiltinVar::Finished)] = state == emu::RunState::Finished;
    v[static_cast<uint32_t>(BuiltinVar::Mismatch)] = mismatch ? 1 : 0;
  }
}

bool TriggerEngine::evaluate(uint64_t cycle) {
  bool pause = false;
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
            v[a.var] = 0;
            break;
          case ActionKind::SetFlag:
            v[a.var] = 1;
            break;
          case ActionKind::ClearFlag:
            v[a.var] = 0;
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
        eval_hits_.push_back(std::move(ph));
        if (def.shots && ++rt.shots_used >= *def.shots) rt.exhausted = true;
        pause = true;
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
  return pause;
}

void TriggerEngine::stop_reasons(std::vector<StopReason>& out) { service(&out); }

void TriggerEngine::perform(const PendingHit& ph) {
  Program& p = *programs_[ph.program];
  Runtime& rt = p.triggers[ph.trigger];
  const TriggerDef& def = *rt.def;
  const TriggerBranch& br = def.states[ph.from_state].branches[ph.branch];
  if (hits_.size() >= config_.max_hits) {
    ++dropped_hits_;
    // Still honour halts: they change what the run does.
    for (const auto& a : br.actions)
      if (a.kind == ActionKind::Halt) halt_ = true;
    return;
  }
  TriggerHit h;
  h.cycle = ph.cycle;
  h.trigger_id = rt.id;
  h.trigger = def.name;
  h.number = ph.number;
  if (!def.machine) {
    h.state_path = "armed";
  } else {
    h.state_path = def.states[ph.from_state].name;
    if (br.target >= 0 && static_cast<uint32_t>(br.target) != ph.from_state)
      h.state_path += " -> " + def.states[br.target].name;
  }
  h.condition = br.cond >= 0 ? def.conds[br.cond].text : "else";
  for (size_t i = 0; i < rt.refs.size(); ++i)
    h.values.emplace_back(rt.refs[i].first, i < ph.values.size() ? ph.values[i] : 0);
  int capture_no = 0;
  for (const auto& a : br.actions) {
    h.actions.push_back(a.to_string());
    switch (a.kind) {
      case ActionKind::Halt:
        h.halted = true;
        halt_ = true;
        break;
      case ActionKind::Capture: {
        if (!config_.make_replica) {
          h.messages.push_back("capture: not available here (no replica emulator)");
          break;
        }
        if (rt.captures >= config_.max_captures_per_trigger) {
          h.messages.push_back("capture: skipped (limit of " +
                               std::to_string(config_.max_captures_per_trigger) +
                               " captures per trigger reached)");
          break;
        }
        ++rt.captures;
        CaptureRequest req;
        req.hit = hits_.size();
        req.trigger_id = rt.id;
        req.hit_cycle = ph.cycle;
        req.pre = a.pre;
        req.post = a.post;
        const uint64_t want = ph.cycle > a.pre ? ph.cycle - a.pre : 0;
        const Snapshot* best = nullptr;
        for (const auto& s : ring_)
          if (s.cycle <= want && (!best || s.cycle > best->cycle)) best = &s;
        if (!best)
          for (const auto& s : ring_)
            if (!best || s.cycle < best->cycle) best = &s;
        if (best) req.from = *best;
        CaptureFile cf;
        cf.requested_from = want;
        cf.requested_to = ph.cycle + a.post;
        // With open_output the files are named here and placed when written (materialize()).
        std::string base = (config_.open_output ? "" : config_.capture_dir + "/") +
                           sanitize(def.name) + "-" + std::to_string(ph.number);
        if (capture_no++) base += "-" + std::to_string(capture_no);
        cf.fst = base + ".fst";
        cf.log = base + ".log";
        req.file = h.captures.size();
        h.captures.push_back(cf);
        captures_.push_back(std::move(req));
        next_capture_due_ = std::min(next_capture_due_, ph.cycle + a.post);
        break;
      }
      case ActionKind::Checkpoint: {
        const std::string name =
            a.text.empty() ? sanitize(def.name) + "-" + std::to_string(ph.number) : a.text;
        if (session_) {
          session_->timeline().save_named(name);
          h.checkpoint = name;
        } else {
          std::vector<uint8_t> state;
          emu_.save(state);
          std::string path = config_.capture_dir + "/" + name + ".state";
          if (config_.open_output) {
            std::string e;
            auto opened = config_.open_output(name + ".state", e);
            if (!opened) {
              h.messages.push_back("checkpoint: " + e);
              break;
            }
            path = *opened;
          }
          std::ofstream f(path, std::ios::binary);
          f.write(reinterpret_cast<const char*>(state.data()),
                  static_cast<std::streamsize>(state.size()));
          if (f)
            h.checkpoint = path;
          else
            h.messages.push_back("checkpoint: cannot write " + path);
        }
        break;
      }
      case ActionKind::Snapshot:
        for (int i = 0; i < isa::kNumCounters; ++i)
          h.counters.emplace_back(isa::counter_name(i), emu_.counter(i));
        break;
      case ActionKind::Record: {
        if (!record_hook_) {
          h.messages.push_back("record: no replay-packet hook in this run");
          break;
        }
        std::string written;
        if (auto e = record_hook_->record(h, a.text, written); !e.empty())
          h.messages.push_back("record: " + e);
        else
          h.record = written;
        break;
      }
      case ActionKind::Log:
        h.messages.push_back(a.text);
        break;
      default:
        break;
    }
  }
  hits_.push_back(std::move(h));
}

void TriggerEngine::service(std::vector<StopReason>* reasons) {
  for (const auto& ph : pending_) {
    const size_t before = hits_.size();
    perform(ph);
    if (hits_.size() > before && hits_.back().halted && reasons) {
      const auto& h = hits_.back();
      reasons->push_back(
          {StopKind::Trigger, h.trigger_id, h.trigger + ": " + h.condition + " (" + h.state_path + ")"});
    }
  }
  pending_.clear();
  service_captures(std::nullopt);
}

void TriggerEngine::service_captures(std::optional<uint64_t> run_end) {
  const uint64_t now = emu_.cycle();
  next_capture_due_ = UINT64_MAX;
  std::vector<CaptureRequest> keep;
  for (auto& req : captures_) {
    const uint64_t end = req.hit_cycle + req.post;
    if (run_end || end <= now || !armed_) {
      materialize(req, run_end);
    } else {
      next_capture_due_ = std::min(next_capture_due_, end);
      keep.push_back(std::move(req));
    }
  }
  captures_ = std::move(keep);
}

std::string TriggerEngine::advance(emu::Emulator& e, uint64_t target, drive::Participant* with) {
  static const std::vector<Intervention> kNone;
  drive::Driver driver(e);
  drive::InterventionActor actor(e, session_ ? session_->interventions() : kNone);
  driver.add(actor);
  if (with) driver.add(*with);
  const uint64_t from = e.cycle();
  const auto s = driver.run_until(target, UINT64_MAX);
  resimulated_ += e.cycle() - from;
  return s.failed ? s.detail : std::string();
}

void TriggerEngine::materialize(CaptureRequest& req, std::optional<uint64_t> run_end) {
  if (req.hit >= hits_.size()) return;
  TriggerHit& hit = hits_[req.hit];
  if (req.file >= hit.captures.size()) return;
  CaptureFile* cf = &hit.captures[req.file];
  if (!req.from.state) {
    cf->error = "no history snapshot";
    return;
  }
  std::string error;
  if (!replica_) replica_ = config_.make_replica(error);
  if (!replica_) {
    cf->error = "cannot create a replica emulator: " + error;
    return;
  }
  if (!replica_->restore(*req.from.state, error)) {
    cf->error = "cannot restore the history snapshot: " + error;
    return;
  }
  const uint64_t before = resimulated_;
  const uint64_t from = std::max(cf->requested_from, req.from.cycle);
  if (auto e = advance(*replica_, from); !e.empty()) {
    cf->error = e;
    return;
  }
  if (replica_->cycle() != from) {
    cf->error =
        "the run ended at cycle " + std::to_string(replica_->cycle()) + " before the window starts";
    return;
  }
  if (config_.open_output) {
    std::string e;
    auto fst = config_.open_output(cf->fst, e);
    auto log = fst ? config_.open_output(cf->log, e) : std::nullopt;
    if (!log) {
      cf->error = e;
      return;
    }
    cf->fst = *fst;
    cf->log = *log;
  } else {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(cf->fst).parent_path(), ec);
  }
  if (auto e = replica_->wave_open(cf->fst); !e.empty()) {
    cf->error = e;
    return;
  }
  EventLog log;
  drive::HookParticipant watch(nullptr, &log);
  std::array<uint64_t, isa::kNumCounters> c_from{}, c_hit{}, c_to{};
  for (int i = 0; i < isa::kNumCounters; ++i) c_from[i] = replica_->counter(i);
  std::string e = advance(*replica_, req.hit_cycle, &watch);
  for (int i = 0; i < isa::kNumCounters; ++i) c_hit[i] = replica_->counter(i);
  if (e.empty()) e = advance(*replica_, cf->requested_to, &watch);
  for (int i = 0; i < isa::kNumCounters; ++i) c_to[i] = replica_->counter(i);
  replica_->wave_close();
  cf->from = from;
  cf->to = replica_->cycle();
  cf->truncated = cf->to < cf->requested_to || from > cf->requested_from;
  cf->resimulated = resimulated_ - before;
  if (!e.empty()) cf->error = e;
  (void)run_end;

  std::ofstream f(cf->log);
  f << "# bud trigger capture: trigger " << hit.trigger << " hit " << hit.number << " at cycle "
    << hit.cycle << " (" << hit.state_path << ": " << hit.condition << ")\n";
  f << "# window: cycles " << cf->from << ".." << cf->to << " (requested " << cf->requested_from
    << ".." << cf->requested_to << ", pre " << req.pre << " post " << req.post << ")";
  if (cf->to < cf->requested_to)
    f << "; the run ended at cycle " << cf->to << " (" << emu::run_state_name(replica_->state())
      << ")";
  if (from > cf->requested_from) f << "; history starts at cycle " << from;
  f << "\n# counters changed in the window (at start / at hit / at end):\n";
  for (int i = 0; i < isa::kNumCounters; ++i)
    if (c_to[i] != c_from[i])
      f << "#   " << isa::counter_name(i) << " " << c_from[i] << " / " << c_hit[i] << " / "
        << c_to[i] << "\n";
  f << "# events (cycle at which triggers see them): " << log.events << " stage transactions\n";
  // Trigger hits inside the window, merged in cycle order with the transactions.
  std::vector<std::pair<uint64_t, std::string>> marks;
  for (const auto& h : hits_)
    if (h.cycle >= cf->from && h.cycle <= cf->to)
      marks.emplace_back(h.cycle, std::to_string(h.cycle) + " TRIGGER " + h.trigger + " hit " +
                                      std::to_string(h.number) + " (" + h.state_path + ")\n");
  size_t m = 0;
  size_t pos = 0;
  while (pos < log.text.size()) {
    const size_t nl = log.text.find('\n', pos);
    const std::string line = log.text.substr(pos, nl - pos + 1);
    const uint64_t c = std::strtoull(line.c_str(), nullptr, 10);
    while (m < marks.size() && marks[m].first < c) f << marks[m++].second;
    f << line;
    pos = nl + 1;
  }
  while (m < marks.size()) f << marks[m++].second;
  if (!f) cf->error = "cannot write " + cf->log;
  cf->written = cf->error.empty();
}

void TriggerEngine::finish_run(emu::RunState state, bool mismatch) {
  if (state != emu::RunState::Ready && armed_) {
    const uint64_t cycle = emu_.cycle();
    settle();  // every cycle evaluated; the evaluator is idle from here on
    if (cycle != last_cycle_) {
      // An emulator that does not hook its final cycle: evaluate it now.
      gather(frame_.get(), cycle);
      apply_frame(frame_.get());
      set_symptoms(state, mismatch);
      eval_current_on_main(cycle);
    } else if (mismatch) {
      // The checks ran after the final cycle was evaluated: evaluate it again (the frame still
      // holds the final cycle), only for the triggers that read `mismatch` (their windows see
      // the final sample twice).
      set_symptoms(state, mismatch);
      only_mismatch_ = true;
      eval_current_on_main(cycle);
      only_mismatch_ = false;
    }
    service(nullptr);
  }
  service_captures(emu_.cycle());
}

void TriggerEngine::quiesce() {
  if (!async_) return;
  publish();
  while (tail_.load(std::memory_order_acquire) < produced_ &&
         !barrier_.load(std::memory_order_acquire)) {
    take_hits();
    std::this_thread::yield();
  }
}

std::vector<TriggerStatus> TriggerEngine::status() const {
  // Read between cycles of a running session (remote observers): the evaluation thread must not
  // be changing what is read; it stops when it has caught up (or at a barrier hit).
  const_cast<TriggerEngine*>(this)->quiesce();
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
        std::string acts;
        for (const auto& a : d.states[0].branches[0].actions)
          acts += (acts.empty() ? "" : ", ") + a.to_string();
        s.summary.push_back("trigger " + d.name + shots + " when " + d.conds[0].text + " do " +
                            acts);
      } else {
        s.summary.push_back("trigger " + d.name + shots + " (state machine, " +
                            std::to_string(d.states.size()) + " states)");
        for (const auto& st : d.states) {
          s.summary.push_back("  state " + st.name);
          for (const auto& b : st.branches) {
            std::string acts;
            for (const auto& a : b.actions) acts += (acts.empty() ? "" : ", ") + a.to_string();
            s.summary.push_back(b.cond >= 0 ? "    if " + d.conds[b.cond].text + " then " + acts
                                            : "    else " + acts);
          }
        }
      }
      out.push_back(std::move(s));
    }
  return out;
}

void TriggerParticipant::on_start(uint64_t) { engine_.arm(); }

drive::PauseAction TriggerParticipant::on_pause(uint64_t) {
  engine_.service(nullptr);
  return engine_.halt_requested() ? drive::PauseAction::Halt : drive::PauseAction::Continue;
}

DriveResult drive(emu::Emulator& emu, TriggerEngine& engine, uint64_t max_cycles,
                  const std::function<void(uint64_t)>& progress, uint64_t progress_interval) {
  if (progress_interval == 0) progress_interval = uint64_t{1} << 20;
  drive::Driver driver(emu);
  TriggerParticipant triggers(engine);
  driver.add(triggers);
  driver.set_rewinder(&triggers);
  drive::ProgressParticipant shown(progress, progress_interval);
  if (progress) driver.add(shown);
  const auto s = driver.run_until(max_cycles, progress_interval);
  DriveResult r;
  r.halted = s.halted;
  if (s.failed) r.error = s.detail;
  r.cycle = emu.cycle();
  return r;
}

}  // namespace bud::debugger
