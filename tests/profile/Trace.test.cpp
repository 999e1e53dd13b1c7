// The --trace timeline: valid trace-event structure (phases, pid/tid, time order), one slice per
// command on its engine's track and on fetch's, every track (the four holders and the host)
// tiling the run's cycles exactly, a flow per dependency token from its push to its pop with
// matching ids, the host's activities on the same timebase, and counter tracks per window.
#include "profile/Trace.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>

#include "tests/profile/ProfileTestSupport.h"

using namespace bud;
using namespace bud::profile;

namespace {

struct Slice {
  uint64_t ts = 0, dur = 0;
  std::string name;
  bool command = false;  // a command's slice (args.index), not a gap
};

}  // namespace

TEST_CASE("the trace is well-formed, its tracks tile the run, tokens flow from push to pop",
          "[profile][trace]") {
  run::RunOptions o;
  o.workload = "conv";
  auto prepared = run::prepare(o);
  REQUIRE(prepared);
  auto r = run_profiled(*prepared, o, 512);
  REQUIRE(r.attribution);
  REQUIRE(r.report.passed);
  REQUIRE(r.windows);
  REQUIRE(r.host);
  const uint64_t end = r.end_cycle;
  CHECK(end == r.report.cycles);
  const auto trace =
      trace_json(*r.attribution, prepared->program, r.design, *r.windows, r.host.get(), end);
  const auto& events = trace["traceEvents"];
  REQUIRE(events.is_array());
  std::map<int, std::vector<Slice>> slices;               // tid -> slices
  std::map<int, std::multiset<uint64_t>> commands;        // tid -> command indices
  std::map<std::string, std::vector<uint64_t>> counters;  // name -> ts
  std::map<uint64_t, std::vector<std::pair<std::string, std::pair<int, uint64_t>>>> flows;
  std::vector<std::pair<std::string, uint64_t>> instants;
  std::set<int> named;
  uint64_t last_ts = 0;
  for (const auto& e : events) {
    const std::string ph = e["ph"];
    REQUIRE((ph == "M" || ph == "X" || ph == "C" || ph == "s" || ph == "f" || ph == "i"));
    CHECK(e["pid"] == 1);
    if (ph == "M") {
      if (e["name"] == "thread_name") named.insert(e["tid"].get<int>());
      continue;
    }
    REQUIRE(e["ts"].is_number_unsigned());
    const uint64_t ts = e["ts"];
    CHECK(ts >= last_ts);  // the whole array in time order
    last_ts = ts;
    if (ph == "C") {
      counters[e["name"]].push_back(ts);
      continue;
    }
    const int tid = e["tid"];
    CHECK((tid >= 1 && tid <= kHostTid));
    if (ph == "X") {
      REQUIRE(e["dur"].is_number_unsigned());
      CHECK(e["dur"].get<uint64_t>() >= 1);
      const bool command = e["args"].contains("index");
      slices[tid].push_back({ts, e["dur"].get<uint64_t>(), e["name"], command});
      if (command) {
        commands[tid].insert(e["args"]["index"].get<uint64_t>());
        CHECK(e["args"]["layer"].get<std::string>().size() > 0);
        CHECK(e["args"].contains("opcode"));
      }
    } else if (ph == "s" || ph == "f") {
      REQUIRE(e["id"].is_number_unsigned());
      if (ph == "f") CHECK(e["bp"] == "e");
      flows[e["id"].get<uint64_t>()].push_back({ph, {tid, ts}});
    } else {
      CHECK(e["s"] == "t");
      CHECK(tid == kHostTid);
      instants.emplace_back(e["name"], ts);
    }
  }
  CHECK(named == std::set<int>{1, 2, 3, 4, kHostTid});
  // Every track, the host's included, tiles cycles 1..end exactly: no gap, no overlap.
  for (int tid = 1; tid <= kHostTid; ++tid) {
    INFO("track " << tid);
    const auto& v = slices[tid];
    REQUIRE_FALSE(v.empty());
    CHECK(v.front().ts == 1);
    for (size_t i = 1; i < v.size(); ++i) CHECK(v[i].ts == v[i - 1].ts + v[i - 1].dur);
    CHECK(v.back().ts + v.back().dur - 1 == end);
  }
  // Every command once on fetch, every LOAD/GEMM/POST/STORE once on its engine.
  const auto& prog = prepared->program;
  CHECK(commands[1].size() == prog.commands.size());
  size_t loads = 0, compute = 0, stores = 0, pops = 0;
  for (const auto& c : prog.commands) {
    loads += c.opcode == isa::Opcode::Load;
    compute += c.opcode == isa::Opcode::Gemm || c.opcode == isa::Opcode::Post;
    stores += c.opcode == isa::Opcode::Store;
    pops += c.pop_prev + c.pop_next;
  }
  CHECK(commands[2].size() == loads);
  CHECK(commands[3].size() == compute);
  CHECK(commands[4].size() == stores);
  for (const auto& [tid, set] : commands)
    for (auto i : set) CHECK(set.count(i) == 1);
  // Flows: one start and one finish per id, the finish not before the start, each inside a
  // command slice of its track; every pop of the program has its token's arrow.
  auto in_command = [&](int tid, uint64_t ts) {
    for (const auto& s : slices[tid])
      if (s.command && ts >= s.ts && ts < s.ts + s.dur) return true;
    return false;
  };
  REQUIRE(pops > 0);
  CHECK(flows.size() == pops);
  CHECK(trace["otherData"]["tokens"] == pops);
  for (const auto& [id, ends] : flows) {
    INFO("flow " << id);
    REQUIRE(ends.size() == 2);
    CHECK(ends[0].first == "s");
    CHECK(ends[1].first == "f");
    CHECK(ends[1].second.second >= ends[0].second.second);
    CHECK(ends[0].second.first != ends[1].second.first);
    CHECK(in_command(ends[0].second.first, ends[0].second.second));
    CHECK(in_command(ends[1].second.first, ends[1].second.second));
  }
  // The host: setup writes, the doorbell before fetch's first dispatch, no polls (the ring holds
  // the program), the interrupt at or after the END's dispatch, then STATUS read and IRQ ack.
  std::vector<std::string> host;
  uint64_t doorbell = 0, status = 0;
  for (const auto& s : slices[kHostTid]) {
    if (s.name.front() == '(' || s.name.rfind("wait", 0) == 0) continue;
    host.push_back(s.name);
    if (s.name == "doorbell") doorbell = s.ts;
    if (s.name == "STATUS read") status = s.ts;
  }
  CHECK(host == std::vector<std::string>{"setup", "doorbell", "STATUS read", "IRQ ack"});
  const auto& fetch = slices[1];
  const auto first_dispatch =
      std::find_if(fetch.begin(), fetch.end(), [](const Slice& s) { return s.command; });
  REQUIRE(first_dispatch != fetch.end());
  CHECK(doorbell < first_dispatch->ts + first_dispatch->dur - 1);
  REQUIRE(instants.size() == 2);
  CHECK(instants[0].first == "interrupt");
  const uint64_t end_dispatch = r.attribution->commands()[prog.commands.size() - 1].dispatched;
  CHECK(instants[0].second >= end_dispatch);
  CHECK(status > instants[0].second);
  CHECK(instants[1].first == "output read-back");
  CHECK(instants[1].second == end);
  CHECK(r.host->dropped() == 0);
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

TEST_CASE("a program longer than the ring shows the host's polls and refills", "[profile][trace]") {
  // The conv block 7 times: 2338 commands through the 2048-entry ring (docs/workloads.md).
  const std::string path = std::string(BUD_BINARY_DIR) + "/trace_conv7.textpb";
  {
    std::ifstream in(std::string(BUD_SOURCE_DIR) + "/emu/workload/builtins/conv.textpb");
    std::ofstream out(path);
    out << in.rdbuf() << "\nrepeat: 7\n";
  }
  run::RunOptions o;
  o.workload = path;
  auto prepared = run::prepare(o);
  REQUIRE(prepared);
  REQUIRE(prepared->program.commands.size() > 2048);
  auto r = run_profiled(*prepared, o, 4096);
  REQUIRE(r.report.passed);
  REQUIRE(r.host);
  CHECK(r.host->dropped() == 0);
  const auto trace = trace_json(*r.attribution, prepared->program, r.design, *r.windows,
                                r.host.get(), r.end_cycle);
  std::map<std::string, uint64_t> host;  // slice name -> count on the host track
  uint64_t covered = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X" || e["tid"] != kHostTid) continue;
    ++host[e["name"].get<std::string>()];
    covered += e["dur"].get<uint64_t>();
  }
  CHECK(host["RING_HEAD poll"] > 0);
  CHECK(host["ring refill"] > 0);
  CHECK(host["doorbell"] == 1);
  CHECK(covered == r.end_cycle);  // the host track still tiles 1..end
  std::remove(path.c_str());
}
