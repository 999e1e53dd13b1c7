#include "replay/ShardResults.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "replay/PacketRun.h"

namespace bud::replay {

using json::Json;

namespace {

Json symptom_json(const std::optional<pb::Symptom>& s) {
  if (!s) return nullptr;
  Json j = Json::object();
  j["kind"] = symptom_kind_name(s->kind());
  j["cycle"] = s->cycle();
  j["message"] = s->message();
  return j;
}

// Reads fields of one JSON object, remembering the first field at fault.
class Fields {
 public:
  Fields(const Json& j, std::string where, std::string& error)
      : j_(j), where_(std::move(where)), error_(error) {
    if (!j_.is_object()) bad("", "an object");
  }
  bool ok() const { return error_.empty(); }
  const Json* get(const char* key, bool required = true) {
    if (!ok()) return nullptr;
    auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) {
      if (required) bad(key, "present");
      return nullptr;
    }
    return &*it;
  }
  uint64_t u64(const char* key) {
    const Json* v = get(key);
    if (v && !v->is_number_unsigned()) bad(key, "a non-negative integer");
    return ok() && v ? v->get<uint64_t>() : 0;
  }
  std::string str(const char* key, bool required = true) {
    const Json* v = get(key, required);
    if (v && !v->is_string()) bad(key, "a string");
    return ok() && v ? v->get<std::string>() : std::string();
  }
  double num(const char* key) {
    const Json* v = get(key, false);
    if (v && !v->is_number()) bad(key, "a number");
    return ok() && v ? v->get<double>() : 0.0;
  }
  void bad(const std::string& key, const char* what) {
    // Top-level fields follow "FILE: "; nested ones their object's path and a dot.
    const bool top = where_.size() >= 2 && where_.compare(where_.size() - 2, 2, ": ") == 0;
    if (ok()) error_ = where_ + (key.empty() || top ? "" : ".") + key + " must be " + what;
  }

 private:
  const Json& j_;
  std::string where_;
  std::string& error_;
};

std::optional<pb::Symptom> symptom_from(const Json* j, const std::string& where,
                                        std::string& error) {
  if (!j) return std::nullopt;
  Fields f(*j, where, error);
  pb::Symptom s;
  const std::string kind = f.str("kind");
  for (int k = pb::Symptom::Kind_MIN; k <= pb::Symptom::Kind_MAX; ++k)
    if (kind == symptom_kind_name(k)) s.set_kind(static_cast<pb::Symptom::Kind>(k));
  s.set_cycle(f.u64("cycle"));
  s.set_message(f.str("message"));
  if (!f.ok()) return std::nullopt;
  return s;
}

// One outcome_json() object (`where` names it in errors): nullopt and `error` if malformed.
std::optional<ReplayOutcome> outcome_from(const Json& j, const std::string& where,
                                          std::string& error) {
  Fields pf(j, where, error);
  ReplayOutcome o;
  o.packet = pf.str("packet");
  const std::string verdict = pf.str("verdict");
  bool known = false;
  for (int v = 0; v < kNumVerdicts; ++v)
    if (verdict == verdict_name(static_cast<Verdict>(v)))
      o.verdict = static_cast<Verdict>(v), known = true;
  if (pf.ok() && !known) pf.bad("verdict", "a verdict name");
  o.message = pf.str("message");
  if (const Json* notes = pf.get("notes", false); notes && notes->is_array())
    for (const auto& n : *notes)
      if (n.is_string()) o.notes.push_back(n.get<std::string>());
  o.recorded_revision = pf.str("recorded_revision", false);
  o.start_cycle = pf.u64("start_cycle");
  o.end_cycle = pf.u64("end_cycle");
  o.digests_checked = pf.u64("digests_checked");
  o.windows_checked = pf.u64("windows_checked");
  if (const Json* d = pf.get("divergence", false)) {
    Fields df(*d, where + ".divergence", error);
    Divergence div;
    div.window = static_cast<uint32_t>(df.u64("window"));
    div.window_start = df.u64("window_start");
    div.window_end = df.u64("window_end");
    div.cycle = df.u64("cycle");
    // The digests at `cycle` (absent in results written before window shards: 0).
    if (df.get("expected", false)) div.expected = df.u64("expected");
    if (df.get("actual", false)) div.actual = df.u64("actual");
    if (const Json* st = df.get("stages", false); st && st->is_array())
      for (const auto& x : *st)
        if (x.is_string()) div.stages.push_back(x.get<std::string>());
    o.divergence = div;
  }
  o.recorded_symptom =
      symptom_from(pf.get("recorded_symptom", false), where + ".recorded_symptom", error);
  o.replay_symptom =
      symptom_from(pf.get("replay_symptom", false), where + ".replay_symptom", error);
  // Absent in results written before the evidence report: empty lists.
  if (const Json* ev = pf.get("evidence", false)) {
    Fields ef(*ev, where + ".evidence", error);
    auto names = [&](const char* key, std::vector<std::string>& out) {
      const Json* v = ef.get(key, false);
      if (!v) return;
      for (size_t k = 0; v->is_array() && k < v->size(); ++k)
        if ((*v)[k].is_string()) out.push_back((*v)[k].get<std::string>());
      if (out.size() != (v->is_array() ? v->size() : size_t{1})) ef.bad(key, "an array of names");
    };
    names("triggers_armed", o.evidence.triggers_armed);
    names("triggers_hit", o.evidence.triggers_hit);
    names("counters", o.evidence.counters);
    names("counters_observed", o.evidence.counters_observed);
  }
  if (!pf.ok()) return std::nullopt;
  return o;
}

}  // namespace

