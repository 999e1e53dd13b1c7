#include "design/HandshakeReport.h"

#include <cstdio>
#include <vector>

namespace bud::design {

using json::Json;
using Handshake = HandshakeProfile::Handshake;

const char* reading_name(Reading r) {
  switch (r) {
    case Reading::Flowing:
      return "flowing";
    case Reading::BackPressured:
      return "backpressured";
    case Reading::Starved:
      return "starved";
    case Reading::Idle:
      return "idle";
  }
  return "?";
}

const char* bottleneck_name(BottleneckKind k) {
  switch (k) {
    case BottleneckKind::Downstream:
      return "downstream";
    case BottleneckKind::Upstream:
      return "upstream";
    case BottleneckKind::None:
      return "none";
    case BottleneckKind::Idle:
      return "idle";
    case BottleneckKind::Waiting:
      return "waiting";
  }
  return "?";
}

Reading reading(const HandshakeProfile& p, const Handshake& h) {
  const auto& n = p.reading_counts(h);
  const uint64_t busy = n[static_cast<size_t>(HandshakeState::Busy)];
  const uint64_t starved = n[static_cast<size_t>(HandshakeState::Starved)];
  const uint64_t bp = n[static_cast<size_t>(HandshakeState::BackPressured)];
  const uint64_t engaged = busy + starved + bp;
  if (engaged == 0) return Reading::Idle;
  if (10 * (starved + bp) < engaged) return Reading::Flowing;
  return bp >= starved ? Reading::BackPressured : Reading::Starved;
}

std::string party_name(Party party, const std::string& port) {
  switch (party) {
    case Party::Source:
      return "source '" + port + "'";
    case Party::Sink:
      return "sink '" + port + "'";
    case Party::Memory:
      return "memory port '" + port + "'";
    case Party::Firmware:
      return "the firmware";
    case Party::Design:
      return "the design";
  }
  return "?";
}

namespace {

double pct(uint64_t n, uint64_t of) { return of ? 100.0 * double(n) / double(of) : 0.0; }

std::string fmt_pct(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", v);
  return buf;
}

// `h`'s cycles in state `s` over the reading cycles.
uint64_t read(const HandshakeProfile& p, const Handshake& h, HandshakeState s) {
  return p.reading_counts(h)[static_cast<size_t>(s)];
}

// Reading cycles on which either side of `h` was engaged (valid or ready).
uint64_t engaged(const HandshakeProfile& p, const Handshake& h) {
  return read(p, h, HandshakeState::Busy) + read(p, h, HandshakeState::Starved) +
         read(p, h, HandshakeState::BackPressured);
}

// The reading of the stages alone (find_bottleneck without the run's ending).
Bottleneck pipeline_bottleneck(const HandshakeProfile& p) {
  const auto& hs = p.handshakes();
  std::vector<size_t> pipe;  // the stages in pipeline order, else every handshake
  for (size_t i = 0; i < hs.size(); ++i)
    if (hs[i].stage) pipe.push_back(i);
  if (pipe.empty())
    for (size_t i = 0; i < hs.size(); ++i) pipe.push_back(i);
  Bottleneck b;
  const uint64_t tail = p.cycles() - p.active_cycles();
  bool stalled = false;  // a handshake back-pressured after the last transfer
  for (const Handshake& h : hs) {
    const auto bp = static_cast<size_t>(HandshakeState::BackPressured);
    stalled |= h.cycles[bp] > h.active[bp];
  }
  b.waiting_cycles = tail > p.quiet_cycles() && !stalled ? tail - p.quiet_cycles() : 0;
  b.mostly_waiting = p.cycles() > 0 && 2 * b.waiting_cycles >= p.cycles();
  std::string idle_note;
  if (b.mostly_waiting)
    idle_note = "Nothing moved on any handshake for the last " + std::to_string(tail) +
                " cycles (" + fmt_pct(pct(tail, p.cycles())) +
                " of the run): it ended waiting on something no handshake shows (an interrupt, "
                "the firmware, a timer). Before that: ";
  // What a handshake's neighbour in the design is called, for a plain stage's producer/consumer.
  auto inside = [&](size_t at, bool consumer) {
    const std::string& name = hs[pipe[at]].name;
    if (consumer)
      return at + 1 < pipe.size()
                 ? "the design between '" + name + "' and '" + hs[pipe[at + 1]].name + "'"
                 : "the design past '" + name + "'";
    return at > 0 ? "the design between '" + hs[pipe[at - 1]].name + "' and '" + name + "'"
                  : "the design before '" + name + "'";
  };
  auto share = [&](const Handshake& h, HandshakeState s) {
    return fmt_pct(pct(read(p, h, s), engaged(p, h))) + " of the cycles it was engaged";
  };
  for (size_t at = 0; at < pipe.size(); ++at) {
    if (reading(p, hs[pipe[at]]) != Reading::BackPressured) continue;
    size_t last = at;
    while (last + 1 < pipe.size() && reading(p, hs[pipe[last + 1]]) == Reading::BackPressured)
      ++last;
    const Handshake& l = hs[pipe[last]];
    b.kind = BottleneckKind::Downstream;
    b.first = pipe[at];
    b.last = pipe[last];
    b.limiter = l.consumer == Party::Design ? inside(last, true) : party_name(l.consumer, l.port);
    b.message = idle_note + "'" + l.name + "' is back-pressured on " +
                share(l, HandshakeState::BackPressured) +
                (last > at ? ", as is every stage from '" + hs[pipe[at]].name + "'" : "") + ": " +
                b.limiter + " limits throughput (downstream of '" + l.name + "').";
    return b;
  }
  // A starved stage fed by the design may only mean the design is busy elsewhere (waiting for
  // its own answers); one fed by a source, the memory or the firmware waits on that party.
  std::optional<size_t> starved;
  for (size_t at = 0; at < pipe.size() && !starved; ++at)
    if (reading(p, hs[pipe[at]]) == Reading::Starved && hs[pipe[at]].producer != Party::Design)
      starved = at;
  for (size_t at = 0; at < pipe.size() && !starved; ++at)
    if (reading(p, hs[pipe[at]]) == Reading::Starved) starved = at;
  if (starved) {
    const size_t at = *starved;
    const Handshake& f = hs[pipe[at]];
    b.kind = BottleneckKind::Upstream;
    b.first = b.last = pipe[at];
    b.limiter = f.producer == Party::Design ? inside(at, false) : party_name(f.producer, f.port);
    b.message = idle_note + "'" + f.name + "' is starved on " + share(f, HandshakeState::Starved) +
                " and no stage stalls mostly on back-pressure: " + b.limiter +
                " limits throughput (upstream of '" + f.name + "').";
    return b;
  }
  bool any = false;
  for (size_t i : pipe) any |= reading(p, hs[i]) != Reading::Idle;
  b.kind = any ? BottleneckKind::None : BottleneckKind::Idle;
  b.message = idle_note + (any ? "Every engaged stage transfers on most of the cycles it is "
                                 "engaged: no handshake limits throughput."
                               : "No stage was ever engaged (valid or ready).");
  return b;
}

}  // namespace

Bottleneck find_bottleneck(const HandshakeProfile& p) {
  Bottleneck b = pipeline_bottleneck(p);
  if (b.mostly_waiting) b.kind = BottleneckKind::Waiting;
  return b;
}

std::string handshake_text(const HandshakeProfile& p, const Bottleneck& b) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "%-16s %-8s %8s %9s %9s %8s %10s  %s\n", "handshake", "kind",
                "busy", "starved", "backpres", "idle", "transfers", "reading");
  out += line;
  const uint64_t n = p.cycles();
  for (const Handshake& h : p.handshakes()) {
    std::snprintf(line, sizeof line, "%-16s %-8s %8s %9s %9s %8s %10llu  %s\n", h.name.c_str(),
                  kind_name(h.kind), fmt_pct(pct(h.count(HandshakeState::Busy), n)).c_str(),
                  fmt_pct(pct(h.count(HandshakeState::Starved), n)).c_str(),
                  fmt_pct(pct(h.count(HandshakeState::BackPressured), n)).c_str(),
                  fmt_pct(pct(h.count(HandshakeState::Idle), n)).c_str(),
                  static_cast<unsigned long long>(h.count(HandshakeState::Busy)),
                  reading_name(reading(p, h)));
    out += line;
  }
  std::snprintf(
      line, sizeof line, "%-16s %s\n", "all idle",
      (fmt_pct(pct(p.all_idle_cycles(), n)) + " of " + std::to_string(n) + " cycles").c_str());
  out += line;
  const uint64_t tail = n - p.active_cycles();
  std::snprintf(line, sizeof line, "%-16s last transfer at cycle %llu; %s\n", "readings",
                static_cast<unsigned long long>(p.active_cycles()),
                p.quiet_end() ? ("over the cycles up to it (the " + std::to_string(tail) +
                                 " quiet cycles that end the run left out)")
                                    .c_str()
                              : ("over the whole run (the " + std::to_string(tail) +
                                 " cycles after it are more than the run's quiet end)")
                                    .c_str());
  out += line;
  if (!p.counter_names().empty()) {
    std::snprintf(line, sizeof line, "\n%-20s %14s   (every %llu cycles in --json)\n", "counter",
                  "total", static_cast<unsigned long long>(p.interval()));
    out += line;
    for (size_t c = 0; c < p.counter_names().size(); ++c) {
      std::snprintf(line, sizeof line, "%-20s %14llu\n", p.counter_names()[c].c_str(),
                    static_cast<unsigned long long>(p.total(c)));
      out += line;
    }
  }
  out += "\nbottleneck " + std::string(bottleneck_name(b.kind)) + ": " + b.message + "\n";
  return out;
}

