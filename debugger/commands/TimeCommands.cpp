// Time travel and waveforms: checkpoint, restore, goto, reverse-step, reverse-continue, wave.
#include <algorithm>

#include "debugger/commands/Format.h"
#include "debugger/commands/Interpreter.h"

namespace bud::debugger {

namespace {

void landed(Interpreter& in, StopKind kind, CommandResult& r) {
  StopInfo s;
  s.cycle = in.session().emu().cycle();
  s.reasons.push_back({kind, 0, ""});
  r.say(s.describe() + "  (re-executed " +
        std::to_string(in.session().timeline().last_resimulated()) + " cycles)");
  r.stop = s;
  r.data["resimulated"] = in.session().timeline().last_resimulated();
}

void wave_on(Interpreter& in, const Args& a, CommandResult& r) {
  auto& emu = in.session().emu();
  if (a.words.size() != 2) {
    r.fail("usage: wave on FILE.fst");
    return;
  }
  if (auto e = emu.wave_open(a.words[1]); !e.empty()) {
    r.fail(e);
    return;
  }
  r.say("tracing every cycle from " + std::to_string(emu.cycle()) + " to " + a.words[1]);
  r.data["file"] = a.words[1];
}

void wave_off(Interpreter& in, const Args&, CommandResult& r) {
  auto& emu = in.session().emu();
  if (!emu.wave_active()) {
    r.fail("no waveform is being written");
    return;
  }
  emu.wave_close();
  r.say("waveform closed at cycle " + std::to_string(emu.cycle()));
}

void wave_dump(Interpreter& in, const Args& a, CommandResult& r) {
  auto& s = in.session();
  auto& emu = s.emu();
  if (a.words.size() != 4) {
    r.fail("usage: wave dump FROM TO FILE.fst");
    return;
  }
  auto from = parse_number(a.words[1]);
  auto to = parse_number(a.words[2]);
  if (!from || !to || *from > *to) {
    r.fail("FROM and TO must be cycles with FROM <= TO");
    return;
  }
  if (emu.wave_active()) {
    r.fail("`wave off` first: a waveform is already being written");
    return;
  }
  if (s.end_cycle() && *to > *s.end_cycle()) {
    r.fail("cycle " + std::to_string(*to) + " is past the end of the run (" +
           std::to_string(*s.end_cycle()) + ")");
    return;
  }
  const uint64_t here = emu.cycle();
  if (auto e = s.goto_cycle(*from); !e.empty()) {
    r.fail(e);
    return;
  }
  if (auto e = emu.wave_open(a.words[3]); !e.empty()) {
    s.goto_cycle(here);
    r.fail(e);
    return;
  }
  auto e = s.advance_to(*to);
  emu.wave_close();
  const uint64_t reached = emu.cycle();
  s.goto_cycle(here);
  if (!e.empty()) {
    r.fail(e + " (waveform " + a.words[3] + " holds cycles " + std::to_string(*from) + ".." +
           std::to_string(reached) + ")");
    return;
  }
  r.say("wrote cycles " + std::to_string(*from) + ".." + std::to_string(*to) + " to " +
        a.words[3] + " (re-executed from a checkpoint; back at cycle " + std::to_string(here) +
        ")");
  r.data["file"] = a.words[3];
  r.data["from"] = *from;
  r.data["to"] = *to;
}

}  // namespace

void register_time_commands(Interpreter& interp) {
  declare(interp.add({"checkpoint", {"ck"}, "checkpoint [NAME]", "Save the whole state under a name",
          "Named checkpoints are kept until deleted; automatic ones are taken every interval.",
          {"checkpoint before_layer2"}, kNeedsNothing, false,
          [](Interpreter& in, const Args& a, CommandResult& r) {
            auto& t = in.session().timeline();
            std::string name = a.words.empty() ? "" : a.words[0];
            if (name.empty()) {
              int n = 1;
              while (t.has_named("ck" + std::to_string(n))) ++n;
              name = "ck" + std::to_string(n);
            }
            t.save_named(name);
            r.say("checkpoint '" + name + "' at cycle " + std::to_string(in.session().emu().cycle()));
            r.data["name"] = name;
            r.data["cycle"] = in.session().emu().cycle();
          }}), Effect::Changes);
  declare(interp.add({"restore", {}, "restore NAME", "Return to a named checkpoint", "",
          {"restore before_layer2"}, kNeedsNothing, false,
          [](Interpreter& in, const Args& a, CommandResult& r) {
            if (a.words.size() != 1) {
              r.fail("usage: restore NAME");
              return;
            }
            if (auto e = in.session().timeline().restore_named(a.words[0]); !e.empty()) {
              std::string names;
              for (const auto& c : in.session().timeline().list())
                if (!c.name.empty()) names += (names.empty() ? "" : ", ") + c.name;
              r.fail(e + (names.empty() ? " (no named checkpoints)" : " (have: " + names + ")"));
              return;
            }
            StopInfo s;
            s.cycle = in.session().emu().cycle();
            s.reasons.push_back({StopKind::Restore, 0, a.words[0]});
            r.say(s.describe());
            r.stop = s;
          }}), Effect::Changes, {ArgKind::Checkpoint, ArgKind::None});
  declare(interp.add({"goto", {"g"}, "goto CYCLE", "Travel to any cycle of this run, backward or forward",
          "Restores the nearest earlier checkpoint and re-executes deterministically; the state "
          "is bit-identical to reaching CYCLE by running forward. Breakpoints are not evaluated.",
          {"goto 1000", "goto 0"}, kNeedsNothing, false,
          [](Interpreter& in, const Args& a, CommandResult& r) {
            auto c = a.words.size() == 1 ? parse_number(a.words[0]) : std::nullopt;
            if (!c) {
              r.fail("usage: goto CYCLE");
              return;
            }
            if (auto e = in.session().goto_cycle(*c); !e.empty()) {
              r.fail(e);
              return;
            }
            landed(in, StopKind::Goto, r);
          }}), Effect::Changes);
  declare(interp.add({"reverse-step", {"rs", "rsi"}, "reverse-step [CYCLES]", "Go back CYCLES cycles (default 1)",
          "", {"reverse-step", "reverse-step 100"}, kNeedsNothing, true,
          [](Interpreter& in, const Args& a, CommandResult& r) {
            uint64_t n = 1;
            if (!a.words.empty()) {
              auto x = parse_number(a.words[0]);
              if (!x || *x == 0) {
                r.fail("expected a positive cycle count");
                return;
              }
              n = *x;
            }
            const uint64_t now = in.session().emu().cycle();
            if (now == 0) {
              r.fail("already at cycle 0");
              return;
            }
            if (auto e = in.session().goto_cycle(n > now ? 0 : now - n); !e.empty()) {
              r.fail(e);
              return;
            }
            landed(in, StopKind::ReverseStep, r);
          }}), Effect::Changes);
  declare(interp.add({"reverse-continue", {"rc"}, "reverse-continue",
          "Go back to the previous breakpoint or watchpoint hit", "", {"reverse-continue"},
          kNeedsNothing, false, [](Interpreter& in, const Args&, CommandResult& r) {
            std::string error;
            auto s = in.session().reverse_continue(error);
            if (!s) {
              r.fail(error);
              return;
            }
            r.say(s->describe());
            r.stop = *s;
          }}), Effect::Changes);
  declare(interp.add({"wave", {}, "wave on FILE | wave off | wave dump FROM TO FILE",
          "Write FST waveforms (GTKWave, Surfer): from now on, or for any past window",
          "`wave dump` re-executes the window from the nearest checkpoint with tracing on; the "
          "file holds exactly the cycles FROM..TO (time unit = 1 cycle).",
          {"wave dump 1000 1200 stall.fst", "wave on run.fst"}, kNeedsNothing, false,
          [](Interpreter&, const Args&, CommandResult& r) {
            r.fail("usage: wave on FILE | wave off | wave dump FROM TO FILE");
          }}),
          Effect::ReadOnly,
          {{"on", {ArgKind::WriteFile, ArgKind::None}, Effect::Changes, wave_on},
           {"off", {}, Effect::Changes, wave_off},
           {"dump", {ArgKind::None, ArgKind::None, ArgKind::WriteFile, ArgKind::None},
            Effect::Changes, wave_dump}});
}

}  // namespace bud::debugger
