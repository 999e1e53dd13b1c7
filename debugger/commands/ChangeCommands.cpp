// Changing state: deposit (once), force (held until release), release. Every change is recorded
// as an Intervention so that time travel re-applies it.
#include "debugger/commands/Format.h"
#include "debugger/commands/Interpreter.h"

namespace bud::debugger {

namespace {

bool is_memory(emu::Emulator& emu, const std::string& name) {
  for (const auto& m : emu.memories())
    if (m.name == name) return true;
  return false;
}

/// Resolves NAME VALUE into a signal target and value; fails with a message.
bool signal_and_value(Interpreter& in, const Args& a, const char* usage, Target& t,
                      emu::SignalValue& v, CommandResult& r) {
  if (a.words.size() != 2) {
    r.fail(std::string("usage: ") + usage);
    return false;
  }
  std::string error;
  auto target = resolve_target(in.session().emu(), a.words[0], error);
  if (!target) {
    r.fail(error);
    return false;
  }
  if (target->kind != Target::Kind::Signal) {
    r.fail(a.words[0] + " is not a writable signal");
    return false;
  }
  const auto& info = in.session().emu().signals()[target->id];
  if (!info.writable) {
    r.fail(info.name + " is an output port and cannot be written");
    return false;
  }
  auto n = parse_number(a.words[1]);
  if (!n) {
    r.fail("bad value '" + a.words[1] + "' (decimal, 0x hex or 0b binary)");
    return false;
  }
  if (info.width < 64 && (*n >> info.width) != 0) {
    r.fail("value " + a.words[1] + " does not fit in " + std::to_string(info.width) + " bits of " +
           info.name);
    return false;
  }
  t = *target;
  v.width = info.width;
  v.words[0] = *n;
  return true;
}

}  // namespace

void register_change_commands(Interpreter& interp) {
  declare(interp.add({"deposit", {"set-signal"}, "deposit SIGNAL VALUE | deposit MEMORY ADDR VALUE [BYTES]",
          "Write a value once (the design may overwrite it at the next edge)",
          "Memory deposits write BYTES (default 1, up to 8) little-endian bytes at byte offset ADDR.",
          {"deposit load.state 0", "deposit pmu.cycles 0", "deposit dram 0x10000 0x7f"},
          kNeedsNothing, false, [](Interpreter& in, const Args& a, CommandResult& r) {
            auto& s = in.session();
            if (!a.words.empty() && is_memory(s.emu(), a.words[0])) {
              if (a.words.size() < 3) {
                r.fail("usage: deposit MEMORY ADDR VALUE [BYTES]");
                return;
              }
              auto addr = parse_number(a.words[1]);
              auto val = parse_number(a.words[2]);
              auto width = a.words.size() > 3 ? parse_number(a.words[3]) : std::optional<uint64_t>(1);
              if (!addr || !val || !width || *width == 0 || *width > 8) {
                r.fail("usage: deposit MEMORY ADDR VALUE [BYTES 1..8]");
                return;
              }
              std::vector<uint8_t> bytes(*width);
              for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(*val >> (8 * i));
              if (!s.write_memory(a.words[0], *addr, bytes)) {
                r.fail("address " + hex64(*addr) + " is outside " + a.words[0]);
                return;
              }
              r.say("deposited " + hex64(*val) + " at " + a.words[0] + "+" + hex64(*addr));
              return;
            }
            Target t;
            emu::SignalValue v;
            if (!signal_and_value(in, a, "deposit SIGNAL VALUE", t, v, r)) return;
            s.deposit(t.id, t.element, v);
            r.say(t.name + " = " + format_value(s.emu().read_signal(t.id, t.element), ""));
          }}), Effect::Changes, {ArgKind::Watchable, ArgKind::None});
  declare(interp.add({"force", {}, "force SIGNAL VALUE", "Hold a signal at a value until `release`",
          "The value is re-applied after every clock edge.", {"force compute.state 0"},
          kNeedsNothing, false, [](Interpreter& in, const Args& a, CommandResult& r) {
            Target t;
            emu::SignalValue v;
            if (!signal_and_value(in, a, "force SIGNAL VALUE", t, v, r)) return;
            if (!in.session().force(t.id, t.element, v)) {
              r.fail("cannot force " + t.name + " (too many forced signals?)");
              return;
            }
            r.say("forced " + t.name + " = " + format_value(v, ""));
          }}), Effect::Changes, {ArgKind::Name, ArgKind::None});
  declare(interp.add({"release", {}, "release SIGNAL", "Stop forcing a signal", "", {"release compute.state"},
          kNeedsNothing, false, [](Interpreter& in, const Args& a, CommandResult& r) {
            if (a.words.size() != 1) {
              r.fail("usage: release SIGNAL");
              return;
            }
            std::string error;
            auto t = resolve_target(in.session().emu(), a.words[0], error);
            if (!t || t->kind != Target::Kind::Signal) {
              r.fail(t ? a.words[0] + " is not a signal" : error);
              return;
            }
            in.session().release(t->id, t->element);
            r.say("released " + t->name);
          }}), Effect::Changes, {ArgKind::Name, ArgKind::None});
}

}  // namespace bud::debugger
