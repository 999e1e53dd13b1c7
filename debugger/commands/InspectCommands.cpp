// Inspection: print, counters, x (examine memory), info ..., where.
#include <cstdio>
#include <cstring>

#include "debugger/commands/CheckCommands.h"
#include "debugger/commands/Format.h"
#include "debugger/commands/Interpreter.h"
#include "debugger/expr/Compiler.h"
#include "debugger/expr/EmulatorResolver.h"

namespace bud::debugger {

namespace {

void do_print(Interpreter& in, const Args& a, CommandResult& r) {
  auto& emu = in.session().emu();
  if (a.rest.empty()) {
    r.fail("usage: print[/x|/d|/b] NAME | EXPR");
    return;
  }
  if (!a.flag.empty() && a.flag != "x" && a.flag != "d" && a.flag != "b") {
    r.fail("unknown format /" + a.flag + " (use /x, /d or /b)");
    return;
  }
  std::string error;
  if (a.words.size() == 1) {
    if (auto t = resolve_target(emu, a.words[0], error)) {
      const auto v = read_target(emu, *t);
      r.say(t->name + " = " + format_value(v, a.flag));
      r.data["name"] = t->name;
      r.data["value"] = v.low();
      r.data["width"] = v.width;
      if (v.width > 64) r.data["hex"] = format_value(v, "x");
      return;
    }
  }
  // Not a plain name: evaluate it as an expression (stateless functions only make sense here).
  EmulatorResolver resolver(emu);
  auto c = compile(a.rest, resolver);
  if (!c) {
    r.fail(a.words.size() == 1 ? error : c.error.to_string());
    return;
  }
  if (c.expr->stateful()) {
    r.fail("print evaluates once; windowed functions (rate, delta, ...) need break if or a trigger");
    return;
  }
  EmulatorSampler sampler(emu);
  const auto v = c.expr->eval(sampler);
  char text[64];
  if (v.is_real) std::snprintf(text, sizeof text, "%.6g", v.real);
  else std::snprintf(text, sizeof text, "%lld", static_cast<long long>(v.integer));
  r.say(c.expr->to_string() + " = " + text);
  r.data["expr"] = c.expr->to_string();
  if (v.is_real)
    r.data["value"] = v.real;
  else
    r.data["value"] = static_cast<int64_t>(v.integer);
}

void do_counters(Interpreter& in, const Args& a, CommandResult& r) {
  auto& s = in.session();
  const auto& last = s.counters_at_last_stop();
  const std::string filter = a.words.empty() ? "" : a.words[0];
  char buf[128];
  std::snprintf(buf, sizeof buf, "%-24s %20s %14s", "counter", "value", "delta");
  r.say(buf);
  json::Json counters = json::Json::object();
  const auto& names = s.emu().describe().counters;
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i];
    if (!filter.empty() && name.find(filter) == std::string::npos) continue;
    const uint64_t v = s.emu().counter(static_cast<int>(i));
    const int64_t d = static_cast<int64_t>(v - last[i]);
    std::snprintf(buf, sizeof buf, "%-24s %20llu %+14lld", name.c_str(),
                  static_cast<unsigned long long>(v), static_cast<long long>(d));
    r.say(buf);
    json::Json c = json::Json::object();
    c["value"] = v;
    c["delta"] = d;
    counters[name] = c;
  }
  r.data["counters"] = counters;
  r.data["since_cycle"] = s.emu().cycle();
}

