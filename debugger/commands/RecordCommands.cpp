// `record start FILE` / `record stop`: write a replay packet of the cycles between the two, from
// the prompt. The debugger does not know how a run is recorded (that is bud::replay, which sits
// above the debugger): the CLI gives the interpreter a RecordBackend that does.
#include "debugger/commands/Interpreter.h"

namespace bud::debugger {

namespace {

// A subcommand's run function: the installed backend, or an error if there is none.
RunFn on_backend(void (*run)(RecordBackend&, Interpreter&, const Args&, CommandResult&)) {
  return [run](Interpreter& in, const Args& a, CommandResult& r) {
    RecordBackend* b = in.record_backend();
    if (!b) return r.fail("recording is not available in this session");
    run(*b, in, a, r);
  };
}

void record_start(RecordBackend& b, Interpreter& in, const Args& a, CommandResult& r) {
  if (a.words.size() != 2) return r.fail("usage: record start FILE | record stop");
  if (auto e = b.start(in.session(), a.words[1]); !e.empty()) return r.fail(e);
  r.say("recording to " + a.words[1] + " from cycle " + std::to_string(in.session().emu().cycle()));
  r.data["file"] = a.words[1];
  r.data["start_cycle"] = in.session().emu().cycle();
}

void record_stop(RecordBackend& b, Interpreter& in, const Args& a, CommandResult& r) {
  if (a.words.size() != 1) return r.fail("usage: record start FILE | record stop");
  std::string summary;
  if (auto e = b.stop(in.session(), summary); !e.empty()) return r.fail(e);
  r.say(summary);
  r.data["summary"] = summary;
  r.data["end_cycle"] = in.session().emu().cycle();
}

}  // namespace

void register_record_commands(Interpreter& interp) {
  declare(
      interp.add(
          {"record",
           {},
           "record start FILE | record stop",
           "Record a replay packet of this run from now until `record stop`",
           "The packet starts with a checkpoint of the current cycle and covers the cycles up to "
           "the one `record stop` is given at, re-simulated deterministically from that "
           "checkpoint. Every intervention made in between (deposit, force, release, memory "
           "writes) is in the packet at its cycle and replayed there; when they make the run "
           "leave the golden model, the packet's symptom is that stage mismatch, so `bud "
           "replay FILE` reports it as reproduced (exit 1) instead of calling the session "
           "clean. Debug it with `bud debug --packet FILE`.",
           {"record start hang.bpk", "continue", "record stop"},
           kNeedsNothing,
           false,
           on_backend([](RecordBackend&, Interpreter&, const Args&, CommandResult& r) {
             r.fail("usage: record start FILE | record stop");
           })}),
      Effect::ReadOnly,
      {{"start", {ArgKind::WriteFile, ArgKind::None}, Effect::Changes, on_backend(record_start)},
       {"stop", {}, Effect::Changes, on_backend(record_stop)}});
}

}  // namespace bud::debugger
