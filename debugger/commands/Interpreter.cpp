#include "debugger/commands/Interpreter.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "debugger/expr/Compiler.h"
#include "emu/isa/Isa.h"

namespace bud::debugger {

json::Json stop_json(const StopInfo& s) {
  json::Json j = json::Json::object();
  j["cycle"] = s.cycle;
  json::Json reasons = json::Json::array();
  for (const auto& r : s.reasons) {
    json::Json x = json::Json::object();
    x["kind"] = stop_kind_name(r.kind);
    if (r.id) x["id"] = r.id;
    if (!r.detail.empty()) x["detail"] = r.detail;
    reasons.push_back(x);
  }
  j["reasons"] = reasons;
  return j;
}

namespace {

// '#' starts a comment unless it introduces a command index ("break cmd #12").
std::string strip_comment(const std::string& line) {
  const auto hash = line.find('#');
  if (hash == std::string::npos) return line;
  const bool index =
      hash + 1 < line.size() && std::isdigit(static_cast<unsigned char>(line[hash + 1]));
  return index ? line : line.substr(0, hash);
}

}  // namespace

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

bool SubcommandSpec::matches(const std::string& word) const {
  if (word == name) return true;
  for (const auto& a : aliases)
    if (word == a) return true;
  return abbrev > 0 && word.size() >= abbrev && word.size() < name.size() &&
         name.compare(0, word.size(), word) == 0;
}

const SubcommandSpec* CommandSpec::subcommand(const Args& a) const {
  if (a.words.empty()) return nullptr;
  // A whole name wins over another subcommand's prefix (`info check` vs `info checkpoints`).
  for (const auto& sc : subcommands)
    if (sc.name == a.words[0]) return &sc;
  for (const auto& sc : subcommands)
    if (sc.matches(a.words[0])) return &sc;
  return nullptr;
}

Effect CommandSpec::effect_of(const Args& a) const {
  const SubcommandSpec* sc = subcommand(a);
  return sc ? sc->effect : effect;
}

const std::vector<ArgKind>& CommandSpec::arg_kinds(const Args& a, size_t& skip) const {
  const SubcommandSpec* sc = subcommand(a);
  skip = sc ? 1 : 0;
  return sc ? sc->args : args;
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

CommandSpec& Interpreter::add(CommandSpec spec) {
  commands_.push_back(std::move(spec));
  return commands_.back();
}

const CommandSpec* Interpreter::find(const std::string& name) const {
  for (const auto& c : commands_) {
    if (c.name == name) return &c;
    for (const auto& a : c.aliases)
      if (a == name) return &c;
  }
  return nullptr;
}

CommandResult Interpreter::execute(const std::string& raw) {
  if (collecting_id_) {
    // Inside `commands N ... end`: collect the line, trimmed and without its comment.
    CommandResult r;
    const std::string t = parse_args(strip_comment(raw)).command;
    if (t == "end") {
      const int id = collecting_id_;
      collecting_id_ = 0;
      if (!session_.breakpoints().set_commands(id, collected_)) {
        r.fail("breakpoint " + std::to_string(id) + " was deleted while its commands were typed");
        return r;
      }
      r.say(collected_.empty() ? "breakpoint " + std::to_string(id) + " has no commands"
                               : "breakpoint " + std::to_string(id) + ": " +
                                     std::to_string(collected_.size()) + " commands");
      r.data["id"] = id;
      r.data["count"] = static_cast<uint64_t>(collected_.size());
      collected_.clear();
      return r;
    }
    if (t == "commands") {
      r.fail("`commands` cannot be nested; finish the commands of breakpoint " +
             std::to_string(collecting_id_) + " with `end`");
      return r;
    }
    std::string kept = strip_comment(raw);
    while (!kept.empty() && std::isspace(static_cast<unsigned char>(kept.back()))) kept.pop_back();
    const size_t first = kept.find_first_not_of(" \t");
    if (first != std::string::npos && !t.empty()) collected_.push_back(kept.substr(first));
    return r;
  }
  std::string line = strip_comment(raw);
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
  const SubcommandSpec* sub = cmd->subcommand(args);
  (sub && sub->run ? sub->run : cmd->run)(*this, args, r);
  if (cmd->repeatable && !raw.empty()) last_repeatable_ = line;
  if (r.stop) {
    r.data["stop"] = stop_json(*r.stop);
    session_.snapshot_counters();
    // tbreak: a one-shot breakpoint is deleted by the stop it caused (as in gdb).
    auto& bps = session_.breakpoints();
    for (const auto& reason : r.stop->reasons) {
      const Breakpoint* b = reason.id ? bps.find(reason.id) : nullptr;
      if (b && b->temporary && reason.kind == StopKind::Breakpoint) {
        bps.remove(reason.id);
        r.say("deleted temporary breakpoint " + std::to_string(reason.id));
      }
    }
    show_displays(r);
    run_breakpoint_commands(r);
  }
  return r;
}

void Interpreter::run_breakpoint_commands(CommandResult& r) {
  // Commands of a stop caused by breakpoint commands do not run (a `continue` among them would
  // otherwise chain without bound); the stop is reported with its displays.
  if (in_breakpoint_commands_ || !r.stop) return;
  std::vector<std::pair<int, std::vector<std::string>>> todo;
  for (const auto& reason : r.stop->reasons) {
    if (reason.kind != StopKind::Breakpoint && reason.kind != StopKind::Watchpoint) continue;
    if (const Breakpoint* b = session_.breakpoints().find(reason.id); b && !b->commands.empty())
      todo.emplace_back(b->id, b->commands);
  }
  if (todo.empty()) return;
  in_breakpoint_commands_ = true;
  json::Json ran = json::Json::array();
  for (const auto& [id, lines] : todo) {
    for (const auto& line : lines) {
      CommandResult c = execute(line);
      json::Json j = json::Json::object();
      j["breakpoint"] = id;
      j["command"] = line;
      j["ok"] = c.ok;
      json::Json out = json::Json::array();
      for (auto& l : c.lines) {
        out.push_back(l);
        r.say(std::move(l));
      }
      j["output"] = out;
      if (c.stop) r.stop = c.stop;  // the state is now at that command's stop
      if (!c.ok) {
        j["error"] = c.error;
        r.say("error: breakpoint " + std::to_string(id) + " command `" + line + "`: " + c.error);
        ran.push_back(j);
        break;
      }
      ran.push_back(j);
      if (c.quit) r.quit = true;
    }
  }
  in_breakpoint_commands_ = false;
  r.data["breakpoint_commands"] = ran;
  if (r.stop) r.data["stop"] = stop_json(*r.stop);
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
    j["id"] = d.id;
    j["expr"] = d.expr;
    if (p.ok) {
      for (const auto& l : p.lines) r.say(std::to_string(d.id) + ": " + l);
      j["output"] = p.lines.empty() ? std::string() : p.lines[0];
    } else {
      // The name may not be readable here (it was when the display was made): say so, go on.
      r.say(std::to_string(d.id) + ": " + d.expr + ": " + p.error);
      j["error"] = p.error;
    }
    arr.push_back(j);
  }
  r.data["displays"] = arr;
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
  if (collecting_id_ && all_ok && !out.empty() && !out.back().second.quit) {
    // A script ends inside `commands N`: drop what was collected, as gdb does not keep it.
    CommandResult r;
    r.fail(path + ":" + std::to_string(lineno) + ": end of file inside `commands " +
           std::to_string(collecting_id_) + "` (missing `end`)");
    collecting_id_ = 0;
    collected_.clear();
    if (on_result) on_result("source " + path, r);
    out.emplace_back("source " + path, r);
    return false;
  }
  return all_ok;
}

std::vector<std::string> Interpreter::names() const {
  std::set<std::string> out;
  const auto& emu = session_.emu();
  for (const auto& s : emu.signals()) out.insert(s.name);
  for (const auto& c : emu.describe().counters) out.insert(c);
  for (const auto& m : emu.memories()) out.insert(m.name);
  for (const auto& c : emu.csrs()) out.insert(c.name);
  out.insert("cycle");
  return {out.begin(), out.end()};
}

std::vector<std::string> Interpreter::candidates(ArgKind kind, const std::string& prefix) const {
  std::vector<std::string> pool;
  const auto& emu = session_.emu();
  switch (kind) {
    case ArgKind::None: break;
    case ArgKind::Watchable:
      for (const auto& m : emu.memories()) pool.push_back(m.name);
      [[fallthrough]];
    case ArgKind::Name:
      for (const auto& s : emu.signals()) pool.push_back(s.name);
      for (const auto& c : emu.describe().counters) pool.push_back(c);
      for (const auto& c : emu.csrs()) pool.push_back(c.name);
      pool.push_back("cycle");
      break;
    case ArgKind::Memory:
      for (const auto& m : emu.memories()) pool.push_back(m.name);
      break;
    case ArgKind::Checkpoint:
      for (const auto& c : session_.timeline().list())
        if (!c.name.empty()) pool.push_back(c.name);
      break;
    case ArgKind::Breakpoint:
      for (const auto& b : session_.breakpoints().list()) pool.push_back(std::to_string(b.id));
      break;
    case ArgKind::Display:
      for (const auto& d : displays_) pool.push_back(std::to_string(d.id));
      break;
    case ArgKind::Command:
      for (const auto& c : commands_) pool.push_back(c.name);
      break;
    case ArgKind::Opcode:
      for (uint8_t op = 0; op < 16; ++op) {
        std::string n = isa::opcode_name(op);
        if (!isa::parse_opcode(n)) continue;
        for (auto& ch : n) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        pool.push_back(n);  // as users type them: break cmd gemm
      }
      pool.push_back("layer");
      break;
    case ArgKind::Layer:
      pool = session_.program().layer_names;
      break;
    case ArgKind::Engine:
      for (const auto& e : emu.engines())
        if (e.name != "fetch") pool.push_back(e.name);
      break;
    case ArgKind::ReadFile:
    case ArgKind::WriteFile:
    case ArgKind::Script: {
      // "dir/pre" lists dir; directories end in '/' so Tab can go on into them.
      const size_t slash = prefix.rfind('/');
      const std::string dir = slash == std::string::npos ? "" : prefix.substr(0, slash + 1);
      std::error_code ec;
      std::filesystem::directory_iterator it(dir.empty() ? "." : dir, ec), end;
      for (; !ec && it != end; it.increment(ec)) {
        std::string name = dir + it->path().filename().string();
        std::error_code ec2;
        if (it->is_directory(ec2)) name += '/';
        pool.push_back(name);
      }
      break;
    }
  }
  std::vector<std::string> out;
  for (const auto& p : pool)
    if (p.rfind(prefix, 0) == 0) out.push_back(p);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::string> Interpreter::complete(const std::string& line) const {
  // The word being typed: after the last space; the complete words before it decide its kind.
  const size_t sp = line.find_last_of(" \t");
  const std::string word = sp == std::string::npos ? line : line.substr(sp + 1);
  if (sp == std::string::npos) {
    std::vector<std::string> out;
    for (const auto& c : commands_) {
      if (c.name.rfind(word, 0) == 0) out.push_back(c.name);
      for (const auto& a : c.aliases)
        if (a.size() > 2 && a.rfind(word, 0) == 0) out.push_back(a);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }
  const Args a = parse_args(line.substr(0, sp));
  const CommandSpec* cmd = find(a.command);
  if (!cmd) return {};
  const std::vector<ArgKind>* kinds = &cmd->args;
  size_t pos = a.words.size();  // index of the word being typed among the arguments
  if (!cmd->subcommands.empty()) {
    if (pos == 0) {
      std::vector<std::string> out;
      for (const auto& sc : cmd->subcommands)
        if (sc.name.rfind(word, 0) == 0) out.push_back(sc.name);
      for (auto& c : candidates(cmd->args.empty() ? ArgKind::None : cmd->args[0], word))
        out.push_back(c);
      std::sort(out.begin(), out.end());
      out.erase(std::unique(out.begin(), out.end()), out.end());
      return out;
    }
    const SubcommandSpec* sc = cmd->subcommand(a);
    if (!sc) return {};
    kinds = &sc->args;
    --pos;
  }
  ArgKind k = arg_kind_at(*kinds, pos);
  // "break cmd gemm layer <Tab>": the word after `layer` is a layer name.
  if (k == ArgKind::Opcode && !a.words.empty() && a.words.back() == "layer") k = ArgKind::Layer;
  return candidates(k, word);
}

}  // namespace bud::debugger
