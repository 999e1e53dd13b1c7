// Run control and breakpoints: continue, step, until, break, watch, delete, enable, disable.
#include <algorithm>
#include <fstream>

#include "debugger/commands/CheckCommands.h"
#include "debugger/commands/Format.h"
#include "debugger/commands/Interpreter.h"
#include "emu/isa/Isa.h"

namespace bud::debugger {

namespace {

void report_stop(const StopInfo& s, CommandResult& r) {
  r.say(s.describe());
  r.stop = s;
}

std::optional<uint64_t> count_arg(const Args& a, size_t i, uint64_t def, CommandResult& r) {
  if (a.words.size() <= i) return def;
  auto n = parse_number(a.words[i]);
  if (!n || *n == 0) {
    r.fail("expected a positive cycle count, got '" + a.words[i] + "'");
    return std::nullopt;
  }
  return n;
}

/// The engine that executes a command ("load", "compute", "store"), or "" (sync, end: fetch).
std::string engine_of(const isa::Command& c) {
  switch (c.opcode) {
    case isa::Opcode::Load: return "load";
    case isa::Opcode::Gemm:
    case isa::Opcode::Post: return "compute";
    case isa::Opcode::Store: return "store";
    default: return "";
  }
}

/// A condition that becomes true on the cycle ENGINE stops executing command ID: it is false
/// while the engine runs ID, so its false -> true edge is the retirement.
std::string retire_condition(const std::string& engine, uint32_t id) {
  return engine + ".state == 0 || " + engine + ".id_q != " + std::to_string(id);
}

/// `layer L`: a layer by number or name; nullopt with an error naming it.
std::optional<uint32_t> parse_layer(Interpreter& in, const std::string& l, CommandResult& r) {
  const auto& names = in.session().program().layer_names;
  if (auto n = parse_number(l)) {
    if (*n >= names.size()) {
      r.fail("no layer " + l + " (the workload has " + std::to_string(names.size()) + ")");
      return std::nullopt;
    }
    return static_cast<uint32_t>(*n);
  }
  auto it = std::find(names.begin(), names.end(), l);
  if (it == names.end()) {
    r.fail("unknown layer '" + l + "'");
    return std::nullopt;
  }
  return static_cast<uint32_t>(it - names.begin());
}

// One form of `break`/`tbreak`: adds the breakpoint and returns its id, or 0 with `error` set
// (or `r` failed).
using BreakForm = int (*)(Interpreter&, const Args&, CommandResult&, std::string& error);

// The run function of a break form: adds the breakpoint, makes it one-shot for tbreak, reports.
RunFn break_form(BreakForm form) {
  return [form](Interpreter& in, const Args& a, CommandResult& r) {
    auto& bps = in.session().breakpoints();
    std::string error;
    const int id = form(in, a, r, error);
    if (!r.ok) return;
    if (!id) return r.fail(error);
    if (a.command == "tbreak" || a.command == "tb") bps.set_temporary(id, true);
    const auto& b = bps.list().back();
    r.say(std::string(b.temporary ? "temporary " : "") + "breakpoint " + std::to_string(id) +
          ": " + b.spec);
    r.data["id"] = id;
    r.data["spec"] = b.spec;
  };
}

// break layer L end: the last command of layer L (that an engine executes) retires.
int break_layer(Interpreter& in, const Args& a, CommandResult& r, std::string& error) {
  auto& bps = in.session().breakpoints();
  if (a.words.size() != 3 || a.words[2] != "end") {
    r.fail("usage: break layer L end (stops when layer L's last command retires; "
           "`break cmd layer L` stops at each dispatch of its commands)");
    return 0;
  }
  auto layer = parse_layer(in, a.words[1], r);
  if (!layer) return 0;
  const auto& cmds = in.session().program().commands;
  std::optional<uint32_t> last;
  for (uint32_t i = 0; i < cmds.size(); ++i)
    if (cmds[i].layer == *layer && !engine_of(cmds[i]).empty()) last = i;
  if (!last) {
    r.fail("layer " + a.words[1] + " has no command an engine executes");
    return 0;
  }
  const int id = bps.add_condition(retire_condition(engine_of(cmds[*last]), *last), error);
  if (id) bps.set_spec(id, "layer " + a.words[1] + " end");
  return id;
}

int break_if(Interpreter& in, const Args& a, CommandResult&, std::string& error) {
  const std::string text = a.rest.substr(a.rest.find(a.words[0]) + a.words[0].size());
  return in.session().breakpoints().add_condition(text, error);
}

int break_cmd(Interpreter& in, const Args& a, CommandResult& r, std::string& error) {
  CommandMatch m;
  std::string spec = "cmd";
  for (size_t i = 1; i < a.words.size(); ++i) {
    const std::string& w = a.words[i];
    if (w == "layer" && i + 1 < a.words.size()) {
      const std::string& l = a.words[++i];
      if (auto n = parse_number(l)) {
        m.layer = static_cast<uint32_t>(*n);
      } else {
        auto layer = parse_layer(in, l, r);
        if (!layer) return 0;
        m.layer = *layer;
      }
      spec += " layer " + l;
    } else if (w[0] == '#') {
      auto n = parse_number(w.substr(1));
      if (!n) {
        r.fail("bad command index '" + w + "'");
        return 0;
      }
      m.cmd_id = static_cast<uint32_t>(*n);
      spec += " " + w;
    } else if (auto op = isa::parse_opcode(w)) {
      m.opcode = static_cast<uint8_t>(*op);
      spec += " " + isa::opcode_name(static_cast<uint8_t>(*op));
    } else {
      r.fail("expected an opcode (load, gemm, post, store, sync, end), #INDEX or layer L, got '" +
             w + "'");
      return 0;
    }
  }
  if (!m.opcode && !m.cmd_id && !m.layer) {
    r.fail("break cmd needs an opcode, #INDEX or layer");
    return 0;
  }
  return in.session().breakpoints().add_command(m, spec, error);
}

// break CYCLE | break cycle CYCLE: the forms that are not subcommands.
int break_cycle(Interpreter& in, const Args& a, CommandResult& r, std::string& error) {
  if (a.words.empty()) {
    r.fail("usage: break CYCLE | break if EXPR | break cmd [OPCODE] [#INDEX] [layer L]");
    return 0;
  }
  const std::string& w0 = a.words[0];
  std::string c = w0 == "cycle" && a.words.size() > 1 ? a.words[1] : w0;
  auto n = parse_number(c);
  if (!n) {
    r.fail("expected a cycle, `if EXPR` or `cmd ...`, got '" + c + "'");
    return 0;
  }
  return in.session().breakpoints().add_cycle(*n, error);
}

// The subcommands of break and tbreak (`break on|off mismatch` is break's only).
std::vector<SubcommandSpec> break_forms(bool mismatch) {
  std::vector<SubcommandSpec> forms = {
      {"if", {ArgKind::Name}, Effect::Changes, break_form(break_if)},
      {"cmd", {ArgKind::Opcode}, Effect::Changes, break_form(break_cmd), 0, {"command"}},
      {"layer", {ArgKind::Layer, ArgKind::None}, Effect::Changes, break_form(break_layer)}};
  if (mismatch) {
    forms.push_back({"on", {ArgKind::None}, Effect::Changes, break_on_off});
    forms.push_back({"off", {ArgKind::None}, Effect::Changes, break_on_off});
  }
  return forms;
}

void do_watch(Interpreter& in, const Args& a, CommandResult& r) {
  auto& s = in.session();
  if (a.words.empty()) {
    r.fail("usage: watch SIGNAL | watch MEMORY ADDR [BYTES]");
    return;
  }
  std::string error;
  int id = 0;
  std::string mem = a.words[0] == "mem" && a.words.size() > 1 ? a.words[1] : a.words[0];
  const size_t base = a.words[0] == "mem" ? 2 : 1;
  bool is_mem = false;
  for (const auto& m : s.emu().memories()) is_mem |= m.name == mem;
  if (is_mem) {
    auto addr = a.words.size() > base ? parse_number(a.words[base]) : std::nullopt;
    if (!addr) {
      r.fail("usage: watch " + mem + " ADDR [BYTES]");
      return;
    }
    uint64_t width = 8;
    if (a.words.size() > base + 1) {
      auto w = parse_number(a.words[base + 1]);
      if (!w) {
        r.fail("bad width '" + a.words[base + 1] + "'");
        return;
      }
      width = *w;
    }
    id = s.breakpoints().add_watch_memory(mem, *addr, static_cast<uint32_t>(width), error);
  } else {
    std::string e;
    auto t = resolve_target(s.emu(), a.words[0], e);
    if (!t) {
      r.fail(e);
      return;
    }
    if (t->kind != Target::Kind::Signal) {
      r.fail(a.words[0] + " is not a signal (watch conditions on counters with break if)");
      return;
    }
    id = s.breakpoints().add_watch_signal(a.words[0], error);
  }
  if (!id) {
    r.fail(error);
    return;
  }
  r.say("watchpoint " + std::to_string(id) + ": " + s.breakpoints().list().back().spec);
  r.data["id"] = id;
}

/// A breakpoint id argument: a number or `$bpnum` (the last one created, as in gdb; what
/// `save breakpoints` writes so the file works in a session that already has breakpoints).
std::optional<int> breakpoint_id(const Breakpoints& bps, const std::string& w) {
  if (w == "$bpnum") {
    if (bps.list().empty()) return std::nullopt;
    return bps.list().back().id;
  }
  auto n = parse_number(w);
  if (!n || !bps.find(static_cast<int>(*n))) return std::nullopt;
  return static_cast<int>(*n);
}

/// The command that re-creates `b` (without its condition and enabled state).
std::string recreate_command(const Breakpoint& b) {
  const std::string brk = b.temporary ? "tbreak " : "break ";
  switch (b.kind) {
    case BreakKind::Cycle: return brk + std::to_string(b.cycle);
    case BreakKind::Condition:
    case BreakKind::Command: return brk + b.spec;  // "if EXPR", "cmd ..."
    case BreakKind::WatchSignal: return b.spec;     // "watch NAME"
    case BreakKind::WatchMemory:
      return "watch " + b.memory + " " + hex64(b.offset) + " " + std::to_string(b.width);
  }
  return b.spec;
}

void do_finish(Interpreter& in, const Args& a, CommandResult& r) {
  auto& s = in.session();
  if (a.words.size() > 1) {
    r.fail("usage: finish [load|compute|store]");
    return;
  }
  const auto engines = s.emu().engines();
  const emu::EngineStatus* target = nullptr;
  if (a.words.empty()) {
    // Default: the engine running the oldest command in flight (lowest index), the one the
    // others wait on.
    for (const auto& e : engines)
      if (e.cmd_id && (!target || *e.cmd_id < *target->cmd_id)) target = &e;
    if (!target) {
      r.fail("no engine is executing a command at cycle " + std::to_string(s.emu().cycle()));
      return;
    }
  } else {
    for (const auto& e : engines)
      if (e.name == a.words[0] && e.name != "fetch") target = &e;
    if (!target) {
      r.fail("unknown engine '" + a.words[0] + "' (load, compute, store)");
      return;
    }
    if (!target->cmd_id) {
      r.fail(target->name + " is " + target->state + " at cycle " + std::to_string(s.emu().cycle()) +
             "; it has no command to finish");
      return;
    }
  }
  const std::string engine = target->name;
  const uint32_t cmd = *target->cmd_id;
  std::string error;
  auto& bps = s.breakpoints();
  const int id = bps.add_condition(retire_condition(engine, cmd), error);
  if (!id) {
    r.fail(error);
    return;
  }
  StopInfo stop = s.run(UINT64_MAX, true, StopKind::Limit);
  bps.remove_internal(id);
  // Our internal breakpoint is reported as the `finish` reason; other breakpoints that stopped
  // the run first stay as they are (the command has then not retired yet).
  for (auto& reason : stop.reasons) {
    if (reason.kind == StopKind::Breakpoint && reason.id == id) {
      reason.kind = StopKind::Finish;
      reason.id = 0;
      reason.detail = engine + " retired #" + std::to_string(cmd);
      if (cmd < s.program().commands.size())
        reason.detail += " " + s.program().commands[cmd].to_string();
    }
  }
  r.data["engine"] = engine;
  r.data["cmd_id"] = cmd;
  report_stop(stop, r);
}

void do_save(Interpreter& in, const Args& a, CommandResult& r) {
  if (a.words.size() != 2 || a.words[0] != "breakpoints") {
    r.fail("usage: save breakpoints FILE");
    return;
  }
  const std::string& path = a.words[1];
  std::ofstream f(path);
  if (!f) {
    r.fail("cannot write '" + path + "'");
    return;
  }
  const auto& list = in.session().breakpoints().list();
  f << "# bud breakpoints (load with: source " << path << ")\n";
  for (const auto& b : list) {
    f << recreate_command(b) << "\n";
    if (b.filter) f << "condition $bpnum " << b.filter->to_string() << "\n";
    if (!b.enabled) f << "disable $bpnum\n";
    if (!b.commands.empty()) {
      f << "commands $bpnum\n";
      for (const auto& c : b.commands) f << "  " << c << "\n";
      f << "end\n";
    }
  }
  f.flush();
  if (!f) {
    r.fail("error writing '" + path + "'");
    return;
  }
  r.say("saved " + std::to_string(list.size()) + " breakpoints to " + path);
  r.data["file"] = path;
  r.data["count"] = static_cast<uint64_t>(list.size());
}

void do_condition(Interpreter& in, const Args& a, CommandResult& r) {
  auto& bps = in.session().breakpoints();
  if (a.words.empty()) {
    r.fail("usage: condition ID [EXPR]");
    return;
  }
  auto id = breakpoint_id(bps, a.words[0]);
  if (!id) {
    r.fail("no breakpoint " + a.words[0]);
    return;
  }
  std::string text = a.rest.substr(a.rest.find(a.words[0]) + a.words[0].size());
  std::string error;
  if (!bps.set_filter(*id, text, error)) {
    r.fail(error);
    return;
  }
  const Breakpoint* b = bps.find(*id);
  if (b->filter) r.say("breakpoint " + std::to_string(*id) + ": stops only if " + b->filter->to_string());
  else r.say("breakpoint " + std::to_string(*id) + " is now unconditional");
  r.data["id"] = *id;
  r.data["condition"] = b->filter ? b->filter->to_string() : std::string();
}

void set_enabled(Interpreter& in, const Args& a, CommandResult& r, bool enabled) {
  auto& bps = in.session().breakpoints();
  if (a.words.empty()) {
    for (const auto& b : bps.list()) bps.set_enabled(b.id, enabled);
    r.say(std::string(enabled ? "enabled" : "disabled") + " all breakpoints");
    return;
  }
  for (const auto& w : a.words) {
    auto id = breakpoint_id(bps, w);
    if (!id || !bps.set_enabled(*id, enabled)) {
      r.fail("no breakpoint " + w);
      return;
    }
  }
  r.say(std::string(enabled ? "enabled " : "disabled ") + a.rest);
}

}  // namespace

void register_run_commands(Interpreter& interp) {
  declare(interp.add({"continue", {"c", "run", "r", "cont"}, "continue [CYCLES]",
          "Run until a breakpoint, the end of the program, Ctrl-C, or CYCLES more cycles",
          "Breakpoints and watchpoints are evaluated after every cycle. The stop report lists every "
          "reason that applied.",
          {"continue", "continue 100000"}, kNeedsLiveRun, true,
          [](Interpreter& in, const Args& a, CommandResult& r) {
            auto n = count_arg(a, 0, UINT64_MAX, r);
            if (!n) return;
            report_stop(in.session().run(*n, true, StopKind::Limit), r);
          }}), Effect::Changes);
  declare(interp.add({"step", {"s", "stepi", "si"}, "step [CYCLES]",
          "Advance CYCLES clock cycles (default 1), stopping early at a breakpoint", "",
          {"step", "step 64"}, kNeedsLiveRun, true,
          [](Interpreter& in, const Args& a, CommandResult& r) {
            auto n = count_arg(a, 0, 1, r);
            if (!n) return;
            report_stop(in.session().run(*n, true, StopKind::Step), r);
          }}), Effect::Changes);
  declare(interp.add({"until", {"u"}, "until CYCLE", "Run until CYCLE (or an earlier breakpoint)", "",
          {"until 50000"}, kNeedsLiveRun, false,
          [](Interpreter& in, const Args& a, CommandResult& r) {
            auto c = a.words.empty() ? std::nullopt : parse_number(a.words[0]);
            if (!c) {
              r.fail("usage: until CYCLE");
              return;
            }
            const uint64_t now = in.session().emu().cycle();
            if (*c <= now) {
              r.fail("cycle " + std::to_string(*c) + " is not ahead (now " + std::to_string(now) +
                     "); use goto to go back");
              return;
            }
            report_stop(in.session().run(*c - now, true, StopKind::Until), r);
          }}), Effect::Changes);
  declare(interp.add({"break", {"b"}, "break CYCLE | break if EXPR | break cmd [OPCODE] [#INDEX] [layer L] | break layer L end | break on|off mismatch",
          "Set a breakpoint on a cycle, a condition, a dispatched command or the end of a layer",
          "A condition stops on the cycle it becomes true (see docs/expressions.md). A command "
          "breakpoint stops after the fetch unit dispatches a matching command. `break layer L "
          "end` stops on the cycle the last command of layer L retires from its engine.",
          {"break 12000", "break if gemm.stall_mem > 1000", "break if rate(load.stall_mem, 256) > 0.5",
           "break cmd gemm layer 1", "break cmd #42", "break layer 0 end"},
          kNeedsNothing, false, break_form(break_cycle)}),
          Effect::Changes, break_forms(true));
  declare(interp.add({"finish", {"fin"}, "finish [load|compute|store]",
          "Run until the command an engine is executing retires",
          "Without an engine: the one executing the oldest command in flight (lowest index). "
          "Stops earlier at a breakpoint, like continue.",
          {"finish", "finish compute"}, kNeedsLiveRun, false, do_finish}),
          Effect::Changes, {ArgKind::Engine, ArgKind::None});
  declare(interp.add({"tbreak", {"tb"}, "tbreak CYCLE | tbreak if EXPR | tbreak cmd [OPCODE] [#INDEX] [layer L]",
          "Set a one-shot breakpoint: like break, deleted by the stop it causes",
          "Takes every form of break. When the breakpoint is among the reasons of a stop it is "
          "deleted and the stop says so.",
          {"tbreak 5000", "tbreak cmd gemm layer 1"}, kNeedsNothing, false,
          break_form(break_cycle)}),
          Effect::Changes, break_forms(false));
  declare(interp.add({"condition", {}, "condition ID [EXPR]",
          "Make breakpoint ID stop only when EXPR holds; without EXPR, unconditional again",
          "EXPR is evaluated on the cycle the breakpoint would fire (stateless expressions only, "
          "docs/expressions.md). ID may be $bpnum, the last breakpoint created.",
          {"condition 1 gemm.stall_mem > 10", "condition 1"}, kNeedsNothing, false, do_condition}), Effect::Changes, {ArgKind::Breakpoint, ArgKind::Name});
  declare(interp.add({"commands", {}, "commands [ID]  (then command lines, then `end`)",
          "Give breakpoint ID (default: the last one created) commands to run when it stops",
          "The following lines, up to a line `end`, are collected (not run) and replace ID's "
          "commands; `commands ID` then `end` clears them. They run after a stop that ID caused, "
          "after the displays, in order, until one fails; their output follows the stop's. Stops "
          "caused by those commands (a continue among them) do not run commands again.",
          {"commands 1", "print load.state", "continue", "end"}, kNeedsNothing, false,
          [](Interpreter& in, const Args& a, CommandResult& r) {
            auto& bps = in.session().breakpoints();
            if (a.words.size() > 1) {
              r.fail("usage: commands [ID]");
              return;
            }
            auto id = breakpoint_id(bps, a.words.empty() ? "$bpnum" : a.words[0]);
            if (!id) {
              r.fail(a.words.empty() ? "no breakpoints; set one first"
                                     : "no breakpoint " + a.words[0]);
              return;
            }
            in.begin_commands(*id);
            r.say("commands for breakpoint " + std::to_string(*id) + ", one per line; `end` ends them");
            r.data["id"] = *id;
          }}),
          Effect::Changes, {ArgKind::Breakpoint, ArgKind::None});
  declare(interp.add({"save", {}, "save breakpoints FILE",
          "Write the breakpoints and watchpoints as commands that `source FILE` re-creates",
          "Conditions and disabled states are kept (via $bpnum); hit counts are not.",
          {"save breakpoints bps.bud"}, kNeedsNothing, false,
          [](Interpreter&, const Args&, CommandResult& r) {
            r.fail("usage: save breakpoints FILE");
          }}),
          Effect::ReadOnly,
          {{"breakpoints", {ArgKind::WriteFile, ArgKind::None}, Effect::Changes, do_save}});
  declare(interp.add({"display", {}, "display[/x|/d|/b] [NAME | EXPR]",
          "Print NAME or EXPR after every stop (and now); without arguments, show them all",
          "Uses print's formats. `undisplay ID` removes one, `info display` lists them.",
          {"display load.state", "display/x fetch.head_q"}, kNeedsNothing, false,
          [](Interpreter& in, const Args& a, CommandResult& r) {
            if (a.words.empty()) {
              in.show_displays(r);
              if (in.displays().empty()) r.say("no displays");
              return;
            }
            // Check it prints now, so a typo is refused here and not at every stop.
            CommandResult p;
            in.find("print")->run(in, a, p);
            if (!p.ok) {
              r.fail(p.error);
              return;
            }
            const int id = in.add_display({0, a.flag, a.rest});
            for (const auto& l : p.lines) r.say(std::to_string(id) + ": " + l);
            r.data["id"] = id;
          }}), Effect::Changes, {ArgKind::Name});
  declare(interp.add({"undisplay", {}, "undisplay [ID...]", "Remove displays (all if no ID)", "",
          {"undisplay 1", "undisplay"}, kNeedsNothing, false,
          [](Interpreter& in, const Args& a, CommandResult& r) {
            if (a.words.empty()) {
              while (!in.displays().empty()) in.remove_display(in.displays().front().id);
              r.say("deleted all displays");
              return;
            }
            for (const auto& w : a.words) {
              auto n = parse_number(w);
              if (!n || !in.remove_display(static_cast<int>(*n))) {
                r.fail("no display " + w);
                return;
              }
            }
            r.say("deleted display " + a.rest);
          }}), Effect::Changes, {ArgKind::Display});
  declare(interp.add({"watch", {"w"}, "watch SIGNAL | watch MEMORY ADDR [BYTES]",
          "Stop when a signal or a memory word changes", "",
          {"watch load.state", "watch tokens[0]", "watch dram 0x10040 4"}, kNeedsNothing, false,
          do_watch}), Effect::Changes, {ArgKind::Watchable, ArgKind::None});
  declare(interp.add({"delete", {"d"}, "delete [ID...]", "Delete breakpoints (all if no ID)", "",
          {"delete 2", "delete"}, kNeedsNothing, false,
          [](Interpreter& in, const Args& a, CommandResult& r) {
            auto& bps = in.session().breakpoints();
            if (a.words.empty()) {
              bps.remove_all();
              r.say("deleted all breakpoints");
              return;
            }
            for (const auto& w : a.words) {
              auto n = parse_number(w);
              if (!n || !bps.remove(static_cast<int>(*n))) {
                r.fail("no breakpoint " + w);
                return;
              }
            }
            r.say("deleted " + a.rest);
          }}), Effect::Changes, {ArgKind::Breakpoint});
  declare(interp.add({"enable", {}, "enable [ID...]", "Enable breakpoints", "", {"enable 1 3"}, kNeedsNothing,
          false, [](Interpreter& in, const Args& a, CommandResult& r) { set_enabled(in, a, r, true); }}), Effect::Changes, {ArgKind::Breakpoint});
  declare(interp.add({"disable", {}, "disable [ID...]", "Disable breakpoints", "", {"disable 2"},
          kNeedsNothing, false,
          [](Interpreter& in, const Args& a, CommandResult& r) { set_enabled(in, a, r, false); }}), Effect::Changes, {ArgKind::Breakpoint});
}

}  // namespace bud::debugger
