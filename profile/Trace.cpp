#include "profile/Trace.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>

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
    : emu_(emu),
      temp_(emu.find_signal("thermal.temp_mc")),
      clamped_(emu.find_signal("thermal.clamped")),
      window_(window ? window : 1) {}

void TraceWindows::sample(uint64_t cycle) {
  if (!samples_.empty() && samples_.back().cycle == cycle) return;
  Sample s;
  s.cycle = cycle;
  const int n = emu_.describe().num_counters();
  s.counters.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) s.counters[static_cast<size_t>(i)] = emu_.counter(i);
  if (temp_) s.temp_mc = static_cast<int64_t>(emu_.read_signal(*temp_).low());
  if (clamped_) s.clamped = emu_.read_signal(*clamped_).low() != 0;
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

namespace {

// The CSR's name from the ISA's table ("0x3f" for an address it does not have).
std::string csr_name(uint8_t addr) {
  for (const auto& c : isa::kCsrs)
    if (c.addr == addr) return std::string(c.name);
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", addr);
  return buf;
}

// A slice ("X") on track `tid` covering edge cycles [from, to].
Json slice_event(const std::string& name, const char* cat, int tid, uint64_t from, uint64_t to,
                 Json args) {
  Json e;
  e["name"] = name;
  e["cat"] = cat;
  e["ph"] = "X";
  e["pid"] = kPid;
  e["tid"] = tid;
  e["ts"] = from;
  e["dur"] = to - from + 1;
  e["args"] = std::move(args);
  return e;
}

// A command's interval on its holder's track: [taken + 1, released] (edge numbering: the change
// made at edge t is seen after cycle t); one still held when the run stopped lasts to `end`.
struct Interval {
  uint64_t from = 0, to = 0;
  bool valid = false;
};
Interval held_interval(const CommandCounts& cc, uint64_t end) {
  if (cc.taken == UINT64_MAX) return {};
  const uint64_t to = cc.released != UINT64_MAX ? cc.released : end;
  return {cc.taken + 1, to, to >= cc.taken + 1};
}

// The four token FIFOs: which command flag pushes into each and which pops from it.
struct TokenFifo {
  const char* name;
  Holder producer, consumer;
  bool isa::Command::*push;
  bool isa::Command::*pop;
};
constexpr std::array<TokenFifo, 4> kFifos = {{
    {"L->C", Holder::Load, Holder::Compute, &isa::Command::push_next, &isa::Command::pop_prev},
    {"C->L", Holder::Compute, Holder::Load, &isa::Command::push_prev, &isa::Command::pop_next},
    {"C->S", Holder::Compute, Holder::Store, &isa::Command::push_next, &isa::Command::pop_prev},
    {"S->C", Holder::Store, Holder::Compute, &isa::Command::push_prev, &isa::Command::pop_next},
}};

}  // namespace

