#include "debugger/commands/Interpreter.h"

#include <algorithm>
#include <fstream>
#include <set>

#include "debugger/expr/Compiler.h"

namespace bud::debugger {

json::Json stop_json(const StopInfo& s) {
  json::Json j = json::Json::object();
  j.set("cycle", s.cycle);
  json::Json reasons = json::Json::array();
  for (const auto& r : s.reasons) {
    json::Json x = json::Json::object();
    x.set("kind", r.kind);
    if (r.id) x.set("id", r.id);
    if (!r.detail.empty()) x.set("detail", r.detail);
    reasons.push(x);
  }
  j.set("reasons", reasons);
  return j;
}

Args parse_args(const std::string& line) {
  Args a;
  size_t i = 0;
  auto skip = [&] {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
  };
  skip();
  size_t start = i;
  while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
  std::string word = line.substr(start, i - start);
  if (auto slash = word.find('/'); slash != std::string::npos && slash > 0) {
    a.flag = word.substr(slash + 1);
    word = word.substr(0, slash);
  }
  a.command = word;
  skip();
  a.rest = line.substr(i);
  while (!a.rest.empty() && std::isspace(static_cast<unsigned char>(a.rest.back())))
    a.rest.pop_back();
  while (i < line.size()) {
    skip();
    if (i >= line.size()) break;
    std::string w;
    if (line[i] == '"') {
      ++i;
      while (i < line.size() && line[i] != '"') w += line[i++];
      if (i < line.size()) ++i;
    } else {
      while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) w += line[i++];
    }
    a.words.push_back(w);
  }
  return a;
}

Interpreter::Interpreter(Session& session) : session_(session) { register_all_commands(*this); }

void register_all_commands(Interpreter& in) {
  register_run_commands(in);
  register_inspect_commands(in);
  register_change_commands(in);
  register_time_commands(in);
  register_meta_commands(in);
  register_record_commands(in);
  register_trigger_commands(in);
}

void Interpreter::add(CommandSpec spec) { commands_.push_back(std::move(spec)); }

const CommandSpec* Interpreter::find(const std::string& name) const {
  for (const auto& c : commands_) {
    if (c.name == name) return &c;
    for (const auto& a : c.aliases)
      if (a == name) return &c;
  }
  return nullptr;
}

CommandResult Interpreter::execute(const std::string& raw) {
  std::string line = raw;
  if (auto hash = line.find('#'); hash != std::string::npos) {
    // '#' starts a comment unless it introduces a command index ("break cmd #12").
    const bool index = hash + 1 < line.size() && std::isdigit(static_cast<unsigned char>(line[hash + 1]));
    if (!index) line = line.substr(0, hash);
  }
  Args args = parse_args(line);
  CommandResult r;
  if (args.command.empty()) {
    if (last_repeatable_.empty()) return r;
    args = parse_args(last_repeatable_);
  }
  const CommandSpec* cmd = find(args.command);
  if (!cmd) {
    std::vector<std::string> names;
    for (const auto& c : commands_) {
      names.push_back(c.name);
      for (const auto& a : c.aliases) names.push_back(a);
    }
    auto near = suggest_names(args.command, names, 3);
    std::string msg = "unknown command '" + args.command + "'";
    if (!near.empty()) {
      msg += " (did you mean ";
      for (size_t i = 0; i < near.size(); ++i) msg += (i ? ", " : "") + near[i];
      msg += "?)";
    }
    r.fail(msg + "; try `help`");
    return r;
  }
  if ((cmd->needs & kNeedsLiveRun) && session_.emu().state() != emu::RunState::Ready) {
    r.fail(std::string("the program has ") +
           (session_.emu().state() == emu::RunState::Finished ? "finished" : "stopped") + " (" +
           emu::run_state_name(session_.emu().state()) + ") at cycle " +
           std::to_string(session_.emu().cycle()) +
           "; use goto, reverse-step or restore to travel back");
    return r;
  }
  cmd->run(*this, args, r);
  if (cmd->repeatable && !raw.empty()) last_repeatable_ = line;
  if (r.stop) {
    r.data.set("stop", stop_json(*r.stop));
    session_.snapshot_counters();
    // tbreak: a one-shot breakpoint is deleted by the stop it caused (as in gdb).
    auto& bps = session_.breakpoints();
    for (const auto& reason : r.stop->reasons) {
      const Breakpoint* b = reason.id ? bps.find(reason.id) : nullptr;
      if (b && b->temporary && reason.kind == "breakpoint") {
        bps.remove(reason.id);
        r.say("deleted temporary breakpoint " + std::to_string(reason.id));
      }
    }
    show_displays(r);
  }
  return r;
}