void do_examine(Interpreter& in, const Args& a, CommandResult& r) {
  auto& emu = in.session().emu();
  if (a.words.size() < 2) {
    r.fail("usage: x[/x|/i8|/u8|/i32|/u32|/x32] MEMORY ADDR [COUNT]");
    return;
  }
  const std::string fmt = a.flag.empty() ? "x" : a.flag;
  size_t esize;
  if (fmt == "x" || fmt == "i8" || fmt == "u8") esize = 1;
  else if (fmt == "i32" || fmt == "u32" || fmt == "x32") esize = 4;
  else {
    r.fail("unknown format /" + fmt + " (use /x, /i8, /u8, /i32, /u32, /x32)");
    return;
  }
  const std::string& mem = a.words[0];
  const emu::MemoryInfo* info = nullptr;
  for (const auto& m : emu.memories())
    if (m.name == mem) info = &m;
  if (!info) {
    std::vector<std::string> names;
    for (const auto& m : emu.memories()) names.push_back(m.name);
    auto near = suggest_names(mem, names, 3);
    r.fail("unknown memory '" + mem + "'" + (near.empty() ? "" : " (did you mean " + near[0] + "?)"));
    return;
  }
  auto addr = parse_number(a.words[1]);
  if (!addr) {
    r.fail("bad address '" + a.words[1] + "'");
    return;
  }
  uint64_t count = 16;
  if (a.words.size() > 2) {
    auto c = parse_number(a.words[2]);
    if (!c || *c == 0 || *c > 65536) {
      r.fail("count must be 1..65536");
      return;
    }
    count = *c;
  }
  std::vector<uint8_t> bytes(count * esize);
  if (*addr + bytes.size() > info->size_bytes || !emu.read_memory(mem, *addr, bytes)) {
    r.fail("address range " + hex64(*addr) + ".." + hex64(*addr + bytes.size()) +
           " is outside " + mem + " (" + std::to_string(info->size_bytes) + " bytes)");
    return;
  }
  json::Json values = json::Json::array();
  const size_t per_line = esize == 1 ? 16 : 8;
  std::string line;
  char buf[32];
  for (uint64_t i = 0; i < count; ++i) {
    if (i % per_line == 0) {
      if (!line.empty()) r.say(line);
      std::snprintf(buf, sizeof buf, "%s+0x%06llx:", mem.c_str(),
                    static_cast<unsigned long long>(*addr + i * esize));
      line = buf;
    }
    int64_t sv;
    uint64_t uv;
    if (esize == 1) {
      uv = bytes[i];
      sv = static_cast<int8_t>(bytes[i]);
    } else {
      uint32_t w;
      std::memcpy(&w, &bytes[i * 4], 4);
      uv = w;
      sv = static_cast<int32_t>(w);
    }
    if (fmt == "x") std::snprintf(buf, sizeof buf, " %02llx", static_cast<unsigned long long>(uv));
    else if (fmt == "x32") std::snprintf(buf, sizeof buf, " %08llx", static_cast<unsigned long long>(uv));
    else if (fmt[0] == 'i') std::snprintf(buf, sizeof buf, " %lld", static_cast<long long>(sv));
    else std::snprintf(buf, sizeof buf, " %llu", static_cast<unsigned long long>(uv));
    line += buf;
    if (fmt[0] == 'i')
      values.push_back(sv);
    else
      values.push_back(uv);
  }
  if (!line.empty()) r.say(line);
  r.data["memory"] = mem;
  r.data["address"] = *addr;
  r.data["format"] = fmt;
  r.data["values"] = values;
}

void info_breakpoints(Interpreter& in, CommandResult& r, bool watch_only) {
  const auto& list = in.session().breakpoints().list();
  json::Json arr = json::Json::array();
  auto is_watch = [](const Breakpoint& b) {
    return b.kind == BreakKind::WatchSignal || b.kind == BreakKind::WatchMemory;
  };
  size_t shown = 0;
  for (const auto& b : list) {
    if (watch_only && !is_watch(b)) continue;
    ++shown;
    char buf[256];
    std::snprintf(buf, sizeof buf, "%3d  %-9s %-8s hits %-6llu %s%s", b.id, break_kind_name(b.kind),
                  b.enabled ? "enabled" : "disabled", static_cast<unsigned long long>(b.hits),
                  b.spec.c_str(), b.temporary ? "  (temporary)" : "");
    r.say(buf);
    if (b.filter) r.say("     stop only if " + b.filter->to_string());
    for (const auto& c : b.commands) r.say("     > " + c);
    json::Json j = json::Json::object();
    j["id"] = b.id;
    j["kind"] = break_kind_name(b.kind);
    j["enabled"] = b.enabled;
    j["hits"] = b.hits;
    j["spec"] = b.spec;
    j["temporary"] = b.temporary;
    if (b.filter) j["condition"] = b.filter->to_string();
    if (!b.commands.empty()) {
      json::Json cmds = json::Json::array();
      for (const auto& c : b.commands) cmds.push_back(c);
      j["commands"] = cmds;
    }
    arr.push_back(j);
  }
  if (!shown) r.say(watch_only ? "no watchpoints" : "no breakpoints or watchpoints");
  r.data[watch_only ? "watchpoints" : "breakpoints"] = arr;
}

void info_display(Interpreter& in, CommandResult& r) {
  json::Json arr = json::Json::array();
  if (in.displays().empty()) r.say("no displays");
  for (const auto& d : in.displays()) {
    r.say(std::to_string(d.id) + ": " + (d.format.empty() ? "" : "/" + d.format + " ") + d.expr);
    json::Json j = json::Json::object();
    j["id"] = d.id;
    j["format"] = d.format;
    j["expr"] = d.expr;
    arr.push_back(j);
  }
  r.data["displays"] = arr;
}