Json trace_json(const Attribution& a, const workload::Program& program,
                const emu::DesignInfo& design, const TraceWindows& windows, const HostTrack* host,
                uint64_t end) {
  Json events = Json::array();
  events.push_back(meta("process_name", 0, "npu " + program.workload));
  for (int h = 0; h < kNumHolders; ++h)
    events.push_back(
        meta("thread_name", tid_of(static_cast<Holder>(h)), holder_name(static_cast<Holder>(h))));
  if (host) events.push_back(meta("thread_name", kHostTid, "host"));
  const auto& counts = a.commands();
  auto command_slice = [&](Holder h, uint32_t i, uint64_t from, uint64_t to) {
    const auto& c = program.commands[i];
    const auto layer = program.layer_of_command(i);
    Json args;
    args["opcode"] = isa::opcode_name(static_cast<uint8_t>(c.opcode));
    args["index"] = i;
    args["layer"] = layer ? program.layers[static_cast<size_t>(*layer)].name : std::string();
    args["command"] = c.to_string();
    events.push_back(
        slice_event(isa::opcode_name(static_cast<uint8_t>(c.opcode)) + " #" + std::to_string(i),
                    holder_name(h), tid_of(h), from, to, std::move(args)));
  };
  // Gaps on a track are idle slices, so that every track tiles cycles 1..end.
  auto gap = [&](int tid, const char* cat, const char* name, uint64_t from, uint64_t to) {
    if (from <= to) events.push_back(slice_event(name, cat, tid, from, to, Json::object()));
  };
  // Fetch: each command from the cycle after the previous dispatch to its own dispatch.
  std::vector<std::pair<uint64_t, uint32_t>> by_dispatch;
  for (uint32_t i = 0; i < program.commands.size(); ++i)
    if (counts[i].dispatched != UINT64_MAX && counts[i].dispatched <= end)
      by_dispatch.emplace_back(counts[i].dispatched, i);
  std::sort(by_dispatch.begin(), by_dispatch.end());
  uint64_t fetch_from = 1;
  for (const auto& [cycle, i] : by_dispatch) {
    command_slice(Holder::Fetch, i, fetch_from, cycle);
    fetch_from = cycle + 1;
  }
  gap(tid_of(Holder::Fetch), "fetch", "(no command)", fetch_from, end);
  std::vector<Interval> held(program.commands.size());
  for (int h = 1; h < kNumHolders; ++h) {
    std::vector<std::pair<uint64_t, uint32_t>> taken;
    for (uint32_t i = 0; i < program.commands.size(); ++i) {
      if (holder_of(program.commands[i].opcode) != static_cast<Holder>(h)) continue;
      held[i] = held_interval(counts[i], end);
      if (held[i].valid) taken.emplace_back(held[i].from, i);
    }
    std::sort(taken.begin(), taken.end());
    uint64_t from = 1;
    const char* cat = holder_name(static_cast<Holder>(h));
    for (const auto& [start, i] : taken) {
      gap(tid_of(static_cast<Holder>(h)), cat, "(no command)", from, start - 1);
      command_slice(static_cast<Holder>(h), i, start, held[i].to);
      from = held[i].to + 1;
    }
    gap(tid_of(static_cast<Holder>(h)), cat, "(no command)", from, end);
  }
  // Token flows: the k-th push into a FIFO is the k-th pop from it (FIFOs, engines in order).
  // The arrow starts at the producer's release (it pushes as it completes) and ends in the
  // consumer at the later of its start and that release (it waited for the token or had it).
  uint64_t flow_id = 0;
  for (const auto& fifo : kFifos) {
    std::vector<uint32_t> pushes, pops;
    for (uint32_t i = 0; i < program.commands.size(); ++i) {
      const auto& c = program.commands[i];
      const Holder h = holder_of(c.opcode);
      if (c.opcode == isa::Opcode::Sync || c.opcode == isa::Opcode::End) continue;
      if (h == fifo.producer && c.*fifo.push) pushes.push_back(i);
      if (h == fifo.consumer && c.*fifo.pop) pops.push_back(i);
    }
    for (size_t k = 0; k < std::min(pushes.size(), pops.size()); ++k) {
      const Interval& p = held[pushes[k]];
      const Interval& q = held[pops[k]];
      if (!p.valid || !q.valid || counts[pushes[k]].released == UINT64_MAX) continue;
      const uint64_t at = std::min(std::max(q.from, p.to), q.to);
      ++flow_id;
      Json s;
      s["name"] = std::string("token ") + fifo.name;
      s["cat"] = "token";
      s["ph"] = "s";
      s["id"] = flow_id;
      s["pid"] = kPid;
      s["tid"] = tid_of(fifo.producer);
      s["ts"] = p.to;
      s["args"] = Json{{"from", pushes[k]}, {"to", pops[k]}};
      Json f = s;
      f["ph"] = "f";
      f["bp"] = "e";
      f["tid"] = tid_of(fifo.consumer);
      f["ts"] = at;
      events.push_back(std::move(s));
      events.push_back(std::move(f));
    }
  }
  // The host: its activities, the waits between them, the interrupt and the read-back.
  if (host) {
    uint64_t from = 1;
    bool started = false;
    for (const auto& h : host->events()) {
      if (h.first > end) break;
      gap(kHostTid, "host", started ? "wait (NPU running)" : "(before start)", from, h.first - 1);
      Json args;
      args["accesses"] = h.count;
      args["csr"] = csr_name(h.addr);
      if (h.kind == HostActivity::Refill) args["ring_tail"] = h.value;
      events.push_back(
          slice_event(host_activity_name(h.kind), "host", kHostTid, h.first, h.last, args));
      from = h.last + 1;
      started = started || h.kind == HostActivity::Doorbell;
    }
    gap(kHostTid, "host", "(done)", from, end);
    auto instant = [&](const char* name, uint64_t ts, Json args) {
      Json e;
      e["name"] = name;
      e["cat"] = "host";
      e["ph"] = "i";
      e["s"] = "t";
      e["pid"] = kPid;
      e["tid"] = kHostTid;
      e["ts"] = ts;
      e["args"] = std::move(args);
      events.push_back(std::move(e));
    };
    for (uint64_t t : host->interrupts())
      if (t <= end) instant("interrupt", t, Json::object());
    instant("output read-back", end,
            Json{{"how", "backdoor DRAM read after the run: no NPU cycles"}});
    if (host->dropped() > 0)
      instant("host accesses not recorded", end, Json{{"dropped", host->dropped()}});
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
  // The die temperature and the clamp at each sample (the model's state after the last window
  // before it), when the thermal model ran.
  const bool thermal =
      std::any_of(s.begin(), s.end(), [](const auto& x) { return x.temp_mc != 0; });
  for (size_t w = 0; thermal && w < s.size(); ++w) {
    Json e;
    e["name"] = "die temperature (C)";
    e["ph"] = "C";
    e["pid"] = kPid;
    e["ts"] = s[w].cycle;
    e["args"] = Json{{"temp", static_cast<double>(s[w].temp_mc) / 1e3}};
    events.push_back(e);
    e["name"] = "thermal clamp";
    e["args"] = Json{{"clamped", s[w].clamped ? 1 : 0}};
    events.push_back(e);
  }
  // Trace viewers want each track's events in time order; a stable sort keeps a slice's own
  // order (and metadata first).
  std::stable_sort(events.begin(), events.end(), [](const Json& x, const Json& y) {
    const uint64_t tx = x.contains("ts") ? x["ts"].get<uint64_t>() : 0;
    const uint64_t ty = y.contains("ts") ? y["ts"].get<uint64_t>() : 0;
    return tx < ty;
  });
  Json trace;
  trace["traceEvents"] = events;
  trace["displayTimeUnit"] = "ns";
  trace["otherData"] = Json{{"workload", program.workload},
                            {"time_unit", "1 ts unit = 1 NPU cycle"},
                            {"window_cycles", windows.window()},
                            {"end_cycle", end},
                            {"tokens", flow_id}};
  return trace;
}

Json timeline_summary(const Json& trace) {
  Json out;
  out["end_cycle"] = trace["otherData"].value("end_cycle", uint64_t{0});
  out["tokens"] = trace["otherData"].value("tokens", uint64_t{0});
  std::map<int, Json> tracks;
  Json host = Json::array();
  for (const auto& e : trace["traceEvents"]) {
    const std::string ph = e.value("ph", "");
    const int tid = e.value("tid", 0);
    if (ph == "M" && e.value("name", "") == "thread_name") {
      tracks[tid]["tid"] = tid;
      tracks[tid]["name"] = e["args"]["name"];
      tracks[tid]["slices"] = 0;
      tracks[tid]["busy_cycles"] = 0;
      tracks[tid]["first"] = nullptr;
      tracks[tid]["last"] = nullptr;
      continue;
    }
    if (tid == kHostTid && (ph == "X" || ph == "i")) {
      const std::string name = e["name"];
      const bool wait = name.front() == '(' || name.rfind("wait", 0) == 0;
      if (!wait)
        host.push_back(Json{{"name", name}, {"ts", e["ts"]}, {"dur", e.value("dur", uint64_t{0})}});
    }
    if (ph != "X" || !tracks.count(tid)) continue;
    // Busy: a command's slice, or a host activity (not the gaps between them).
    const bool busy = tid == kHostTid ? e["name"].get<std::string>().front() != '(' &&
                                            e["name"].get<std::string>().rfind("wait", 0) != 0
                                      : e["args"].contains("index");
    if (!busy) continue;
    Json& t = tracks[tid];
    const uint64_t ts = e["ts"], dur = e["dur"];
    t["slices"] = t["slices"].get<uint64_t>() + 1;
    t["busy_cycles"] = t["busy_cycles"].get<uint64_t>() + dur;
    if (t["first"].is_null()) t["first"] = ts;
    t["last"] = ts + dur - 1;
  }
  Json list = Json::array();
  for (auto& [tid, t] : tracks) list.push_back(t);
  out["tracks"] = list;
  out["host"] = host;
  return out;
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