Json outcome_json(const ReplayOutcome& o) {
  Json j = Json::object();
  j["packet"] = o.packet;
  j["verdict"] = verdict_name(o.verdict);
  j["exit_code"] = o.exit_code();
  j["message"] = o.message;
  Json notes = Json::array();
  for (const auto& n : o.notes) notes.push_back(n);
  j["notes"] = std::move(notes);
  j["recorded_revision"] = o.recorded_revision;
  j["start_cycle"] = o.start_cycle;
  j["end_cycle"] = o.end_cycle;
  j["digests_checked"] = o.digests_checked;
  j["windows_checked"] = o.windows_checked;
  if (o.divergence) {
    Json d = Json::object();
    d["window"] = o.divergence->window;
    d["window_start"] = o.divergence->window_start;
    d["window_end"] = o.divergence->window_end;
    d["cycle"] = o.divergence->cycle;
    d["expected"] = o.divergence->expected;
    d["actual"] = o.divergence->actual;
    Json st = Json::array();
    for (const auto& s : o.divergence->stages) st.push_back(s);
    d["stages"] = std::move(st);
    j["divergence"] = std::move(d);
  } else {
    j["divergence"] = nullptr;
  }
  j["recorded_symptom"] = symptom_json(o.recorded_symptom);
  j["replay_symptom"] = symptom_json(o.replay_symptom);
  j["evidence"] = {{"triggers_armed", o.evidence.triggers_armed},
                   {"triggers_hit", o.evidence.triggers_hit},
                   {"counters", o.evidence.counters},
                   {"counters_observed", o.evidence.counters_observed}};
  return j;
}

Json ShardResults::to_json() const {
  Json j = Json::object();
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["shard"] = {{"index", shard.index}, {"total", shard.total}};
  j["source"] = source;
  j["revision"] = revision;
  j["total_packets"] = result.total_packets;
  j["exit_code"] = result.exit_code();
  Json packets = Json::array();
  for (size_t i = 0; i < result.outcomes.size(); ++i) {
    Json p = outcome_json(result.outcomes[i]);
    p["corpus_index"] = i < result.corpus_index.size() ? result.corpus_index[i] : 0;
    p["seconds"] = i < result.seconds.size() ? result.seconds[i] : 0.0;
    packets.push_back(std::move(p));
  }
  j["packets"] = std::move(packets);
  if (window_shard) {
    Json results = Json::array();
    for (const auto& w : window_shard->results)
      results.push_back({{"index", w.index},
                         {"digests", w.digests},
                         {"windows", w.windows},
                         {"tail", w.tail},
                         {"whole", w.whole},
                         {"outcome", w.outcome ? outcome_json(*w.outcome) : Json()}});
    j["windows"] = {{"packet", window_shard->packet},
                    {"total", window_shard->windows},
                    {"seconds", window_shard->seconds},
                    {"results", std::move(results)}};
  }
  return j;
}