std::string command_text(const Session& s, uint32_t id) {
  const auto& cmds = s.program().commands;
  if (id >= cmds.size()) return "#" + std::to_string(id);
  std::string t = cmds[id].to_string();
  const std::string layer = s.program().layer_of(id);
  if (!layer.empty()) t += "  [layer " + layer + "]";
  return t;
}

void info_stages(Interpreter& in, CommandResult& r, bool where_only) {
  auto& s = in.session();
  json::Json arr = json::Json::array();
  for (const auto& e : s.emu().engines()) {
    std::string line = e.name;
    line.resize(9, ' ');
    if (where_only) {
      line += e.cmd_id ? command_text(s, *e.cmd_id) : "(" + e.state + ")";
    } else {
      line += e.state;
      line.resize(24, ' ');
      if (e.queue_depth)
        line += "queue " + std::to_string(e.queue_level) + "/" + std::to_string(e.queue_depth) + "  ";
      if (e.cmd_id) line += "cmd #" + std::to_string(*e.cmd_id) + "  ";
      line += e.detail;
    }
    r.say(line);
    json::Json j = json::Json::object();
    j["engine"] = e.name;
    j["state"] = e.state;
    if (e.cmd_id) {
      j["cmd_id"] = *e.cmd_id;
      if (*e.cmd_id < s.program().commands.size()) {
        j["command"] = s.program().commands[*e.cmd_id].to_string();
        j["layer"] = s.program().layer_of(*e.cmd_id);
      }
    }
    if (!where_only) {
      j["queue_level"] = e.queue_level;
      j["queue_depth"] = e.queue_depth;
      j["detail"] = e.detail;
    }
    arr.push_back(j);
  }
  r.data["engines"] = arr;
  r.data["cycle"] = s.emu().cycle();
}

void info_checkpoints(Interpreter& in, CommandResult& r) {
  auto& t = in.session().timeline();
  json::Json arr = json::Json::array();
  for (const auto& c : t.list()) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "cycle %-12llu %-12s %9zu bytes (raw %zu)",
                  static_cast<unsigned long long>(c.cycle), c.name.empty() ? "(auto)" : c.name.c_str(),
                  c.bytes, c.raw_bytes);
    r.say(buf);
    json::Json j = json::Json::object();
    j["cycle"] = c.cycle;
    j["name"] = c.name;
    j["bytes"] = static_cast<uint64_t>(c.bytes);
    arr.push_back(j);
  }
  r.say(std::to_string(t.count()) + " checkpoints, " + std::to_string(t.bytes()) +
        " bytes, automatic interval " + std::to_string(t.interval()) + " cycles");
  r.data["checkpoints"] = arr;
  r.data["bytes"] = static_cast<uint64_t>(t.bytes());
  r.data["interval"] = t.interval();
}

void info_signals(Interpreter& in, const std::string& pattern, CommandResult& r) {
  json::Json arr = json::Json::array();
  for (const auto& s : in.session().emu().signals()) {
    if (!pattern.empty() && s.name.find(pattern) == std::string::npos) continue;
    std::string line = s.name + (s.elements > 1 ? "[" + std::to_string(s.elements) + "]" : "");
    line.resize(32, ' ');
    line += std::to_string(s.width) + " bits  " + s.description;
    r.say(line);
    json::Json j = json::Json::object();
    j["name"] = s.name;
    j["width"] = s.width;
    j["elements"] = s.elements;
    j["writable"] = s.writable;
    arr.push_back(j);
  }
  r.data["signals"] = arr;
}

void info_registers(Interpreter& in, CommandResult& r) {
  auto& emu = in.session().emu();
  json::Json obj = json::Json::object();
  for (const auto& c : emu.csrs()) {
    const uint32_t v = emu.read_csr(c.addr).value_or(0);
    char buf[96];
    std::snprintf(buf, sizeof buf, "%-10s 0x%02x = 0x%08x (%u)", c.name.c_str(), c.addr, v, v);
    r.say(buf);
    obj[c.name] = static_cast<uint64_t>(v);
  }
  r.data["registers"] = obj;
}