Json handshake_json(const HandshakeProfile& p, const Bottleneck& b) {
  Json j = Json::object();
  const uint64_t n = p.cycles();
  j["cycles"] = n;
  j["all_idle_cycles"] = p.all_idle_cycles();
  j["active_cycles"] = p.active_cycles();
  j["quiet_cycles"] = p.quiet_cycles();
  j["reading_cycles"] = p.reading_cycles();
  Json hs = Json::array();
  for (const Handshake& h : p.handshakes()) {
    Json x = Json::object();
    x["name"] = h.name;
    x["kind"] = kind_name(h.kind);
    x["stage"] = h.stage ? Json(*h.stage) : Json(nullptr);
    x["producer"] = party_name(h.producer, h.port);
    x["consumer"] = party_name(h.consumer, h.port);
    x["valid"] = h.valid_signal;
    x["ready"] = h.ready_signal.empty() ? Json(nullptr) : Json(h.ready_signal);
    Json cycles = Json::object(), percent = Json::object(), act = Json::object();
    for (size_t s = 0; s < kHandshakeStates; ++s) {
      const auto st = static_cast<HandshakeState>(s);
      cycles[state_name(st)] = h.count(st);
      percent[state_name(st)] = pct(h.count(st), n);
      act[state_name(st)] = h.active[s];
    }
    x["cycles"] = cycles;
    x["percent"] = percent;
    x["active"] = act;
    x["transfers"] = h.count(HandshakeState::Busy);
    x["reading"] = reading_name(reading(p, h));
    x["spans"] = h.spans.size();
    x["spans_truncated_at"] = h.truncated_at ? Json(*h.truncated_at) : Json(nullptr);
    hs.push_back(x);
  }
  j["handshakes"] = hs;
  // Sample i is at the end of cycle (i + 1) * interval; the totals close the series when the run
  // did not end on a sample.
  Json counters = Json::object();
  counters["interval"] = p.interval();
  counters["requested_interval"] = p.requested_interval();
  Json at = Json::array();
  for (size_t i = 0; i < p.samples(); ++i) at.push_back((i + 1) * p.interval());
  const bool tail = p.samples() * p.interval() < n;
  if (tail) at.push_back(n);
  counters["cycles"] = at;
  Json series = Json::array();
  for (size_t c = 0; c < p.counter_names().size(); ++c) {
    Json values = Json::array();
    for (size_t i = 0; i < p.samples(); ++i) values.push_back(p.sample(i, c));
    if (tail) values.push_back(p.total(c));
    series.push_back(
        Json{{"name", p.counter_names()[c]}, {"total", p.total(c)}, {"values", values}});
  }
  counters["series"] = series;
  j["counters"] = counters;
  Json bj = Json::object();
  const auto& h = p.handshakes();
  bj["kind"] = bottleneck_name(b.kind);
  bj["first"] = b.first ? Json(h[*b.first].name) : Json(nullptr);
  bj["last"] = b.last ? Json(h[*b.last].name) : Json(nullptr);
  bj["limiter"] = b.limiter.empty() ? Json(nullptr) : Json(b.limiter);
  bj["waiting_cycles"] = b.waiting_cycles;
  bj["mostly_waiting"] = b.mostly_waiting;
  bj["message"] = b.message;
  j["bottleneck"] = bj;
  return j;
}

