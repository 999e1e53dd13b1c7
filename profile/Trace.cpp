#include "profile/Trace.h"

#include <algorithm>
#include <fstream>

namespace bud::profile {

namespace {

using json::Json;

constexpr int kPid = 1;

int tid_of(Holder h) { return static_cast<int>(h) + 1; }

Json meta(const char* name, int tid, const std::string& value) {
  Json e;
  e["name"] = name;
  e["ph"] = "M";
  e["pid"] = kPid;
  e["tid"] = tid;
  e["args"] = Json{{"name", value}};
  return e;
}

}  // namespace

TraceWindows::TraceWindows(const emu::Emulator& emu, uint64_t window)
    : emu_(emu), window_(window ? window : 1) {}

void TraceWindows::sample(uint64_t cycle) {
  if (!samples_.empty() && samples_.back().cycle == cycle) return;
  Sample s;
  s.cycle = cycle;
  const int n = emu_.describe().num_counters();
  s.counters.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) s.counters[static_cast<size_t>(i)] = emu_.counter(i);
  samples_.push_back(std::move(s));
  if (samples_.size() < kMaxSamples) return;
  // Coarsen: keep the first sample and those on the doubled window's grid (the counter tracks
  // divide by each sample's span, so rates stay right).
  window_ *= 2;
  size_t kept = 1;
  for (size_t i = 1; i < samples_.size(); ++i)
    if (samples_[i].cycle % window_ == 0) samples_[kept++] = std::move(samples_[i]);
  samples_.resize(kept);
}

Json trace_json(const Attribution& a, const workload::Program& program,
                const emu::DesignInfo& design, const TraceWindows& windows) {
  Json events = Json::array();
  events.push_back(meta("process_name", 0, "npu " + program.workload));
  for (int h = 0; h < kNumHolders; ++h)
    events.push_back(
        meta("thread_name", tid_of(static_cast<Holder>(h)), holder_name(static_cast<Holder>(h))));
  // Slices, per track in time order: a command holds [taken + 1, released] (edge numbering:
  // the change made at edge t is seen after cycle t).
  std::vector<Json> slices;
  uint64_t fetch_from = 0;
  std::vector<std::pair<uint64_t, uint32_t>> by_dispatch;
  for (uint32_t i = 0; i < program.commands.size(); ++i)
    if (a.commands()[i].dispatched != UINT64_MAX)
      by_dispatch.emplace_back(a.commands()[i].dispatched, i);
  std::sort(by_dispatch.begin(), by_dispatch.end());
  auto slice = [&](Holder h, uint32_t i, uint64_t from, uint64_t to) {
    const auto& c = program.commands[i];
    const auto layer = program.layer_of_command(i);
    Json e;
    e["name"] = isa::opcode_name(static_cast<uint8_t>(c.opcode)) + " #" + std::to_string(i);
    e["cat"] = holder_name(h);
    e["ph"] = "X";
    e["pid"] = kPid;
    e["tid"] = tid_of(h);
    e["ts"] = from;
    e["dur"] = to - from + 1;
    Json args;
    args["opcode"] = isa::opcode_name(static_cast<uint8_t>(c.opcode));
    args["index"] = i;
    args["layer"] = layer ? program.layers[static_cast<size_t>(*layer)].name : std::string();
    args["command"] = c.to_string();
    e["args"] = args;
    events.push_back(e);
  };
  for (const auto& [cycle, i] : by_dispatch) {
    slice(Holder::Fetch, i, fetch_from, cycle);
    fetch_from = cycle + 1;
  }
  for (int h = 1; h < kNumHolders; ++h) {
    std::vector<std::pair<uint64_t, uint32_t>> taken;
    for (uint32_t i = 0; i < program.commands.size(); ++i) {
      const auto& cc = a.commands()[i];
      if (holder_of(program.commands[i].opcode) == static_cast<Holder>(h) &&
          cc.taken != UINT64_MAX && cc.released != UINT64_MAX)
        taken.emplace_back(cc.taken, i);
    }
    std::sort(taken.begin(), taken.end());
    for (const auto& [cycle, i] : taken)
      slice(static_cast<Holder>(h), i, cycle + 1, a.commands()[i].released);
  }
  // Counter tracks per window.
  auto index = [&](const std::string& name) { return design.find_counter(name); };
  const auto& s = windows.samples();
  for (size_t w = 1; w < s.size(); ++w) {
    const uint64_t span = s[w].cycle - s[w - 1].cycle;
    if (span == 0) continue;
    auto delta = [&](const std::optional<int>& i) -> double {
      return i ? static_cast<double>(s[w].counters[static_cast<size_t>(*i)] -
                                     s[w - 1].counters[static_cast<size_t>(*i)])
               : 0.0;
    };
    Json stall;
    for (int e = 0; e < isa::kNumEngines; ++e) {
      const std::string eng(isa::kEngineNames[e]);
      stall[eng] = (delta(index(eng + ".stall_mem")) + delta(index(eng + ".stall_dep")) +
                    delta(index(eng + ".stall_out"))) /
                   static_cast<double>(span);
    }
    Json dram;
    dram["read"] = delta(index("dram_rd_bytes")) / static_cast<double>(span);
    dram["write"] = delta(index("dram_wr_bytes")) / static_cast<double>(span);
    Json mac;
    mac["useful"] = delta(index("macs_useful")) / (static_cast<double>(span) * a.array_macs());
    const std::pair<const char*, Json*> tracks[] = {
        {"stall rate", &stall}, {"DRAM bytes/cycle", &dram}, {"MAC utilisation", &mac}};
    for (const auto& [name, args] : tracks) {
      Json e;
      e["name"] = name;
      e["ph"] = "C";
      e["pid"] = kPid;
      e["ts"] = s[w - 1].cycle;
      e["args"] = *args;
      events.push_back(e);
    }
  }
  Json trace;
  trace["traceEvents"] = events;
  trace["displayTimeUnit"] = "ns";
  trace["otherData"] = Json{{"workload", program.workload},
                            {"time_unit", "1 ts unit = 1 NPU cycle"},
                            {"window_cycles", windows.window()}};
  return trace;
}

std::string write_trace(const json::Json& trace, const std::string& path) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return "cannot open " + path + " for writing";
  f << trace.dump(-1, ' ', false, json::Json::error_handler_t::replace) << "\n";
  f.close();
  if (!f) return "cannot write " + path;
  return {};
}

}  // namespace bud::profile
