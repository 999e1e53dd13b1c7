// Scripting and help: help, source, echo, set, quit.
#include "debugger/commands/Format.h"
#include "debugger/commands/Interpreter.h"

namespace bud::debugger {

void register_meta_commands(Interpreter& interp) {
  declare(interp.add({"help", {"h", "?"}, "help [COMMAND]", "List commands, or explain one with examples", "",
          {"help", "help break"}, kNeedsNothing, false,
          [](Interpreter& in, const Args& a, CommandResult& r) {
            if (a.words.empty()) {
              json::Json arr = json::Json::array();
              for (const auto& c : in.commands()) {
                std::string line = "  " + c.name;
                line.resize(20, ' ');
                r.say(line + c.summary);
                arr.push_back(c.name);
              }
              r.say("An empty line repeats step/continue/reverse-step. `help COMMAND` for details.");
              r.data["commands"] = arr;
              return;
            }
            const CommandSpec* c = in.find(a.words[0]);
            if (!c) {
              r.fail("no command '" + a.words[0] + "'");
              return;
            }
            r.say(c->usage);
            r.say("  " + c->summary);
            if (!c->details.empty()) r.say("  " + c->details);
            if (!c->aliases.empty()) {
              std::string al;
              for (const auto& x : c->aliases) al += (al.empty() ? "" : ", ") + x;
              r.say("  aliases: " + al);
            }
            if (!c->examples.empty()) {
              r.say("  examples:");
              for (const auto& e : c->examples) r.say("    " + e);
            }
            r.data["usage"] = c->usage;
          }}), Effect::ReadOnly, {ArgKind::Command, ArgKind::None});
  declare(interp.add({"source", {}, "source FILE", "Run the commands in FILE (stops at the first error)", "",
          {"source session.bud"}, kNeedsNothing, false,
          [](Interpreter& in, const Args& a, CommandResult& r) {
            if (a.words.size() != 1) {
              r.fail("usage: source FILE");
              return;
            }
            std::vector<std::pair<std::string, CommandResult>> out;
            const bool ok = in.source(a.words[0], out, true);
            json::Json arr = json::Json::array();
            for (auto& [line, res] : out) {
              r.say("(bud) " + line);
              for (auto& l : res.lines) r.say(l);
              if (!res.ok) r.say("error: " + res.error);
              if (res.stop) r.stop = res.stop;
              if (res.quit) r.quit = true;
              json::Json j = json::Json::object();
              j["command"] = line;
              j["ok"] = res.ok;
              arr.push_back(j);
            }
            r.data["results"] = arr;
            if (!ok) {
              for (auto& [line, res] : out)
                if (!res.ok) {
                  r.fail(res.error);
                  break;
                }
            }
          }}), Effect::Changes, {ArgKind::Script, ArgKind::None});
  declare(interp.add({"echo", {}, "echo TEXT", "Print TEXT (for scripts)", "",
                      {"echo layer 2 starts"}, kNeedsNothing, false,
                      [](Interpreter&, const Args& a, CommandResult& r) { r.say(a.rest); }}),
          Effect::ReadOnly);
  declare(interp.add({"set", {}, "set checkpoint-interval CYCLES", "Change a session setting", "",
                      {"set checkpoint-interval 50000"}, kNeedsNothing, false,
                      [](Interpreter&, const Args&, CommandResult& r) {
                        r.fail("usage: set checkpoint-interval CYCLES");
                      }}),
          Effect::ReadOnly,
          {{"checkpoint-interval", {ArgKind::None}, Effect::Changes,
            [](Interpreter& in, const Args& a, CommandResult& r) {
              auto n = a.words.size() == 2 ? parse_number(a.words[1]) : std::nullopt;
              if (a.words.size() != 2) return r.fail("usage: set checkpoint-interval CYCLES");
              if (!n || *n == 0)
                return r.fail("checkpoint-interval must be a positive number of cycles");
              in.session().timeline().set_interval(*n);
              r.say("automatic checkpoints every " + std::to_string(*n) + " cycles");
            }}});
  // Quitting ends the controller's session: not something an observer may do.
  declare(interp.add({"quit", {"q", "exit"}, "quit", "End the session", "", {"quit"},
                      kNeedsNothing, false,
                      [](Interpreter&, const Args&, CommandResult& r) { r.quit = true; }}),
          Effect::Changes);
}

}  // namespace bud::debugger
