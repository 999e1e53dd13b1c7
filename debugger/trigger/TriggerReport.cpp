#include "debugger/trigger/TriggerReport.h"

#include <sstream>

namespace bud::debugger {

using json::Json;

std::string describe_hit(const TriggerHit& h) {
  std::string s = "cycle " + std::to_string(h.cycle) + ": " + h.trigger + " hit " +
                  std::to_string(h.number) + " (" + h.state_path + ") " + h.condition;
  std::string acts;
  for (const auto& a : h.actions) acts += (acts.empty() ? "" : ", ") + a;
  if (!acts.empty()) s += " -> " + acts;
  return s;
}

std::string trigger_report_text(TriggerEngine& engine) {
  std::ostringstream o;
  const auto status = engine.status();
  o << "\ntriggers   " << status.size() << " armed, " << engine.hits().size() << " hits";
  if (engine.dropped_hits()) o << " (+" << engine.dropped_hits() << " not kept)";
  o << "\n";
  for (const auto& h : engine.hits()) {
    o << "  " << describe_hit(h) << "\n";
    if (!h.values.empty()) {
      o << "      at hit:";
      for (const auto& [n, v] : h.values) o << " " << n << "=" << v;
      o << "\n";
    }
    if (!h.counters.empty()) {
      o << "      counters:";
      for (const auto& [n, v] : h.counters)
        if (v) o << " " << n << "=" << v;
      o << "\n";
    }
    for (const auto& m : h.messages) o << "      log: " << m << "\n";
    for (const auto& c : h.captures) {
      if (!c.error.empty()) {
        o << "      capture failed: " << c.error << "\n";
        continue;
      }
      if (!c.written) {
        o << "      capture of cycles " << c.requested_from << ".." << c.requested_to
          << " pending\n";
        continue;
      }
      o << "      captured cycles " << c.from << ".." << c.to << " -> " << c.fst << ", " << c.log;
      if (c.truncated)
        o << " (truncated; requested " << c.requested_from << ".." << c.requested_to << ")";
      o << "\n";
    }
    if (!h.checkpoint.empty()) o << "      checkpoint: " << h.checkpoint << "\n";
    if (!h.record.empty()) o << "      replay packet: " << h.record << "\n";
  }
  o << "coverage\n";
  for (const auto& s : status) {
    o << "  " << s.name << ": " << (s.hits ? "FIRED " : "not fired ") << s.hits << "x in "
      << s.armed_cycles << " armed cycles";
    if (s.exhausted) o << ", shots used up";
    if (!s.enabled) o << ", disabled";
    o << "\n";
    for (const auto& c : s.conditions) {
      o << "    " << (c.true_cycles ? "held " : "never ") << c.text;
      if (c.true_cycles)
        o << "  (" << c.true_cycles << " cycles, first at " << *c.first_true << ")";
      o << "\n";
    }
    if (s.machine) {
      o << "    states entered:";
      for (const auto& [n, k] : s.states_entered) o << " " << n << "=" << k;
      o << "\n";
    }
  }
  if (engine.history_interval())
    o << "history    " << engine.history_snapshots() << " snapshots every "
      << engine.history_interval() << " cycles, " << engine.history_bytes() << " bytes; "
      << engine.resimulated_cycles() << " cycles re-executed (captures, returns to hits)\n";
  return o.str();
}

Json hit_json(const TriggerHit& h) {
  Json j = Json::object();
  j["cycle"] = h.cycle;
  j["trigger"] = h.trigger;
  j["id"] = h.trigger_id;
  j["hit"] = h.number;
  j["state_path"] = h.state_path;
  j["condition"] = h.condition;
  Json acts = Json::array();
  for (const auto& a : h.actions) acts.push_back(a);
  j["actions"] = acts;
  Json vals = Json::object();
  for (const auto& [n, v] : h.values) vals[n] = v;
  j["values"] = vals;
  if (!h.counters.empty()) {
    Json c = Json::object();
    for (const auto& [n, v] : h.counters) c[n] = v;
    j["counters"] = c;
  }
  Json msgs = Json::array();
  for (const auto& m : h.messages) msgs.push_back(m);
  j["messages"] = msgs;
  Json caps = Json::array();
  for (const auto& c : h.captures) {
    Json x = Json::object();
    x["fst"] = c.fst;
    x["log"] = c.log;
    x["from"] = c.from;
    x["to"] = c.to;
    x["requested_from"] = c.requested_from;
    x["requested_to"] = c.requested_to;
    x["written"] = c.written;
    x["truncated"] = c.truncated;
    x["resimulated"] = c.resimulated;
    if (!c.error.empty()) x["error"] = c.error;
    caps.push_back(x);
  }
  j["captures"] = caps;
  if (!h.checkpoint.empty()) j["checkpoint"] = h.checkpoint;
  if (!h.record.empty()) j["record"] = h.record;
  j["halted"] = h.halted;
  return j;
}

Json trigger_report_json(TriggerEngine& engine) {
  Json j = Json::object();
  Json hits = Json::array();
  for (const auto& h : engine.hits()) hits.push_back(hit_json(h));
  j["hits"] = hits;
  j["dropped_hits"] = engine.dropped_hits();
  Json cov = Json::array();
  for (const auto& s : engine.status()) {
    Json t = Json::object();
    t["id"] = s.id;
    t["name"] = s.name;
    t["file"] = s.file;
    t["kind"] = s.machine ? "state_machine" : "simple";
    t["enabled"] = s.enabled;
    t["fired"] = s.hits > 0;
    t["hits"] = s.hits;
    t["armed_cycles"] = s.armed_cycles;
    t["exhausted"] = s.exhausted;
    if (s.shots) t["shots"] = *s.shots;
    t["state"] = s.state;
    Json conds = Json::array();
    for (const auto& c : s.conditions) {
      Json x = Json::object();
      x["condition"] = c.text;
      x["where"] = c.loc.to_string();
      x["held"] = c.true_cycles > 0;
      x["true_cycles"] = c.true_cycles;
      if (c.first_true) x["first_true"] = *c.first_true;
      conds.push_back(x);
    }
    t["conditions"] = conds;
    if (s.machine) {
      Json st = Json::object();
      for (const auto& [n, k] : s.states_entered) st[n] = k;
      t["states_entered"] = st;
    }
    cov.push_back(t);
  }
  j["coverage"] = cov;
  Json hist = Json::object();
  hist["interval"] = engine.history_interval();
  hist["snapshots"] = static_cast<uint64_t>(engine.history_snapshots());
  hist["bytes"] = static_cast<uint64_t>(engine.history_bytes());
  hist["resimulated_cycles"] = engine.resimulated_cycles();
  j["history"] = hist;
  return j;
}

}  // namespace bud::debugger
