#include "debugger/trigger/TriggerParser.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "debugger/expr/EmulatorResolver.h"
#include "debugger/trigger/TriggerResolver.h"
#include "emu/isa/Isa.h"

namespace bud::debugger {

using namespace lex;

TriggerParser::TriggerParser(std::string_view text, const std::string& file, const TriggerEnv& env)
    : text_(text), file_(file), env_(env) {
  prog_.file = file;
  for (uint32_t i = 0; i < kNumBuiltinVars; ++i) prog_.var_names.emplace_back(kBuiltinNames[i]);
}

TriggerParse TriggerParser::run() {
  size_t start = 0;
  uint32_t line_no = 0;
  while (start <= text_.size()) {
    size_t end = text_.find('\n', start);
    if (end == std::string_view::npos) end = text_.size();
    ++line_no;
    std::string_view line = text_.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    line_ = line_no;
    do_line(strip_comment(line));
    if (end == text_.size()) break;
    start = end + 1;
  }
  if (cur_) {
    error(cur_->loc, "trigger '" + shown_token(cur_->name) + "' has no 'end'");
    finish_trigger();
  }
  if (history_error_ && history_need_ > history_bytes_) {
    auto& m = errors_[history_error_ - 1].message;
    m += " (the whole file needs " + std::to_string(history_need_) + " bytes)";
  }
  TriggerParse out;
  out.errors = std::move(errors_);
  out.unresolved_layers = std::move(unresolved_layers_);
  if (out.errors.empty()) out.program = std::move(prog_);
  return out;
}

SourceLoc TriggerParser::loc(size_t pos) const {
  return SourceLoc{file_, line_, static_cast<uint32_t>(pos + 1)};
}

void TriggerParser::error(const SourceLoc& at, std::string message,
                          std::vector<std::string> suggestions) {
  errors_.push_back({at, std::move(message), std::move(suggestions)});
}

void TriggerParser::error_at(size_t pos, std::string message,
                             std::vector<std::string> suggestions) {
  error(loc(pos), std::move(message), std::move(suggestions));
}

void TriggerParser::do_line(std::string_view line) {
  const size_t b = skip_space(line, 0);
  if (b >= line.size()) return;
  const size_t e = word_end(line, b);
  const std::string_view kw = line.substr(b, e - b);
  if (kw == "def") return do_def(line, e);
  if (kw == "trigger") return do_trigger(line, e);
  if (kw == "end") {
    if (!cur_) return error_at(b, "'end' without a trigger");
    if (skip_space(line, e) < line.size())
      error_at(skip_space(line, e), "unexpected text after 'end'");
    return finish_trigger();
  }
  static const std::vector<std::string> inner = {"when", "do",    "shots", "counter",
                                                 "flag", "state", "if",    "else"};
  if (std::find(inner.begin(), inner.end(), kw) != inner.end()) {
    if (!cur_)
      return error_at(b, "'" + shown_token(kw) +
                             "' outside a trigger (start one with "
                             "'trigger NAME')");
    if (kw == "when") return do_when(line, e, std::string_view::npos);
    if (kw == "do") return do_do(line, e);
    if (kw == "shots") return do_shots(line, e, line.size());
    if (kw == "counter" || kw == "flag") return do_vars(line, e, kw == "counter");
    if (kw == "state") return do_state(line, e);
    if (kw == "if") return do_if(line, e);
    return do_else(line, e);
  }
  std::vector<std::string> words = {"def", "trigger", "end"};
  if (cur_) words.insert(words.end(), inner.begin(), inner.end());
  error_at(b, "unknown statement '" + shown_token(kw) + "'", suggest_names(kw, words, 3));
}

void TriggerParser::do_def(std::string_view line, size_t after) {
  if (cur_) return error_at(skip_space(line, 0), "'def' inside a trigger (define events first)");
  std::optional<size_t> bad;
  auto t = tokenize(line.substr(after), after, bad);
  if (bad) return error_at(*bad, "unterminated string");
  if (t.empty() || !is_identifier(t[0].text))
    return error_at(t.empty() ? line.size() : t[0].pos, "expected an event name after 'def'");
  if (t.size() < 2 || t[1].text != "=")
    return error_at(t.size() < 2 ? line.size() : t[1].pos, "expected '=' after the event name");
  if (t.size() < 3) return error_at(line.size(), "expected 'dispatch' or 'every'");
  if (!check_new_name(t[0].text, t[0].pos, true)) return;
  EventDef ev;
  ev.name = t[0].text;
  ev.loc = loc(t[0].pos);
  if (t[2].text == "dispatch") {
    ev.kind = EventDef::Kind::Dispatch;
    size_t i = 3;
    if (i < t.size() && t[i].text != "index" && t[i].text != "layer") {
      auto op = isa::parse_opcode(t[i].text);
      if (!op)
        return error_at(
            t[i].pos, "unknown opcode '" + shown_token(t[i].text) + "'",
            suggest_names(t[i].text, {"LOAD", "GEMM", "POST", "STORE", "SYNC", "END"}, 3));
      ev.opcode = static_cast<uint8_t>(*op);
      ++i;
    }
    while (i < t.size()) {
      const std::string& w = t[i].text;
      if ((w == "index" || w == "layer") && i + 1 >= t.size())
        return error_at(line.size(), "expected a value after '" + w + "'");
      if (w == "index") {
        auto n = parse_uint(t[i + 1].text);
        if (!n || *n > UINT32_MAX) return error_at(t[i + 1].pos, "expected a command index");
        ev.cmd_id = static_cast<uint32_t>(*n);
      } else if (w == "layer") {
        if (!resolve_layer(t[i + 1], ev)) return;
      } else {
        return error_at(t[i].pos, "unexpected '" + w + "' (expected 'index N' or 'layer L')");
      }
      i += 2;
    }
  } else if (t[2].text == "every") {
    ev.kind = EventDef::Kind::Every;
    if (t.size() != 5)
      return error_at(t.size() < 5 ? line.size() : t[5].pos,
                      "expected 'every N COUNTER' (e.g. every 1000 retired_gemm)");
    auto n = parse_uint(t[3].text);
    if (!n || *n == 0) return error_at(t[3].pos, "the period must be a positive integer");
    ev.period = *n;
    EmulatorResolver r(*env_.emu);
    auto ref = r.resolve(t[4].text, std::nullopt);
    if (!ref)
      return error_at(t[4].pos, "unknown counter or signal '" + shown_token(t[4].text) + "'",
                      suggest_names(t[4].text, r.names(), 3));
    if (ref->elements > 1)
      return error_at(t[4].pos,
                      "'" + shown_token(t[4].text) + "' is an array; 'every' needs a scalar");
    ev.source = *ref;
    ev.source_name = t[4].text;
  } else {
    return error_at(t[2].pos, "unknown event kind '" + shown_token(t[2].text) + "'",
                    suggest_names(t[2].text, {"dispatch", "every"}, 2));
  }
  ev.var = new_var(ev.name);
  file_vars_.emplace_back(ev.name, ev.var);
  prog_.events.push_back(std::move(ev));
}

bool TriggerParser::resolve_layer(const Token& tok, EventDef& ev) {
  if (auto n = parse_uint(tok.text)) {
    if (*n > UINT16_MAX) {
      error_at(tok.pos, "layer number out of range");
      return false;
    }
    ev.layer = static_cast<uint32_t>(*n);
    return true;
  }
  ev.layer_name = tok.text;
  if (!env_.layer_names) {
    unresolved_layers_.emplace_back(tok.text, loc(tok.pos));
    return true;
  }
  const auto& names = *env_.layer_names;
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == tok.text) {
      ev.layer = static_cast<uint32_t>(i);
      return true;
    }
  error_at(tok.pos, "unknown layer '" + shown_token(tok.text) + "'",
           suggest_names(tok.text, names, 3));
  return false;
}

