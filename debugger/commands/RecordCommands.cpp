// `record start FILE` / `record stop`: write a replay packet of the cycles between the two, from
// the prompt. The debugger does not know how a run is recorded (that is bud::replay, which sits
// above the debugger): the CLI gives the interpreter a RecordBackend that does.
#include "debugger/commands/Interpreter.h"

namespace bud::debugger {

void register_record_commands(Interpreter& interp) {
  set_completion(interp.add(
      {"record",
       {},
       "record start FILE | record stop",
       "Record a replay packet of this run from now until `record stop`",
       "The packet starts with a checkpoint of the current cycle and covers the cycles up to "
       "the one `record stop` is given at (re-simulated deterministically from that "
       "checkpoint; interventions made in between are not part of it). Replay it with "
       "`bud replay FILE`; debug it with `bud debug --packet FILE`.",
       {"record start hang.bpk", "continue", "record stop"},
       kNeedsNothing,
       false,
       [](Interpreter& in, const Args& a, CommandResult& r) {
         RecordBackend* b = in.record_backend();
         if (!b) {
           r.fail("recording is not available in this session");
           return;
         }
         const std::string sub = a.words.empty() ? "" : a.words[0];
         if (sub == "start" && a.words.size() == 2) {
           if (auto e = b->start(in.session(), a.words[1]); !e.empty()) {
             r.fail(e);
             return;
           }
           r.say("recording to " + a.words[1] + " from cycle " +
                 std::to_string(in.session().emu().cycle()));
           r.data["file"] = a.words[1];
           r.data["start_cycle"] = in.session().emu().cycle();
         } else if (sub == "stop" && a.words.size() == 1) {
           std::string summary;
           if (auto e = b->stop(in.session(), summary); !e.empty()) {
             r.fail(e);
             return;
           }
           r.say(summary);
           r.data["summary"] = summary;
           r.data["end_cycle"] = in.session().emu().cycle();
         } else {
           r.fail("usage: record start FILE | record stop");
         }
       }}), {{"start", {ArgKind::File, ArgKind::None}}, {"stop", {}}}, {});
}

}  // namespace bud::debugger
