#include "replay/ShardResults.h"

#include <unistd.h>

#include <cstdio>
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
    Json st = Json::array();
    for (const auto& s : o.divergence->stages) st.push_back(s);
    d["stages"] = std::move(st);
    j["divergence"] = std::move(d);
  } else {
    j["divergence"] = nullptr;
  }
  j["recorded_symptom"] = symptom_json(o.recorded_symptom);
  j["replay_symptom"] = symptom_json(o.replay_symptom);
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
    Fields pf((*packets)[i], where, error);
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
      if (const Json* st = df.get("stages", false); st && st->is_array())
        for (const auto& x : *st)
          if (x.is_string()) div.stages.push_back(x.get<std::string>());
      o.divergence = div;
    }
    o.recorded_symptom =
        symptom_from(pf.get("recorded_symptom", false), where + ".recorded_symptom", error);
    o.replay_symptom =
        symptom_from(pf.get("replay_symptom", false), where + ".replay_symptom", error);
    const uint64_t index = pf.u64("corpus_index");
    const double seconds = pf.num("seconds");
    if (pf.ok() && index >= r.result.total_packets) pf.bad("corpus_index", "below total_packets");
    if (!pf.ok()) break;
    r.result.outcomes.push_back(std::move(o));
    r.result.corpus_index.push_back(index);
    r.result.seconds.push_back(seconds);
  }
  if (!error.empty()) return std::nullopt;
  return r;
}

std::string write_file_atomically(const std::string& path, const std::string& text) {
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