bool TriggerParser::check_new_name(const std::string& name, size_t pos, bool file_scope) {
  if (std::find(keywords().begin(), keywords().end(), name) != keywords().end() ||
      std::find(builtin_var_names().begin(), builtin_var_names().end(), name) !=
          builtin_var_names().end()) {
    error_at(pos, "'" + shown_token(name) + "' is a reserved word");
    return false;
  }
  EmulatorResolver r(*env_.emu);
  if (r.resolve(name, std::nullopt)) {
    error_at(pos, "'" + shown_token(name) + "' is already a design signal or counter");
    return false;
  }
  for (const auto& [n, slot] : file_vars_)
    if (n == name) {
      error_at(pos, "'" + shown_token(name) + "' is already defined");
      return false;
    }
  if (!file_scope)
    for (const auto& [n, slot] : local_vars_)
      if (n == name) {
        error_at(pos, "'" + shown_token(name) + "' is already defined in this trigger");
        return false;
      }
  return true;
}

uint32_t TriggerParser::new_var(const std::string& name) {
  prog_.var_names.push_back(name);
  return static_cast<uint32_t>(prog_.var_names.size() - 1);
}

void TriggerParser::do_trigger(std::string_view line, size_t after) {
  if (cur_) {
    error(cur_->loc, "trigger '" + shown_token(cur_->name) + "' has no 'end'");
    finish_trigger();
  }
  const size_t nb = skip_space(line, after);
  const size_t ne = std::min(word_end(line, nb), line.size());
  const std::string name(line.substr(nb, ne - nb));
  if (name.empty()) return error_at(line.size(), "expected a trigger name");
  if (prog_.triggers.size() >= env_.limits.max_triggers && !too_many_) {
    too_many_ = true;
    error_at(nb, "more than " + std::to_string(env_.limits.max_triggers) +
                     " triggers in one file (the limit of the trigger language)");
  }
  cur_.emplace();
  trigger_errors_ = errors_.size();
  cur_->name = name;
  cur_->loc = loc(nb);
  local_vars_.clear();
  pending_gotos_.clear();
  cur_->state_cycles_var = new_var(name + ".state_cycles");
  local_vars_.emplace_back("state_cycles", cur_->state_cycles_var);
  if (!is_trigger_name(name))
    error_at(nb, "bad trigger name '" + shown_token(name) + "' (letters, digits, '_' and '-')");
  for (const auto& t : prog_.triggers)
    if (t.name == name) error_at(nb, "trigger '" + shown_token(name) + "' is already defined");
  size_t i = skip_space(line, ne);
  const size_t when = find_word(line, "when", i);
  const size_t head_end = when == std::string_view::npos ? line.size() : when;
  if (i < head_end) {
    const size_t we = word_end(line, i);
    if (line.substr(i, we - i) == "shots") {
      do_shots(line, we, head_end);
    } else {
      error_at(i, "unexpected '" + shown_token(line.substr(i, we - i)) +
                      "' (expected 'shots K' or 'when COND do ACTIONS')");
    }
  }
  if (when != std::string_view::npos) {
    const size_t d = find_word(line, "do", when + 4);
    if (d == std::string_view::npos) {
      error_at(line.size(), "expected 'do ACTIONS' after the condition");
      cur_.reset();
      return;
    }
    do_when(line, when + 4, d);
    do_do(line, d + 2);
    finish_trigger();  // the one-line form needs no 'end'
  }
}

