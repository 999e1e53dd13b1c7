// Counter-based trace triggers at the prompt: trigger add | list | delete | enable | disable |
// load | hits. The session's TriggerEngine (Session::triggers()) does the work; the CLI attaches
// one to every `bud debug` session.
#include <cctype>

#include "debugger/commands/Format.h"
#include "debugger/commands/Interpreter.h"
#include "debugger/trigger/TriggerReport.h"

namespace bud::debugger {

namespace {

std::string errors_text(const TriggerParse& p) {
  std::string s;
  for (size_t i = 0; i < p.errors.size(); ++i) s += (i ? "; " : "") + p.errors[i].to_string();
  return s;
}

void added(TriggerEngine& engine, const std::vector<int>& ids, CommandResult& r) {
  json::Json arr = json::Json::array();
  for (const auto& s : engine.status())
    for (int id : ids)
      if (s.id == id) {
        r.say("trigger " + std::to_string(id) + ": " + s.summary[0]);
        for (size_t i = 1; i < s.summary.size(); ++i) r.say("    " + s.summary[i]);
        arr.push_back(id);
      }
  r.data["ids"] = arr;
}

std::optional<int> parse_id(const Args& a, CommandResult& r, const char* usage) {
  auto n = a.words.size() == 2 ? parse_number(a.words[1]) : std::nullopt;
  if (!n || *n == 0 || *n > INT32_MAX) {
    r.fail(std::string("usage: ") + usage);
    return std::nullopt;
  }
  return static_cast<int>(*n);
}

using TriggerRun = void (*)(TriggerEngine&, const Args&, CommandResult&);

// A subcommand's run function: the session's trigger engine, or an error if it has none.
RunFn on_engine(TriggerRun run) {
  return [run](Interpreter& in, const Args& a, CommandResult& r) {
    TriggerEngine* engine = in.session().triggers();
    if (!engine) return r.fail("triggers are not available in this session");
    run(*engine, a, r);
  };
}

void trigger_add(TriggerEngine& engine, const Args& a, CommandResult& r) {
  // Everything after "add" is one trigger in the one-line form.
  std::string text = a.rest;
  size_t i = text.find(a.words[0]);
  text = i == std::string::npos ? "" : text.substr(i + a.words[0].size());
  size_t b = text.find_first_not_of(" \t");
  text = b == std::string::npos ? "" : text.substr(b);
  if (text.empty()) {
    r.fail("usage: trigger add NAME [shots K] when COND do ACTIONS");
    return;
  }
  // `;` separates lines (outside quotes), so that events and state machines fit on one line:
  // `trigger add def g = dispatch GEMM layer 0; third when count(g) == 3 do halt`.
  std::vector<std::string> lines(1);
  bool quoted = false;
  for (char c : text) {
    if (c == '"') quoted = !quoted;
    if (c == ';' && !quoted) {
      lines.emplace_back();
      continue;
    }
    lines.back() += c;
  }
  text.clear();
  bool named = false;
  for (auto& l : lines) {
    const size_t f = l.find_first_not_of(" \t");
    l = f == std::string::npos ? "" : l.substr(f);
    if (!named && !l.empty() && l.rfind("def ", 0) != 0) {
      if (l.rfind("trigger ", 0) != 0) l = "trigger " + l;
      named = true;
    }
    text += l + "\n";
  }
  auto p = parse_triggers(text, "<prompt>", engine.env());
  if (!p.ok()) {
    r.fail(errors_text(p));
    return;
  }
  added(engine, engine.add(std::move(*p.program)), r);
}

void trigger_load(TriggerEngine& engine, const Args& a, CommandResult& r) {
  if (a.words.size() != 2) {
    r.fail("usage: trigger load FILE");
    return;
  }
  auto p = load_trigger_file(a.words[1], engine.env());
  if (!p.ok()) {
    r.fail(errors_text(p));
    return;
  }
  added(engine, engine.add(std::move(*p.program)), r);
}

void trigger_list(TriggerEngine& engine, const Args&, CommandResult& r) {
  auto st = engine.status();
  if (st.empty()) r.say("no triggers");
  json::Json arr = json::Json::array();
  for (const auto& s : st) {
    std::string flags = s.enabled ? (s.exhausted ? "done" : "armed") : "disabled";
    r.say(std::to_string(s.id) + "  [" + flags + ", " + std::to_string(s.hits) + " hits" +
          (s.machine ? ", state " + s.state : "") + "]  " + s.summary[0]);
    for (size_t i = 1; i < s.summary.size(); ++i) r.say("      " + s.summary[i]);
    json::Json t = json::Json::object();
    t["id"] = s.id;
    t["name"] = s.name;
    t["enabled"] = s.enabled;
    t["exhausted"] = s.exhausted;
    t["hits"] = s.hits;
    t["state"] = s.state;
    t["file"] = s.file;
    arr.push_back(t);
  }
  r.data["triggers"] = arr;
}

void trigger_hits(TriggerEngine& engine, const Args&, CommandResult& r) {
  json::Json arr = json::Json::array();
  for (const auto& h : engine.hits()) {
    r.say(describe_hit(h));
    for (const auto& c : h.captures)
      if (!c.error.empty())
        r.say("    capture failed: " + c.error);
      else if (c.written)
        r.say("    captured cycles " + std::to_string(c.from) + ".." + std::to_string(c.to) +
              " to " + c.fst + ", " + c.log);
      else
        r.say("    capture of cycles " + std::to_string(c.requested_from) + ".." +
              std::to_string(c.requested_to) + " pending: written when the run passes cycle " +
              std::to_string(c.requested_to));
    arr.push_back(hit_json(h));
  }
  if (engine.hits().empty()) r.say("no trigger hits");
  r.data["hits"] = arr;
}

void trigger_delete(TriggerEngine& engine, const Args& a, CommandResult& r) {
  if (a.words.size() == 2 && a.words[1] == "all") {
    for (const auto& s : engine.status()) engine.remove(s.id);
    r.say("deleted all triggers");
    return;
  }
  auto id = parse_id(a, r, "trigger delete ID|all");
  if (!id) return;
  if (!engine.remove(*id)) return r.fail("no trigger " + std::to_string(*id));
  r.say("deleted trigger " + std::to_string(*id));
}

template <bool kEnable>
void trigger_set_enabled(TriggerEngine& engine, const Args& a, CommandResult& r) {
  auto id = parse_id(a, r, "trigger enable|disable ID");
  if (!id) return;
  if (!engine.set_enabled(*id, kEnable)) return r.fail("no trigger " + std::to_string(*id));
  r.say((kEnable ? "enabled trigger " : "disabled trigger ") + std::to_string(*id) +
        (kEnable ? " (shots refreshed, windows restart at the next run)" : ""));
}

// `trigger` alone lists; any other first word is not a subcommand.
void trigger_other(TriggerEngine& engine, const Args& a, CommandResult& r) {
  if (a.words.empty()) return trigger_list(engine, a, r);
  r.fail(
      "usage: trigger add TEXT | list | hits | delete ID | enable ID | disable ID | "
      "load FILE");
}

}  // namespace

void register_trigger_commands(Interpreter& in) {
  declare(
      in.add(
          {"trigger",
           {"trig"},
           "trigger add NAME [shots K] when COND do ACTIONS | trigger list | trigger hits | "
           "trigger delete ID|all | trigger enable ID | trigger disable ID | trigger load FILE",
           "Counter-based trace triggers: conditions, state machines, halt and capture",
           "Triggers are evaluated after every cycle while the program runs (continue, step, "
           "until); windows continue across stops and restart after time travel. Actions: halt, "
           "capture [pre N] [post N], checkpoint [NAME], snapshot, record [FILE], log \"TEXT\", "
           "rearm. `;` separates lines, so event definitions and state machines fit on one line "
           "(or come from files: `trigger load`); docs/triggers.md has the language.",
           {"trigger add stall when rate(load.stall_mem, 1024) > 0.8 do halt, capture pre 500 "
            "post 100",
            "trigger add sat shots 3 when delta(saturations, 64) > 10 do log \"saturation storm\"",
            "trigger add def g = dispatch GEMM layer 0; third when count(g) == 3 do halt",
            "trigger add burst; state idle; if delta(load.stall_mem, 64) > 40 then goto hot; "
            "state hot; if state_cycles >= 100 then halt; end",
            "trigger load examples/triggers/memory_stall_burst.trig", "trigger list",
            "trigger disable 2"},
           kNeedsNothing,
           false,
           on_engine(trigger_other)}),
      Effect::ReadOnly,
      {{"add", {ArgKind::None}, Effect::Changes, on_engine(trigger_add)},
       {"list", {}, Effect::ReadOnly, on_engine(trigger_list)},
       {"hits", {}, Effect::ReadOnly, on_engine(trigger_hits)},
       {"delete", {ArgKind::None}, Effect::Changes, on_engine(trigger_delete)},
       {"enable", {ArgKind::None}, Effect::Changes, on_engine(trigger_set_enabled<true>)},
       {"disable", {ArgKind::None}, Effect::Changes, on_engine(trigger_set_enabled<false>)},
       {"load", {ArgKind::ReadFile, ArgKind::None}, Effect::Changes, on_engine(trigger_load)}});
}

}  // namespace bud::debugger
