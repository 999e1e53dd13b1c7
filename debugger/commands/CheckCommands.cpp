#include "debugger/commands/CheckCommands.h"

#include "debugger/session/StageCheck.h"

namespace bud::debugger {

void break_on_off(Interpreter& in, const Args& a, CommandResult& r) {
  const bool on = a.words[0] == "on";
  if (a.words.size() != 2 || a.words[1] != "mismatch") {
    r.fail("usage: break on mismatch | break off mismatch");
    return;
  }
  auto* check = in.session().stage_check();
  if (!check) {
    r.fail("this session has no golden-model check");
    return;
  }
  check->set_break(on);
  r.say(on ? "a divergence from the golden model stops the run"
           : "divergences from the golden model are checked but do not stop the run");
  r.data["break_on_mismatch"] = on;
}

void info_check(Interpreter& in, CommandResult& r) {
  auto* check = in.session().stage_check();
  if (!check) {
    r.fail("this session has no golden-model check");
    return;
  }
  const uint64_t now = in.session().emu().cycle();
  r.say("golden-model check at cycle " + std::to_string(now) + " (break on mismatch " +
        (check->breaks() ? "on" : "off") + "):");
  auto stages = json::Json::array();
  for (const auto& s : check->status()) {
    std::string verdict;
    if (!s.stage)
      verdict = s.diverged ? "MISMATCH" : s.final ? "match" : "pending (the run has not finished)";
    else
      verdict = s.diverged ? "MISMATCH" : "match";
    char head[64];
    std::snprintf(head, sizeof head, "  %-7s %-8s", s.name(), verdict.c_str());
    std::string line = head;
    if (s.stage) line += " " + std::to_string(s.checked) + " transactions checked";
    if (s.diverged) line += ": " + s.first;
    r.say(line);
    auto j = json::Json::object();
    j["stage"] = s.name();
    j["status"] = s.diverged ? "mismatch" : (!s.stage && !s.final) ? "pending" : "match";
    j["checked"] = s.checked;
    if (s.diverged) j["first"] = s.first;
    stages.push_back(std::move(j));
  }
  r.data["cycle"] = now;
  r.data["break_on_mismatch"] = check->breaks();
  r.data["stages"] = std::move(stages);
}

}  // namespace bud::debugger
