#include "debugger/trigger/TriggerActionParser.h"

#include "debugger/expr/Compiler.h"

namespace bud::debugger {

using namespace lex;

namespace {
// Largest capture depth accepted on either side of a hit (cycles).
constexpr uint64_t kMaxCaptureDepth = uint64_t{1} << 32;
}  // namespace

std::optional<uint32_t> TriggerActionParser::local_var(const lex::Token& t, bool counter) {
  const auto& names = counter ? trigger_.counters : trigger_.flags;
  const auto& vars = counter ? trigger_.counter_vars : trigger_.flag_vars;
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == t.text) return vars[i];
  error_at(t.pos,
           std::string("unknown ") + (counter ? "counter" : "flag") + " '" + shown_token(t.text) +
               "'" +
               (names.empty() ? std::string(" (declare it with '") +
                                    (counter ? "counter" : "flag") + " " + t.text + "')"
                              : ""),
           suggest_names(t.text, names, 3));
  return std::nullopt;
}

void TriggerActionParser::parse(std::string_view line, size_t begin, size_t end, TriggerBranch& br,
                                bool machine) {
  std::optional<size_t> bad;
  auto toks = tokenize(line.substr(begin, end - begin), begin, bad);
  if (bad) return error_at(*bad, "unterminated string");
  if (toks.empty()) return error_at(end, "expected an action");
  std::vector<std::vector<lex::Token>> items(1);
  for (auto& t : toks) {
    if (!t.quoted && t.text == ",") {
      if (items.back().empty()) return error_at(t.pos, "expected an action before ','");
      items.emplace_back();
    } else {
      items.back().push_back(std::move(t));
    }
  }
  if (items.back().empty()) return error_at(end, "expected an action after ','");
  static const std::vector<std::string> names = {"halt",   "capture", "checkpoint", "snapshot",
                                                 "record", "log",     "rearm",      "incr",
                                                 "reset",  "set",     "clear",      "goto"};
  for (const auto& it : items) {
    const lex::Token& w = it[0];
    TriggerAction a;
    a.loc = loc(w.pos);
    auto extra = [&](size_t allowed) {
      if (it.size() > allowed) {
        error_at(it[allowed].pos, "unexpected '" + shown_token(it[allowed].text) + "' after '" +
                                      shown_token(w.text) + "'");
        return true;
      }
      return false;
    };
    if (w.quoted) return error_at(w.pos, "expected an action, not a string");
    if (w.text == "halt" || w.text == "snapshot" || w.text == "rearm") {
      if (extra(1)) return;
      a.kind = w.text == "halt"       ? ActionKind::Halt
               : w.text == "snapshot" ? ActionKind::Snapshot
                                      : ActionKind::Rearm;
    } else if (w.text == "capture") {
      a.kind = ActionKind::Capture;
      a.pre = 1000;
      a.post = 1000;
      for (size_t i = 1; i < it.size(); i += 2) {
        if (it[i].text != "pre" && it[i].text != "post")
          return error_at(it[i].pos, "expected 'pre N' or 'post N' after 'capture'");
        if (i + 1 >= it.size()) return error_at(end, "expected a cycle count");
        auto n = parse_uint(it[i + 1].text);
        if (!n || *n > kMaxCaptureDepth)
          return error_at(it[i + 1].pos, "expected a cycle count from 0 to 4294967296");
        (it[i].text == "pre" ? a.pre : a.post) = *n;
      }
    } else if (w.text == "checkpoint" || w.text == "record") {
      a.kind = w.text == "checkpoint" ? ActionKind::Checkpoint : ActionKind::Record;
      if (extra(2)) return;
      if (it.size() == 2) a.text = it[1].text;
    } else if (w.text == "log") {
      a.kind = ActionKind::Log;
      if (it.size() != 2 || !it[1].quoted)
        return error_at(it.size() > 1 ? it[1].pos : end, "expected log \"MESSAGE\"");
      a.text = it[1].text;
    } else if (w.text == "incr" || w.text == "reset" || w.text == "set" || w.text == "clear" ||
               w.text == "goto") {
      if (!machine)
        return error_at(
            w.pos, "'" + shown_token(w.text) + "' is only allowed in a state machine's 'then'");
      if (it.size() < 2)
        return error_at(end, "expected a name after '" + shown_token(w.text) + "'");
      a.text = it[1].text;
      if (w.text == "goto") {
        if (extra(2)) return;
        a.kind = ActionKind::Goto;
        // The branch is appended to the current state after its actions are parsed.
        pending_gotos_.push_back({trigger_.states.size() - 1,
                                  trigger_.states.back().branches.size(), br.actions.size(),
                                  it[1].text, loc(it[1].pos)});
      } else if (w.text == "incr" || w.text == "reset") {
        a.kind = w.text == "incr" ? ActionKind::Incr : ActionKind::Reset;
        if (extra(w.text == "incr" ? 3 : 2)) return;
        auto v = local_var(it[1], true);
        if (!v) return;
        a.var = *v;
        if (it.size() == 3) {
          auto n = parse_uint(it[2].text);
          if (!n || *n > INT64_MAX) return error_at(it[2].pos, "expected an amount");
          a.amount = static_cast<int64_t>(*n);
        }
      } else {
        a.kind = w.text == "set" ? ActionKind::SetFlag : ActionKind::ClearFlag;
        if (extra(2)) return;
        auto v = local_var(it[1], false);
        if (!v) return;
        a.var = *v;
      }
    } else {
      return error_at(w.pos, "unknown action '" + shown_token(w.text) + "'",
                      suggest_names(w.text, names, 3));
    }
    br.actions.push_back(std::move(a));
  }
}

}  // namespace bud::debugger
