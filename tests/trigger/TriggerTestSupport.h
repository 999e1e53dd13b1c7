// Shared helpers of the trigger tests: prepared workloads, an independent per-cycle recording of
// counters, signals and dispatches (the reference the trigger engine is checked against), and a
// batch run of trigger text through the engine as `bud run --triggers` does it.
#pragma once

#include <array>
#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "debugger/trigger/TriggerEngine.h"
#include "debugger/trigger/TriggerParticipant.h"
#include "emu/isa/Isa.h"
#include "emu/npu/NpuEmulator.h"
#include "emu/run/RunJob.h"

namespace bud::test {

inline const run::PreparedRun& prepared(const std::string& workload) {
  static std::map<std::string, std::unique_ptr<run::PreparedRun>> cache;
  auto& slot = cache[workload];
  if (!slot) {
    run::RunOptions o;
    o.workload = workload;
    auto p = run::prepare(o);
    INFO(workload << ": " << (p ? std::string() : p.error()));
    REQUIRE(p);
    slot = std::make_unique<run::PreparedRun>(std::move(p).value());
  }
  return *slot;
}

inline std::vector<std::string> layer_names(const run::PreparedRun& p) {
  std::vector<std::string> v;
  for (const auto& l : p.workload.layers) v.push_back(l.name);
  return v;
}

/// One fetch dispatch, at the cycle triggers see it.
struct Dispatch {
  uint64_t cycle = 0;
  isa::Command cmd;
};

/// Everything sampled after every cycle of a run, independently of the trigger engine.
/// counters[c] and load_state[c] are the values at cycle c (c = 0: after reset, the arm point).
struct Samples {
  std::vector<std::array<uint64_t, isa::kNumCounters>> counters;
  std::vector<uint64_t> load_state;
  std::vector<Dispatch> dispatches;
  std::vector<uint64_t> progress_cycles;  ///< cycles with at least one stage transaction
  uint64_t end_cycle = 0;
  emu::RunState end_state = emu::RunState::Ready;
  uint64_t at(int counter, uint64_t cycle) const { return counters[cycle][counter]; }
};

class Recorder final : public emu::CycleHook, public emu::TxnObserver {
 public:
  Recorder(emu::Emulator& e, Samples& s) : emu_(e), s_(s), state_(*e.find_signal("load.state")) {
    sample();
  }
  bool after_cycle(uint64_t) override {
    sample();
    return false;
  }
  void on_txn(const emu::StageTxn& t) override {
    if (s_.progress_cycles.empty() || s_.progress_cycles.back() != t.cycle + 1)
      s_.progress_cycles.push_back(t.cycle + 1);
    if (t.stage != emu::Stage::Fetch) return;
    std::array<uint64_t, 4> w{};
    std::memcpy(w.data(), t.data.data(), 32);
    s_.dispatches.push_back({t.cycle + 1, isa::Command::decode(w)});
  }
  void sample() {
    std::array<uint64_t, isa::kNumCounters> c{};
    for (int i = 0; i < isa::kNumCounters; ++i) c[i] = emu_.counter(i);
    s_.counters.push_back(c);
    s_.load_state.push_back(emu_.read_signal(state_).low());
  }

 private:
  emu::Emulator& emu_;
  Samples& s_;
  emu::SignalId state_;
};

inline run::RunOptions options_for(const std::string& workload, const emu::NpuConfig& npu = {}) {
  run::RunOptions o;
  o.workload = workload;
  o.emulator = npu;
  o.max_cycles = 5'000'000;
  return o;
}

/// Runs `workload` recording every cycle (the final cycle, on which the run ends, included).
inline Samples record(const std::string& workload, const emu::NpuConfig& npu = {},
                      const std::vector<emu::FaultSpec>& faults = {}) {
  const auto& p = prepared(workload);
  auto o = options_for(workload, npu);
  o.faults = faults;
  emu::NpuEmulator e(o.emulator);
  REQUIRE(run::start(p, o, e).empty());
  Samples s;
  Recorder r(e, s);
  e.set_cycle_hook(&r);
  e.set_txn_observer(&r);
  while (e.state() == emu::RunState::Ready && e.cycle() < o.max_cycles) e.step(1 << 20);
  e.set_cycle_hook(nullptr);
  e.set_txn_observer(nullptr);
  if (s.counters.size() == e.cycle()) r.sample();  // the last cycle is not hooked
  s.end_cycle = e.cycle();
  s.end_state = e.state();
  REQUIRE(s.counters.size() == s.end_cycle + 1);
  return s;
}

/// Rising edges (false -> true, false at the arm point) of a per-cycle condition, cycles >= 1.
template <class F>
std::vector<uint64_t> edges(const Samples& s, F cond) {
  std::vector<uint64_t> out;
  bool was = false;
  for (uint64_t t = 1; t <= s.end_cycle; ++t) {
    const bool now = cond(t);
    if (now && !was) out.push_back(t);
    was = now;
  }
  return out;
}

/// A batch run with triggers, as `bud run --triggers` does it.
struct TriggerRun {
  std::unique_ptr<emu::NpuEmulator> emu;
  std::unique_ptr<debugger::TriggerEngine> engine;
  debugger::TriggerParse parse;
  debugger::DriveResult drive;
  ~TriggerRun() { engine.reset(); }  // the replica (newer emulator) goes first
  std::vector<uint64_t> hit_cycles(const std::string& trigger) const {
    std::vector<uint64_t> v;
    for (const auto& h : engine->hits())
      if (h.trigger == trigger) v.push_back(h.cycle);
    return v;
  }
};

inline std::unique_ptr<TriggerRun> run_triggers(const std::string& workload,
                                                const std::string& text,
                                                const std::string& capture_dir = ".",
                                                const emu::NpuConfig& npu = {},
                                                const std::vector<emu::FaultSpec>& faults = {},
                                                bool async = true) {
  const auto& p = prepared(workload);
  auto o = options_for(workload, npu);
  o.faults = faults;
  auto r = std::make_unique<TriggerRun>();
  r->emu = std::make_unique<emu::NpuEmulator>(o.emulator);
  REQUIRE(run::start(p, o, *r->emu).empty());
  const auto layers = layer_names(p);
  debugger::TriggerEnv env;
  env.emu = r->emu.get();
  env.layer_names = &layers;
  r->parse = debugger::parse_triggers(text, "test.trig", env);
  for (const auto& e : r->parse.errors) UNSCOPED_INFO(e.to_string());
  REQUIRE(r->parse.ok());
  debugger::TriggerEngineConfig config;
  config.capture_dir = capture_dir;
  config.async = async;
  config.make_replica = [&p, o](std::string& error) -> std::unique_ptr<emu::Emulator> {
    auto e = std::make_unique<emu::NpuEmulator>(o.emulator);
    error = run::start(p, o, *e);
    return error.empty() ? std::move(e) : nullptr;
  };
  r->engine = std::make_unique<debugger::TriggerEngine>(*r->emu, config);
  r->engine->add(std::move(*r->parse.program));
  r->drive = debugger::drive(*r->emu, *r->engine, o.max_cycles, nullptr, 1 << 20);
  r->engine->finish_run(r->emu->state(), false);
  return r;
}

}  // namespace bud::test