void TriggerParser::do_shots(std::string_view line, size_t after, size_t end) {
  const size_t b = skip_space(line, after);
  const size_t e = std::min(word_end(line, b), end);
  const std::string_view w = line.substr(b, e - b);
  if (w == "all") {
    cur_->shots.reset();
  } else if (auto n = parse_uint(w); n && *n > 0) {
    cur_->shots = *n;
  } else {
    return error_at(b, "expected a positive number of shots or 'all'");
  }
  if (skip_space(line, e) < end) error_at(skip_space(line, e), "unexpected text after 'shots'");
}

void TriggerParser::history_error(size_t begin, const CompileError& e) {
  const TriggerLimits& lim = env_.limits;
  history_need_ += e.history_bytes;
  if (history_error_) return;
  const size_t file_need = history_bytes_ + e.history_bytes;
  const bool session = file_need <= lim.max_file_history_bytes;
  std::string m = "trigger '" + shown_token(cur_->name) + "': its condition needs " +
                  std::to_string(e.history_bytes) + " bytes of history";
  if (session)
    m += "; with the " + std::to_string(env_.session_history_bytes + history_bytes_) +
         " bytes already loaded the session would need " +
         std::to_string(env_.session_history_bytes + file_need) +
         ", more than the session limit of " + std::to_string(lim.max_session_history_bytes) +
         " bytes (--max-session-trigger-history)";
  else
    m += "; the file would need " + std::to_string(file_need) + " bytes, more than the limit of " +
         std::to_string(lim.max_file_history_bytes) + " bytes per file (--max-trigger-history)";
  error_at(begin, std::move(m));
  history_error_ = errors_.size();
  history_need_ = file_need;
}