std::optional<ShardResults> ShardResults::parse(const std::string& text, const std::string& file,
                                                std::string& error) {
  error.clear();
  Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded()) {
    error = file + ": not JSON (a shard's results file is written by bud replay --results)";
    return std::nullopt;
  }
  Fields f(j, file + ": ", error);
  if (f.ok() && f.str("format") != kFormat) f.bad("format", "\"bud-corpus-shard\"");
  if (f.ok() && f.u64("version") != static_cast<uint64_t>(kVersion))
    f.bad("version", "1 (written by another bud)");
  ShardResults r;
  if (const Json* s = f.get("shard")) {
    Fields sf(*s, file + ": shard", error);
    r.shard.index = static_cast<uint32_t>(sf.u64("index"));
    r.shard.total = static_cast<uint32_t>(sf.u64("total"));
    if (sf.ok() && (r.shard.total == 0 || r.shard.index >= r.shard.total))
      sf.bad("index", "below shard.total");
  }
  r.source = f.str("source", false);
  r.revision = f.str("revision", false);
  r.result.total_packets = f.u64("total_packets");
  const Json* packets = f.get("packets");
  if (packets && !packets->is_array()) f.bad("packets", "an array");
  if (!f.ok()) return std::nullopt;
  for (size_t i = 0; i < packets->size() && error.empty(); ++i) {
    const std::string where = file + ": packets[" + std::to_string(i) + "]";
    auto parsed = outcome_from((*packets)[i], where, error);
    if (!parsed) break;
    ReplayOutcome o = std::move(*parsed);
    Fields pf((*packets)[i], where, error);
    const uint64_t index = pf.u64("corpus_index");
    const double seconds = pf.num("seconds");
    if (pf.ok() && index >= r.result.total_packets) pf.bad("corpus_index", "below total_packets");
    if (!pf.ok()) break;
    r.result.outcomes.push_back(std::move(o));
    r.result.corpus_index.push_back(index);
    r.result.seconds.push_back(seconds);
  }
  if (const Json* w = f.get("windows", false); w && error.empty()) {
    const std::string where = file + ": windows";
    Fields wf(*w, where, error);
    WindowShardResult ws;
    ws.packet = wf.str("packet");
    ws.windows = static_cast<uint32_t>(wf.u64("total"));
    ws.seconds = wf.num("seconds");
    const Json* results = wf.get("results");
    if (results && !results->is_array()) wf.bad("results", "an array");
    for (size_t i = 0; wf.ok() && i < results->size(); ++i) {
      const std::string at = where + ".results[" + std::to_string(i) + "]";
      Fields rf((*results)[i], at, error);
      WindowResult x;
      x.index = static_cast<uint32_t>(rf.u64("index"));
      x.digests = rf.u64("digests");
      x.windows = rf.u64("windows");
      const Json* tail = rf.get("tail");
      const Json* whole = rf.get("whole");
      if (tail && !tail->is_boolean()) rf.bad("tail", "true or false");
      if (whole && !whole->is_boolean()) rf.bad("whole", "true or false");
      if (!rf.ok()) break;
      x.tail = tail->get<bool>();
      x.whole = whole->get<bool>();
      if (const Json* o = rf.get("outcome", false)) {
        auto parsed = outcome_from(*o, at + ".outcome", error);
        if (!parsed) break;
        x.outcome = std::move(*parsed);
      }
      ws.results.push_back(std::move(x));
    }
    r.window_shard = std::move(ws);
  }
  if (!error.empty()) return std::nullopt;
  return r;
}

std::string write_file_atomically(const std::string& path, const std::string& text) {
  // A path that is not a regular file (/dev/null, /dev/stdout, a FIFO) is written in place: a
  // rename would replace the device or pipe with a regular file.
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(st)) {
    if (std::filesystem::is_directory(st)) return path + ": cannot write (a directory)";
    if (!std::filesystem::is_regular_file(st)) {
      std::ofstream out(path, std::ios::binary);
      out << text;
      out.close();
      return out ? std::string{} : path + ": cannot write";
    }
  }
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      return path + ": cannot write";
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return path + ": cannot write (rename failed)";
  }
  return {};
}

}  // namespace bud::replay
