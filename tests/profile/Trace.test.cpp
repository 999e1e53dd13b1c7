// The --trace timeline: valid trace-event structure (phases, pid/tid, per-track time order), one
// slice per command on its engine's track and on fetch's, fetch's slices tiling the run up to the
// END's dispatch, and counter tracks per window.
#include "profile/Trace.h"

#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "tests/profile/ProfileTestSupport.h"

using namespace bud;
using namespace bud::profile;

TEST_CASE("the trace is well-formed and has a slice per command per engine", "[profile][trace]") {
  run::RunOptions o;
  o.workload = "conv";
  auto prepared = run::prepare(o);
  REQUIRE(prepared);
  auto r = run_profiled(*prepared, o, 512);
  REQUIRE(r.attribution);
  REQUIRE(r.report.passed);
  REQUIRE(r.windows);
  const auto trace = trace_json(*r.attribution, prepared->program, r.design, *r.windows);
  const auto& events = trace["traceEvents"];
  REQUIRE(events.is_array());
  std::map<int, std::vector<std::pair<uint64_t, uint64_t>>> slices;  // tid -> (ts, dur)
  std::map<int, std::multiset<uint64_t>> commands;                   // tid -> command indices
  std::map<std::string, std::vector<uint64_t>> counters;             // name -> ts
  std::set<int> named;
  for (const auto& e : events) {
    const std::string ph = e["ph"];
    REQUIRE((ph == "M" || ph == "X" || ph == "C"));
    CHECK(e["pid"] == 1);
    if (ph == "M") {
      if (e["name"] == "thread_name") named.insert(e["tid"].get<int>());
      continue;
    }
    REQUIRE(e["ts"].is_number_unsigned());
    if (ph == "X") {
      REQUIRE(e["dur"].is_number_unsigned());
      CHECK(e["dur"].get<uint64_t>() >= 1);
      const int tid = e["tid"];
      slices[tid].emplace_back(e["ts"].get<uint64_t>(), e["dur"].get<uint64_t>());
      commands[tid].insert(e["args"]["index"].get<uint64_t>());
      CHECK(e["args"]["layer"].get<std::string>().size() > 0);
      CHECK(e["args"].contains("opcode"));
    } else {
      counters[e["name"]].push_back(e["ts"].get<uint64_t>());
    }
  }
  CHECK(named == std::set<int>{1, 2, 3, 4});
  // Per track: in time order, never overlapping.
  for (const auto& [tid, v] : slices) {
    INFO("track " << tid);
    for (size_t i = 1; i < v.size(); ++i) CHECK(v[i].first >= v[i - 1].first + v[i - 1].second);
  }
  // Fetch's slices tile [0, END's dispatch] exactly.
  const auto& f = slices[1];
  REQUIRE_FALSE(f.empty());
  CHECK(f.front().first == 0);
  for (size_t i = 1; i < f.size(); ++i) CHECK(f[i].first == f[i - 1].first + f[i - 1].second);
  // Every command once on fetch, every LOAD/GEMM/POST/STORE once on its engine.
  const auto& prog = prepared->program;
  CHECK(commands[1].size() == prog.commands.size());
  size_t loads = 0, compute = 0, stores = 0;
  for (const auto& c : prog.commands) {
    loads += c.opcode == isa::Opcode::Load;
    compute += c.opcode == isa::Opcode::Gemm || c.opcode == isa::Opcode::Post;
    stores += c.opcode == isa::Opcode::Store;
  }
  CHECK(commands[2].size() == loads);
  CHECK(commands[3].size() == compute);
  CHECK(commands[4].size() == stores);
  for (const auto& [tid, set] : commands)
    for (auto i : set) CHECK(set.count(i) == 1);
  // Counter tracks: one sample per window, in order.
  REQUIRE(counters.count("stall rate"));
  REQUIRE(counters.count("DRAM bytes/cycle"));
  REQUIRE(counters.count("MAC utilisation"));
  const auto& ts = counters["stall rate"];
  CHECK(ts.size() == (r.report.cycles + 511) / 512);
  for (size_t i = 1; i < ts.size(); ++i) CHECK(ts[i] == ts[i - 1] + 512);
}

TEST_CASE("trace counter samples stay bounded: the window doubles", "[profile][trace]") {
  run::RunOptions o;
  o.workload = "conv";
  auto prepared = run::prepare(o);
  REQUIRE(prepared);
  auto r = run_profiled(*prepared, o, 1);  // one sample per cycle would be ~27,600
  REQUIRE(r.report.passed);
  REQUIRE(r.windows);
  const auto& s = r.windows->samples();
  CHECK(s.size() <= TraceWindows::kMaxSamples);
  CHECK(s.size() >= TraceWindows::kMaxSamples / 4);
  const uint64_t w = r.windows->window();
  CHECK(w >= 2);
  CHECK(r.report.cycles / w < TraceWindows::kMaxSamples);
  REQUIRE(s.size() > 2);
  CHECK(s.front().cycle == 0);
  for (size_t i = 1; i + 1 < s.size(); ++i) CHECK(s[i].cycle == s[i - 1].cycle + w);
  CHECK(s.back().cycle == r.report.cycles);
  // Counters are cumulative: the samples kept still add up to the run's totals.
  const auto useful = r.design.find_counter("macs_useful");
  REQUIRE(useful);
  CHECK(s.back().counters[static_cast<size_t>(*useful)] == r.report.counter("macs_useful"));
}