int TriggerParser::compile_cond(std::string_view line, size_t begin, size_t end) {
  begin = skip_space(line, begin);
  while (end > begin && std::isspace(static_cast<unsigned char>(line[end - 1]))) --end;
  if (begin >= end) {
    error_at(begin, "expected a condition");
    return -1;
  }
  const std::string_view text = line.substr(begin, end - begin);
  TriggerResolver resolver(*env_.emu, file_vars_, local_vars_);
  const TriggerLimits& lim = env_.limits;
  // What is left of the per-file and the per-session history budgets (nothing is allocated
  // for a condition past them).
  const size_t session_used = env_.session_history_bytes + history_bytes_;
  const size_t file_left =
      lim.max_file_history_bytes > history_bytes_ ? lim.max_file_history_bytes - history_bytes_ : 0;
  const size_t session_left = lim.max_session_history_bytes > session_used
                                  ? lim.max_session_history_bytes - session_used
                                  : 0;
  CompileLimits cl;
  cl.max_history_bytes = std::min(file_left, session_left);
  cl.max_nodes = lim.max_expression_nodes;
  auto r = compile(text, resolver, cl);
  if (!r) {
    if (r.error.history_bytes) return history_error(begin, r.error), -1;
    error_at(begin + r.error.column - 1, r.error.message, r.error.suggestions);
    return -1;
  }
  history_bytes_ += r.expr->memory_bytes();
  TriggerCondition c;
  c.expr = std::move(*r.expr);
  c.text = c.expr.to_string();
  c.loc = loc(begin);
  cur_->conds.push_back(std::move(c));
  return static_cast<int>(cur_->conds.size() - 1);
}

void TriggerParser::do_when(std::string_view line, size_t after, size_t end) {
  if (end == std::string_view::npos) end = line.size();
  if (cur_->machine) return error_at(skip_space(line, 0), "'when' in a state machine (use 'if')");
  if (!cur_->states.empty())
    return error_at(skip_space(line, 0), "a trigger has one 'when' (combine with && or ||)");
  const int c = compile_cond(line, after, end);
  TriggerState s;
  s.name = "armed";
  s.loc = loc(skip_space(line, 0));
  TriggerBranch br;
  br.cond = c < 0 ? 0 : c;
  br.loc = s.loc;
  s.branches.push_back(std::move(br));
  cur_->states.push_back(std::move(s));
  has_when_ = true;
}

void TriggerParser::do_do(std::string_view line, size_t after) {
  if (cur_->machine) return error_at(skip_space(line, 0), "'do' in a state machine (use 'then')");
  if (!has_when_) return error_at(skip_space(line, 0), "'do' before 'when'");
  auto& br = cur_->states.back().branches.back();
  if (!br.actions.empty()) return error_at(skip_space(line, 0), "a trigger has one 'do' line");
  parse_actions(line, after, line.size(), br, false);
}

void TriggerParser::do_vars(std::string_view line, size_t after, bool counter) {
  if (!cur_->states.empty())
    return error_at(
        skip_space(line, 0),
        std::string("declare ") + (counter ? "counters" : "flags") + " before the first state");
  std::optional<size_t> bad;
  auto t = tokenize(line.substr(after), after, bad);
  if (bad) return error_at(*bad, "unterminated string");
  if (t.empty()) return error_at(line.size(), "expected a name");
  for (size_t i = 0; i < t.size(); ++i) {
    if (i % 2 == 1) {
      if (t[i].text != ",") return error_at(t[i].pos, "expected ',' between names");
      continue;
    }
    if (!is_identifier(t[i].text)) return error_at(t[i].pos, "expected a name");
    if (!check_new_name(t[i].text, t[i].pos, false)) continue;
    const uint32_t v = new_var(cur_->name + "." + t[i].text);
    local_vars_.emplace_back(t[i].text, v);
    (counter ? cur_->counters : cur_->flags).push_back(t[i].text);
    (counter ? cur_->counter_vars : cur_->flag_vars).push_back(v);
  }
}