Json handshake_trace(const HandshakeProfile& p, const std::string& design) {
  Json events = Json::array();
  auto meta = [](const char* name, int tid, Json args) {
    Json e{{"name", name}, {"ph", "M"}, {"pid", 1}, {"tid", tid}};
    e["args"] = std::move(args);
    return e;
  };
  events.push_back(meta("process_name", 0, Json{{"name", "design " + design}}));
  const auto& hs = p.handshakes();
  for (size_t i = 0; i < hs.size(); ++i) {
    const int tid = static_cast<int>(i) + 1;
    events.push_back(meta("thread_name", tid, Json{{"name", hs[i].name}}));
    events.push_back(meta("thread_sort_index", tid, Json{{"sort_index", tid}}));
  }
  for (size_t i = 0; i < hs.size(); ++i) {
    const Handshake& h = hs[i];
    const int tid = static_cast<int>(i) + 1;
    const uint64_t end = h.truncated_at.value_or(p.cycles());
    for (size_t s = 0; s < h.spans.size(); ++s) {
      const uint64_t from = h.spans[s].start();
      const uint64_t to = s + 1 < h.spans.size() ? h.spans[s + 1].start() : end;
      events.push_back(Json{{"name", state_name(h.spans[s].state())},
                            {"cat", "handshake"},
                            {"ph", "X"},
                            {"ts", from},
                            {"dur", to - from},
                            {"pid", 1},
                            {"tid", tid}});
    }
    if (h.truncated_at)
      events.push_back(Json{{"name", "spans truncated (trace budget)"},
                            {"cat", "handshake"},
                            {"ph", "i"},
                            {"s", "t"},
                            {"ts", *h.truncated_at},
                            {"pid", 1},
                            {"tid", tid}});
  }
  const bool tail = p.samples() * p.interval() < p.cycles();
  for (size_t c = 0; c < p.counter_names().size(); ++c) {
    auto counter = [&](uint64_t ts, uint64_t v) {
      events.push_back(Json{{"name", p.counter_names()[c]},
                            {"cat", "counter"},
                            {"ph", "C"},
                            {"ts", ts},
                            {"pid", 1},
                            {"args", Json{{"value", v}}}});
    };
    for (size_t i = 0; i < p.samples(); ++i) counter((i + 1) * p.interval(), p.sample(i, c));
    if (tail) counter(p.cycles(), p.total(c));
  }
  Json trace = Json::object();
  trace["traceEvents"] = events;
  trace["displayTimeUnit"] = "ns";
  trace["otherData"] = Json{{"design", design},
                            {"clock", "1 cycle = 1 us of trace time"},
                            {"max_spans", p.max_spans()},
                            {"truncated", p.truncated()}};
  return trace;
}

}  // namespace bud::design