void info_program(Interpreter& in, CommandResult& r) {
  const auto& p = in.session().program();
  r.say("workload " + p.workload + ": " + std::to_string(p.commands.size()) + " commands, " +
        std::to_string(p.layer_names.size()) + " layers");
  for (size_t i = 0; i < p.layer_names.size(); ++i) r.say("  layer " + std::to_string(i) + ": " + p.layer_names[i]);
  r.data["workload"] = p.workload;
  r.data["commands"] = static_cast<uint64_t>(p.commands.size());
  r.data["cycle"] = in.session().emu().cycle();
  r.data["state"] = emu::run_state_name(in.session().emu().state());
}

}  // namespace

void register_inspect_commands(Interpreter& interp) {
  declare(interp.add({"print", {"p"}, "print[/x|/d|/b] NAME | EXPR",
          "Print a signal, counter, CSR or expression",
          "NAME is a signal (load.state, tokens[2]), a PMU counter with or without pmu. "
          "(gemm.stall_mem), a CSR (STATUS, csr.RING_HEAD) or cycle. Anything else is evaluated "
          "as an expression (docs/expressions.md).",
          {"print load.state", "print/x fetch.head_q", "print gemm.active * 100 / cycles",
           "print STATUS"},
          kNeedsNothing, false, do_print}), Effect::ReadOnly, {ArgKind::Name});
  declare(interp.add({"counters", {"pmu"}, "counters [FILTER]",
          "All PMU counters with their change since the previous stop", "",
          {"counters", "counters stall"}, kNeedsNothing, false, do_counters}), Effect::ReadOnly, {ArgKind::Name, ArgKind::None});
  declare(interp.add({"x", {"examine"}, "x[/x|/i8|/u8|/i32|/u32|/x32] MEMORY ADDR [COUNT]",
          "Examine memory (dram, inp, wgt, acc, out); ADDR is a byte offset",
          "", {"x dram 0x10000", "x/i8 out 0 32", "x/i32 acc 0x40 8"}, kNeedsNothing, false,
          do_examine}), Effect::ReadOnly, {ArgKind::Memory, ArgKind::None});
  declare(interp.add({"where", {"bt"}, "where", "The command each engine is executing and its layer", "",
          {"where"}, kNeedsNothing, false,
          [](Interpreter& in, const Args&, CommandResult& r) { info_stages(in, r, true); }}),
          Effect::ReadOnly);
  declare(interp.add({"info", {"i"}, "info breakpoints|watchpoints|display|stages|check|checkpoints|signals [PATTERN]|registers|program",
          "Show breakpoints, watchpoints, displays, engine states, the golden-model check, checkpoints, signals, CSRs or the program", "",
          {"info breakpoints", "info stages", "info check", "info signals load", "info registers"},
          kNeedsNothing, false, [](Interpreter&, const Args&, CommandResult& r) {
            r.fail("info what? breakpoints, watchpoints, display, stages, check, checkpoints, "
                   "signals, registers, program");
          }}),
          Effect::ReadOnly,
          {{"breakpoints", {}, Effect::ReadOnly,
            [](Interpreter& in, const Args&, CommandResult& r) { info_breakpoints(in, r, false); },
            1},
           {"watchpoints", {}, Effect::ReadOnly,
            [](Interpreter& in, const Args&, CommandResult& r) { info_breakpoints(in, r, true); },
            2},
           // Displays live in the controlling interpreter (they print at its stops).
           {"display", {}, Effect::Changes,
            [](Interpreter& in, const Args&, CommandResult& r) { info_display(in, r); }, 2},
           {"stages", {}, Effect::ReadOnly,
            [](Interpreter& in, const Args&, CommandResult& r) { info_stages(in, r, false); }, 2},
           {"check", {}, Effect::ReadOnly,
            [](Interpreter& in, const Args&, CommandResult& r) { info_check(in, r); }},
           {"checkpoints", {}, Effect::ReadOnly,
            [](Interpreter& in, const Args&, CommandResult& r) { info_checkpoints(in, r); }, 2},
           {"signals", {ArgKind::Name, ArgKind::None}, Effect::ReadOnly,
            [](Interpreter& in, const Args& a, CommandResult& r) {
              info_signals(in, a.words.size() > 1 ? a.words[1] : "", r);
            },
            2},
           {"registers", {}, Effect::ReadOnly,
            [](Interpreter& in, const Args&, CommandResult& r) { info_registers(in, r); }, 3,
            {"csr"}},
           {"program", {}, Effect::ReadOnly,
            [](Interpreter& in, const Args&, CommandResult& r) { info_program(in, r); }, 3}});
}

}  // namespace bud::debugger