int Interpreter::add_display(Display d) {
  d.id = next_display_++;
  displays_.push_back(std::move(d));
  return displays_.back().id;
}

bool Interpreter::remove_display(int id) {
  return std::erase_if(displays_, [&](const Display& d) { return d.id == id; }) > 0;
}

void Interpreter::show_displays(CommandResult& r) {
  if (displays_.empty()) return;
  const CommandSpec* print = find("print");
  json::Json arr = json::Json::array();
  for (const auto& d : displays_) {
    CommandResult p;
    print->run(*this, parse_args("print" + (d.format.empty() ? "" : "/" + d.format) + " " + d.expr), p);
    json::Json j = json::Json::object();
    j.set("id", d.id);
    j.set("expr", d.expr);
    if (p.ok) {
      for (const auto& l : p.lines) r.say(std::to_string(d.id) + ": " + l);
      j.set("output", p.lines.empty() ? std::string() : p.lines[0]);
    } else {
      // The name may not be readable here (it was when the display was made): say so, go on.
      r.say(std::to_string(d.id) + ": " + d.expr + ": " + p.error);
      j.set("error", p.error);
    }
    arr.push(j);
  }
  r.data.set("displays", arr);
}

bool Interpreter::source(const std::string& path,
                         std::vector<std::pair<std::string, CommandResult>>& out,
                         bool stop_on_error,
                         const std::function<void(const std::string&, const CommandResult&)>& on_result) {
  std::ifstream f(path);
  if (!f) {
    CommandResult r;
    r.fail("cannot read script '" + path + "'");
    if (on_result) on_result("source " + path, r);
    out.emplace_back("source " + path, r);
    return false;
  }
  if (source_depth_ > 16) {
    CommandResult r;
    r.fail(path + ": scripts nested more than 16 deep");
    if (on_result) on_result("source " + path, r);
    out.emplace_back("source " + path, r);
    return false;
  }
  ++source_depth_;
  bool all_ok = true;
  std::string line;
  int lineno = 0;
  const std::string saved_repeat = last_repeatable_;
  while (std::getline(f, line)) {
    ++lineno;
    // Empty lines in scripts do nothing (they do not repeat the previous command).
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto r = execute(line);
    if (!r.ok) {
      r.error = path + ":" + std::to_string(lineno) + ": " + r.error;
      all_ok = false;
    }
    const bool quit = r.quit;
    if (on_result) on_result(line, r);
    out.emplace_back(line, std::move(r));
    if ((!all_ok && stop_on_error) || quit) break;
  }
  last_repeatable_ = saved_repeat;
  --source_depth_;
  return all_ok;
}

std::vector<std::string> Interpreter::names() const {
  std::set<std::string> out;
  const auto& emu = session_.emu();
  for (const auto& s : emu.signals()) out.insert(s.name);
  for (int i = 0; i < isa::kNumCounters; ++i) out.insert(isa::counter_name(i));
  for (const auto& m : emu.memories()) out.insert(m.name);
  for (const auto& c : emu.csrs()) out.insert(c.name);
  out.insert("cycle");
  return {out.begin(), out.end()};
}

std::vector<std::string> Interpreter::complete(const std::string& line) const {
  // The word being typed: after the last space.
  const size_t sp = line.find_last_of(" \t");
  const std::string word = sp == std::string::npos ? line : line.substr(sp + 1);
  std::vector<std::string> pool;
  if (sp == std::string::npos) {
    for (const auto& c : commands_) {
      pool.push_back(c.name);
      for (const auto& a : c.aliases)
        if (a.size() > 2) pool.push_back(a);
    }
  } else {
    pool = names();
    for (const auto& c : session_.timeline().list())
      if (!c.name.empty()) pool.push_back(c.name);
    // Sub-words of commands that take them.
    for (const char* w : {"if", "cmd", "layer", "breakpoints", "stages", "checkpoints",
                          "signals", "program", "registers", "on", "off", "dump", "mem"})
      pool.push_back(w);
  }
  std::vector<std::string> out;
  for (const auto& p : pool)
    if (p.rfind(word, 0) == 0) out.push_back(p);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace bud::debugger
