// Run control and breakpoints: continue, step, until, break, watch, delete, enable, disable.
#include <algorithm>

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

void do_break(Interpreter& in, const Args& a, CommandResult& r) {
  auto& bps = in.session().breakpoints();
  std::string error;
  int id = 0;
  if (a.words.empty()) {
    r.fail("usage: break CYCLE | break if EXPR | break cmd [OPCODE] [#INDEX] [layer L]");
    return;
  }
  const std::string& w0 = a.words[0];
  if (w0 == "on" || w0 == "off") {
    break_on_off(in, a, r);
    return;
  }
  if (w0 == "if") {
    const std::string text = a.rest.substr(a.rest.find("if") + 2);
    id = bps.add_condition(text, error);
  } else if (w0 == "cmd" || w0 == "command") {
    CommandMatch m;
    std::string spec = "cmd";
    for (size_t i = 1; i < a.words.size(); ++i) {
      const std::string& w = a.words[i];
      if (w == "layer" && i + 1 < a.words.size()) {
        const std::string& l = a.words[++i];
        if (auto n = parse_number(l)) {
          m.layer = static_cast<uint32_t>(*n);
        } else {
          const auto& names = in.session().program().layer_names;
          auto it = std::find(names.begin(), names.end(), l);
          if (it == names.end()) {
            r.fail("unknown layer '" + l + "'");
            return;
          }
          m.layer = static_cast<uint32_t>(it - names.begin());
        }
        spec += " layer " + l;
      } else if (w[0] == '#') {
        auto n = parse_number(w.substr(1));
        if (!n) {
          r.fail("bad command index '" + w + "'");
          return;
        }
        m.cmd_id = static_cast<uint32_t>(*n);
        spec += " " + w;
      } else if (auto op = isa::parse_opcode(w)) {
        m.opcode = static_cast<uint8_t>(*op);
        spec += " " + isa::opcode_name(static_cast<uint8_t>(*op));
      } else {
        r.fail("expected an opcode (load, gemm, post, store, sync, end), #INDEX or layer L, got '" +
               w + "'");
        return;
      }
    }
    if (!m.opcode && !m.cmd_id && !m.layer) {
      r.fail("break cmd needs an opcode, #INDEX or layer");
      return;
    }
    id = bps.add_command(m, spec, error);
  } else {
    std::string c = w0 == "cycle" && a.words.size() > 1 ? a.words[1] : w0;
    auto n = parse_number(c);
    if (!n) {
      r.fail("expected a cycle, `if EXPR` or `cmd ...`, got '" + c + "'");
      return;
    }
    id = bps.add_cycle(*n, error);
  }
  if (!id) {
    r.fail(error);
    return;
  }
  const auto& b = bps.list().back();
  r.say("breakpoint " + std::to_string(id) + ": " + b.spec);
  r.data["id"] = id;
  r.data["spec"] = b.spec;
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

void set_enabled(Interpreter& in, const Args& a, CommandResult& r, bool enabled) {
  auto& bps = in.session().breakpoints();
  if (a.words.empty()) {
    for (const auto& b : bps.list()) bps.set_enabled(b.id, enabled);
    r.say(std::string(enabled ? "enabled" : "disabled") + " all breakpoints");
    return;
  }
  for (const auto& w : a.words) {
    auto n = parse_number(w);
    if (!n || !bps.set_enabled(static_cast<int>(*n), enabled)) {
      r.fail("no breakpoint " + w);
      return;
    }
  }
  r.say(std::string(enabled ? "enabled " : "disabled ") + a.rest);
}

}  // namespace

void register_run_commands(Interpreter& interp) {
  interp.add({"continue", {"c", "run", "r", "cont"}, "continue [CYCLES]",
          "Run until a breakpoint, the end of the program, Ctrl-C, or CYCLES more cycles",
          "Breakpoints and watchpoints are evaluated after every cycle. The stop report lists every "
          "reason that applied.",
          {"continue", "continue 100000"}, kNeedsLiveRun, true,
          [](Interpreter& in, const Args& a, CommandResult& r) {
            auto n = count_arg(a, 0, UINT64_MAX, r);
            if (!n) return;
            report_stop(in.session().run(*n, true, "limit"), r);
          }});
  interp.add({"step", {"s", "stepi", "si"}, "step [CYCLES]",
          "Advance CYCLES clock cycles (default 1), stopping early at a breakpoint", "",
          {"step", "step 64"}, kNeedsLiveRun, true,
          [](Interpreter& in, const Args& a, CommandResult& r) {
            auto n = count_arg(a, 0, 1, r);
            if (!n) return;
            report_stop(in.session().run(*n, true, "step"), r);
          }});
  interp.add({"until", {"u"}, "until CYCLE", "Run until CYCLE (or an earlier breakpoint)", "",
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
            report_stop(in.session().run(*c - now, true, "until"), r);
          }});
  interp.add({"break", {"b"}, "break CYCLE | break if EXPR | break cmd [OPCODE] [#INDEX] [layer L] | break on|off mismatch",
          "Set a breakpoint on a cycle, a condition, or a dispatched command",
          "A condition stops on the cycle it becomes true (see docs/expressions.md). A command "
          "breakpoint stops after the fetch unit dispatches a matching command.",
          {"break 12000", "break if gemm.stall_mem > 1000", "break if rate(load.stall_mem, 256) > 0.5",
           "break cmd gemm layer 1", "break cmd #42"},
          kNeedsNothing, false, do_break});
  interp.add({"watch", {"w"}, "watch SIGNAL | watch MEMORY ADDR [BYTES]",
          "Stop when a signal or a memory word changes", "",
          {"watch load.state", "watch tokens[0]", "watch dram 0x10040 4"}, kNeedsNothing, false,
          do_watch});
  interp.add({"delete", {"d"}, "delete [ID...]", "Delete breakpoints (all if no ID)", "",
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
          }});
  interp.add({"enable", {}, "enable [ID...]", "Enable breakpoints", "", {"enable 1 3"}, kNeedsNothing,
          false, [](Interpreter& in, const Args& a, CommandResult& r) { set_enabled(in, a, r, true); }});
  interp.add({"disable", {}, "disable [ID...]", "Disable breakpoints", "", {"disable 2"},
          kNeedsNothing, false,
          [](Interpreter& in, const Args& a, CommandResult& r) { set_enabled(in, a, r, false); }});
}

}  // namespace bud::debugger
