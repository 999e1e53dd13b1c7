// Shared helpers of the debugger tests: a debugging session over the Verilated NPU built the way
// `bud debug` builds it (tools/bud/DebugCommand.cpp, make_session), prepared workloads cached
// per name, and small accessors for CommandResults.
#pragma once

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "debugger/commands/Interpreter.h"
#include "debugger/session/Session.h"
#include "emu/run/Designs.h"
#include "emu/run/RunJob.h"

namespace bud::test {

/// Lowering, reference and golden model run once per workload.
inline const run::PreparedRun& prepared(const std::string& workload) {
  static std::map<std::string, run::PreparedRun> cache;
  auto it = cache.find(workload);
  if (it == cache.end()) {
    run::RunOptions o;
    o.workload = workload;
    auto p = run::prepare(o);
    INFO(workload << ": " << (p ? std::string() : p.error()));
    REQUIRE(p);
    it = cache.emplace(workload, std::move(*p)).first;
  }
  return it->second;
}

/// A copy of make_session (tools/bud/DebugCommand.cpp): a `design` emulator (the NPU unless
/// told) loaded with `workload`, stopped at cycle 0, wrapped in a Session.
inline std::unique_ptr<debugger::Session> make_session(const std::string& workload,
                                                       uint64_t interval = 100'000,
                                                       uint64_t budget = 512ull << 20,
                                                       uint64_t chunk = 1u << 16,
                                                       const std::string& design = "npu") {
  const auto& p = prepared(workload);
  run::RunOptions options;
  options.workload = workload;
  options.emulator.design = design;
  std::string e;
  auto emu = emu::make_emulator(options.emulator, e);
  INFO(e);
  REQUIRE(emu);
  e = run::start(p, options, *emu);
  INFO(e);
  REQUIRE(e.empty());
  debugger::ProgramInfo info;
  info.workload = p.workload.name;
  info.commands = p.program.commands;
  for (const auto& l : p.workload.layers) info.layer_names.push_back(l.name);
  debugger::SessionConfig config;
  config.timeline.interval = interval;
  config.timeline.memory_budget = budget;
  config.chunk = chunk;
  return std::make_unique<debugger::Session>(std::move(emu), std::move(info), config);
}

/// A session and an interpreter over it.
struct Debugger {
  std::unique_ptr<debugger::Session> session;
  std::unique_ptr<debugger::Interpreter> in;

  explicit Debugger(const std::string& workload, uint64_t interval = 100'000,
                    uint64_t budget = 512ull << 20, uint64_t chunk = 1u << 16,
                    const std::string& design = "npu")
      : session(make_session(workload, interval, budget, chunk, design)),
        in(std::make_unique<debugger::Interpreter>(*session)) {}

  /// Runs a line that must succeed.
  debugger::CommandResult ok(const std::string& line) {
    auto r = in->execute(line);
    INFO("command: " << line << "\nerror: " << r.error);
    REQUIRE(r.ok);
    return r;
  }
  /// Runs a line that must fail; returns the error.
  std::string fails(const std::string& line) {
    auto r = in->execute(line);
    INFO("command: " << line);
    REQUIRE_FALSE(r.ok);
    REQUIRE_FALSE(r.error.empty());
    return r.error;
  }
  uint64_t cycle() const { return session->emu().cycle(); }
  uint64_t digest() { return session->emu().digest(); }
  /// Current value of a signal or counter by name.
  uint64_t value(const std::string& name) {
    auto& emu = session->emu();
    auto id = emu.find_signal(name);
    INFO(name);
    REQUIRE(id);
    return emu.read_signal(*id).low();
  }
};

/// Everything a result printed, one line each (for failure messages and substring checks).
inline std::string text(const debugger::CommandResult& r) {
  std::string s;
  for (const auto& l : r.lines) s += l + "\n";
  return s;
}

inline bool contains(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}

/// The kinds of the stop reasons of a result, in order.
inline std::vector<std::string> reason_kinds(const debugger::CommandResult& r) {
  std::vector<std::string> v;
  if (r.stop)
    for (const auto& x : r.stop->reasons) v.push_back(debugger::stop_kind_name(x.kind));
  return v;
}

/// A fresh emulator of `workload` run forward (no debugger) to `cycle`; its digest.
inline uint64_t forward_digest(const std::string& workload, uint64_t cycle) {
  auto s = make_session(workload);
  auto& emu = s->emu();
  while (emu.cycle() < cycle) {
    const auto r = emu.step(cycle - emu.cycle());
    REQUIRE(r.cycles > 0);
  }
  return emu.digest();
}

}  // namespace bud::test