void TriggerParser::do_state(std::string_view line, size_t after) {
  if (has_when_) return error_at(skip_space(line, 0), "'state' in a trigger that has 'when'");
  cur_->machine = true;
  const size_t b = skip_space(line, after);
  const size_t e = word_end(line, b);
  const std::string name(line.substr(b, e - b));
  if (!is_identifier(name)) return error_at(b, "expected a state name");
  if (skip_space(line, e) < line.size())
    error_at(skip_space(line, e), "unexpected text after the state name");
  for (const auto& s : cur_->states)
    if (s.name == name) return error_at(b, "state '" + shown_token(name) + "' is already defined");
  TriggerState s;
  s.name = name;
  s.loc = loc(b);
  cur_->states.push_back(std::move(s));
}

void TriggerParser::do_if(std::string_view line, size_t after) {
  if (has_when_ || cur_->states.empty())
    return error_at(skip_space(line, 0), "'if' outside a state (start one with 'state NAME')");
  const size_t then = find_word(line, "then", after);
  if (then == std::string_view::npos) return error_at(line.size(), "expected 'then ACTIONS'");
  TriggerBranch br;
  br.loc = loc(skip_space(line, 0));
  br.cond = compile_cond(line, after, then);
  if (br.cond < 0) return;
  parse_actions(line, then + 4, line.size(), br, true);
  cur_->states.back().branches.push_back(std::move(br));
}

void TriggerParser::do_else(std::string_view line, size_t after) {
  if (has_when_ || cur_->states.empty())
    return error_at(skip_space(line, 0), "'else' outside a state");
  TriggerBranch br;
  br.loc = loc(skip_space(line, 0));
  br.cond = -1;
  parse_actions(line, after, line.size(), br, true);
  cur_->states.back().branches.push_back(std::move(br));
}

void TriggerParser::parse_actions(std::string_view line, size_t begin, size_t end,
                                  TriggerBranch& br, bool machine) {
  TriggerActionParser(file_, line_, *cur_, pending_gotos_, errors_)
      .parse(line, begin, end, br, machine);
}

void TriggerParser::finish_trigger() {
  if (!cur_) return;
  TriggerDef& t = *cur_;
  if (t.states.empty()) {
    error(t.loc, "trigger '" + t.name + "' needs 'when COND' and 'do ACTIONS', or states");
  } else if (!t.machine && t.states[0].branches[0].actions.empty() &&
             errors_.size() == trigger_errors_) {  // not when the actions had errors
    error(t.loc, "trigger '" + t.name + "' has no 'do ACTIONS'");
  }
  // Branches hold pointers into `states`, which is complete now: resolve the gotos.
  std::vector<std::string> state_names;
  for (const auto& s : t.states) state_names.push_back(s.name);
  for (auto& g : pending_gotos_) {
    auto it = std::find(state_names.begin(), state_names.end(), g.name);
    if (it == state_names.end()) {
      error(g.loc, "unknown state '" + shown_token(g.name) + "'",
            suggest_names(g.name, state_names, 3));
      continue;
    }
    auto& branches = t.states[g.state].branches;
    if (g.branch < branches.size() && g.action < branches[g.branch].actions.size())
      branches[g.branch].actions[g.action].target = static_cast<uint32_t>(it - state_names.begin());
  }
  for (auto& s : t.states)
    for (auto& b : s.branches)
      for (const auto& a : b.actions)
        if (a.kind == ActionKind::Goto) b.target = static_cast<int>(a.target);
  prog_.triggers.push_back(std::move(t));
  cur_.reset();
  has_when_ = false;
  pending_gotos_.clear();
  local_vars_.clear();
}

}  // namespace bud::debugger
