#include "debugger/trigger/TriggerFile.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <sstream>

#include "debugger/expr/Compiler.h"
#include "debugger/expr/EmulatorResolver.h"
#include "emu/isa/Isa.h"

namespace bud::debugger {

namespace {

// Largest capture depth accepted on either side of a hit (cycles).
constexpr uint64_t kMaxCaptureDepth = uint64_t{1} << 32;

const char* const kBuiltinNames[kNumBuiltinVars] = {
    "progress", "since_progress", "assertion", "hang", "error", "finished", "mismatch"};

const std::vector<std::string>& keywords() {
  static const std::vector<std::string> k = {
      "def",  "trigger", "when",  "do",  "shots",    "counter",     "flag",  "state",
      "if",   "then",    "else",  "end", "dispatch", "every",       "index", "layer",
      "goto", "incr",    "reset", "set", "clear",    "state_cycles"};
  return k;
}

bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool is_identifier(std::string_view s) {
  if (s.empty() || !is_ident_start(s[0])) return false;
  return std::all_of(s.begin(), s.end(), is_ident_char);
}

// Trigger names may also contain '-' and '.' (they name files of captures).
bool is_trigger_name(std::string_view s) {
  if (s.empty() || !is_ident_start(s[0])) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return is_ident_char(c) || c == '-'; });
}

std::optional<uint64_t> parse_uint(std::string_view s) {
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0])) || s.back() == '_')
    return std::nullopt;
  uint64_t v = 0;
  char prev = 0;
  for (char c : s) {
    if (c == '_') {
      if (prev == '_') return std::nullopt;
      prev = c;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return std::nullopt;
    v = v * 10 + d;
    prev = c;
  }
  return v;
}

std::string join_suggestions(const std::vector<std::string>& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += i + 1 == s.size() ? " or " : ", ";
    out += s[i];
  }
  return out;
}

// One token of a line: a word, a quoted string or a punctuation character, with its 0-based
// byte offset in the line.
struct Token {
  std::string text;
  size_t pos = 0;
  bool quoted = false;
};

// Splits `s` (a part of a line starting at byte `base`) into tokens. Words run until whitespace,
// ',' or '='. A quote starts a string up to the next unescaped quote; `bad` receives the offset of
// an unterminated one.
std::vector<Token> tokenize(std::string_view s, size_t base, std::optional<size_t>& bad) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == ',' || c == '=') {
      out.push_back({std::string(1, c), base + i, false});
      ++i;
    } else if (c == '"') {
      std::string text;
      size_t j = i + 1;
      while (j < s.size() && s[j] != '"') {
        if (s[j] == '\\' && j + 1 < s.size()) ++j;
        text += s[j++];
      }
      if (j >= s.size()) {
        bad = base + i;
        return out;
      }
      out.push_back({text, base + i, true});
      i = j + 1;
    } else {
      size_t j = i;
      while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j])) && s[j] != ',' &&
             s[j] != '=' && s[j] != '"')
        ++j;
      out.push_back({std::string(s.substr(i, j - i)), base + i, false});
      i = j;
    }
  }
  return out;
}

// Byte offset of the first occurrence of `word` as a whole word at parenthesis depth 0 and outside
// quotes, at or after `from`; npos if none.
size_t find_word(std::string_view line, std::string_view word, size_t from) {
  int depth = 0;
  bool quoted = false;
  for (size_t i = from; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        quoted = false;
      continue;
    }
    if (c == '"')
      quoted = true;
    else if (c == '(' || c == '[')
      ++depth;
    else if (c == ')' || c == ']')
      --depth;
    else if (depth == 0 && line.compare(i, word.size(), word) == 0 &&
             (i == 0 || !is_ident_char(line[i - 1]) || line[i - 1] == '.') &&
             (i + word.size() >= line.size() || !is_ident_char(line[i + word.size()])))
      return i;
  }
  return std::string_view::npos;
}

// Resolves the names one trigger's conditions may use: its own counters, flags and
// `state_cycles`, the file's events, the built-in variables, then the design (EmulatorResolver).
class TriggerResolver final : public NameResolver {
 public:
  TriggerResolver(const emu::Emulator& emu,
                  const std::vector<std::pair<std::string, uint32_t>>& file_vars,
                  const std::vector<std::pair<std::string, uint32_t>>& local_vars)
      : base_(emu), file_vars_(file_vars), local_vars_(local_vars) {}

  std::optional<Ref> resolve(std::string_view name, std::optional<uint32_t> index) override {
    for (const auto* table : {&local_vars_, &file_vars_})
      for (const auto& [n, slot] : *table)
        if (n == name) {
          if (index) return std::nullopt;
          return Ref{RefKind::Other, slot, 0, 1, 64};
        }
    for (uint32_t i = 0; i < kNumBuiltinVars; ++i)
      if (name == kBuiltinNames[i]) {
        if (index) return std::nullopt;
        return Ref{RefKind::Other, i, 0, 1, 64};
      }
    return base_.resolve(name, index);
  }
  std::vector<std::string> names() const override {
    std::vector<std::string> out = base_.names();
    for (const auto* table : {&local_vars_, &file_vars_})
      for (const auto& [n, slot] : *table) out.push_back(n);
    for (uint32_t i = 0; i < kNumBuiltinVars; ++i) out.emplace_back(kBuiltinNames[i]);
    return out;
  }

 private:
  EmulatorResolver base_;
  const std::vector<std::pair<std::string, uint32_t>>& file_vars_;
  const std::vector<std::pair<std::string, uint32_t>>& local_vars_;
};

class Parser {
 public:
  Parser(std::string_view text, const std::string& file, const TriggerEnv& env)
      : text_(text), file_(file), env_(env) {
    prog_.file = file;
    for (uint32_t i = 0; i < kNumBuiltinVars; ++i) prog_.var_names.emplace_back(kBuiltinNames[i]);
  }

  TriggerParse run() {
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

 private:
  SourceLoc loc(size_t pos) const {
    return SourceLoc{file_, line_, static_cast<uint32_t>(pos + 1)};
  }
  void error(const SourceLoc& at, std::string message, std::vector<std::string> suggestions = {}) {
    errors_.push_back({at, std::move(message), std::move(suggestions)});
  }
  void error_at(size_t pos, std::string message, std::vector<std::string> suggestions = {}) {
    error(loc(pos), std::move(message), std::move(suggestions));
  }

  static std::string_view strip_comment(std::string_view line) {
    bool quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
      if (quoted) {
        if (line[i] == '\\')
          ++i;
        else if (line[i] == '"')
          quoted = false;
      } else if (line[i] == '"') {
        quoted = true;
      } else if (line[i] == '#') {
        return line.substr(0, i);
      }
    }
    return line;
  }

  static size_t skip_space(std::string_view line, size_t i) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    return i;
  }
  static size_t word_end(std::string_view line, size_t i) {
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    return i;
  }

  void do_line(std::string_view line) {
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

  // def NAME = dispatch [OPCODE] [index N] [layer L]  |  def NAME = every N QUANTITY
  void do_def(std::string_view line, size_t after) {
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

  bool resolve_layer(const Token& tok, EventDef& ev) {
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

  // Names of events, triggers' variables and states must not hide design names or keywords.
  bool check_new_name(const std::string& name, size_t pos, bool file_scope) {
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

  uint32_t new_var(const std::string& name) {
    prog_.var_names.push_back(name);
    return static_cast<uint32_t>(prog_.var_names.size() - 1);
  }

  // trigger NAME [shots K|all] [when COND do ACTIONS]
  void do_trigger(std::string_view line, size_t after) {
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

  void do_shots(std::string_view line, size_t after, size_t end) {
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

  // A condition whose history does not fit what is left of the file's or the session's budget.
  // One error names the first trigger past the limit, its need and the total; the triggers after
  // it only add to the total that error reports (history_need_).
  void history_error(size_t begin, const CompileError& e) {
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
      m += "; the file would need " + std::to_string(file_need) +
           " bytes, more than the limit of " + std::to_string(lim.max_file_history_bytes) +
           " bytes per file (--max-trigger-history)";
    error_at(begin, std::move(m));
    history_error_ = errors_.size();
    history_need_ = file_need;
  }

  // Compiles the expression in line[begin, end) and returns its condition index, or -1.
  int compile_cond(std::string_view line, size_t begin, size_t end) {
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
    const size_t file_left = lim.max_file_history_bytes > history_bytes_
                                 ? lim.max_file_history_bytes - history_bytes_
                                 : 0;
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

  void do_when(std::string_view line, size_t after, size_t end) {
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

  void do_do(std::string_view line, size_t after) {
    if (cur_->machine) return error_at(skip_space(line, 0), "'do' in a state machine (use 'then')");
    if (!has_when_) return error_at(skip_space(line, 0), "'do' before 'when'");
    auto& br = cur_->states.back().branches.back();
    if (!br.actions.empty()) return error_at(skip_space(line, 0), "a trigger has one 'do' line");
    parse_actions(line, after, line.size(), br, false);
  }

  void do_vars(std::string_view line, size_t after, bool counter) {
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

  void do_state(std::string_view line, size_t after) {
    if (has_when_) return error_at(skip_space(line, 0), "'state' in a trigger that has 'when'");
    cur_->machine = true;
    const size_t b = skip_space(line, after);
    const size_t e = word_end(line, b);
    const std::string name(line.substr(b, e - b));
    if (!is_identifier(name)) return error_at(b, "expected a state name");
    if (skip_space(line, e) < line.size())
      error_at(skip_space(line, e), "unexpected text after the state name");
    for (const auto& s : cur_->states)
      if (s.name == name)
        return error_at(b, "state '" + shown_token(name) + "' is already defined");
    TriggerState s;
    s.name = name;
    s.loc = loc(b);
    cur_->states.push_back(std::move(s));
  }

  void do_if(std::string_view line, size_t after) {
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

  void do_else(std::string_view line, size_t after) {
    if (has_when_ || cur_->states.empty())
      return error_at(skip_space(line, 0), "'else' outside a state");
    TriggerBranch br;
    br.loc = loc(skip_space(line, 0));
    br.cond = -1;
    parse_actions(line, after, line.size(), br, true);
    cur_->states.back().branches.push_back(std::move(br));
  }

  std::optional<uint32_t> local_var(const Token& t, bool counter) {
    const auto& names = counter ? cur_->counters : cur_->flags;
    const auto& vars = counter ? cur_->counter_vars : cur_->flag_vars;
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

  void parse_actions(std::string_view line, size_t begin, size_t end, TriggerBranch& br,
                     bool machine) {
    std::optional<size_t> bad;
    auto toks = tokenize(line.substr(begin, end - begin), begin, bad);
    if (bad) return error_at(*bad, "unterminated string");
    if (toks.empty()) return error_at(end, "expected an action");
    std::vector<std::vector<Token>> items(1);
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
      const Token& w = it[0];
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
          pending_gotos_.push_back({cur_->states.size() - 1, cur_->states.back().branches.size(),
                                    br.actions.size(), it[1].text, loc(it[1].pos)});
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

  void finish_trigger() {
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
        branches[g.branch].actions[g.action].target =
            static_cast<uint32_t>(it - state_names.begin());
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

  // A goto whose target may be defined later in the trigger.
  struct PendingGoto {
    size_t state, branch, action;
    std::string name;
    SourceLoc loc;
  };

  std::string_view text_;
  std::string file_;
  const TriggerEnv& env_;
  uint32_t line_ = 0;
  TriggerProgram prog_;
  std::optional<TriggerDef> cur_;
  bool has_when_ = false;
  std::vector<std::pair<std::string, uint32_t>> file_vars_;
  std::vector<std::pair<std::string, uint32_t>> local_vars_;
  std::vector<PendingGoto> pending_gotos_;
  std::vector<TriggerDiagnostic> errors_;
  size_t trigger_errors_ = 0;  ///< errors_.size() when the current trigger started
  size_t history_bytes_ = 0;   ///< history of the conditions compiled so far
  size_t history_need_ = 0;    ///< what the file would need (set past the limit)
  size_t history_error_ = 0;   ///< 1 + index of the history error in errors_, 0 if none
  bool too_many_ = false;      ///< the trigger-count error was reported
  std::vector<std::pair<std::string, SourceLoc>> unresolved_layers_;
};

}  // namespace

std::string SourceLoc::to_string() const {
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

std::string TriggerDiagnostic::to_string() const {
  std::string s = loc.to_string() + ": error: " + message;
  if (!suggestions.empty()) s += " (did you mean " + join_suggestions(suggestions) + "?)";
  return s;
}

const char* action_name(ActionKind k) {
  switch (k) {
    case ActionKind::Halt:
      return "halt";
    case ActionKind::Capture:
      return "capture";
    case ActionKind::Checkpoint:
      return "checkpoint";
    case ActionKind::Snapshot:
      return "snapshot";
    case ActionKind::Record:
      return "record";
    case ActionKind::Log:
      return "log";
    case ActionKind::Rearm:
      return "rearm";
    case ActionKind::Incr:
      return "incr";
    case ActionKind::Reset:
      return "reset";
    case ActionKind::SetFlag:
      return "set";
    case ActionKind::ClearFlag:
      return "clear";
    case ActionKind::Goto:
      return "goto";
  }
  return "?";
}

std::string TriggerAction::to_string() const {
  std::string s = action_name(kind);
  switch (kind) {
    case ActionKind::Capture:
      s += " pre " + std::to_string(pre) + " post " + std::to_string(post);
      break;
    case ActionKind::Log:
      s += " \"" + text + "\"";
      break;
    case ActionKind::Incr:
      s += " " + text + (amount != 1 ? " " + std::to_string(amount) : "");
      break;
    case ActionKind::Checkpoint:
    case ActionKind::Record:
    case ActionKind::Reset:
    case ActionKind::SetFlag:
    case ActionKind::ClearFlag:
    case ActionKind::Goto:
      if (!text.empty()) s += " " + text;
      break;
    default:
      break;
  }
  return s;
}

bool TriggerBranch::fires() const {
  for (const auto& a : actions) switch (a.kind) {
      case ActionKind::Incr:
      case ActionKind::Reset:
      case ActionKind::SetFlag:
      case ActionKind::ClearFlag:
      case ActionKind::Goto:
      case ActionKind::Rearm:
        break;
      default:
        return true;
    }
  return false;
}

uint64_t TriggerDef::max_pre() const {
  uint64_t m = 0;
  for (const auto& s : states)
    for (const auto& b : s.branches)
      for (const auto& a : b.actions)
        if (a.kind == ActionKind::Capture) m = std::max(m, a.pre);
  return m;
}

uint64_t TriggerDef::max_post() const {
  uint64_t m = 0;
  for (const auto& s : states)
    for (const auto& b : s.branches)
      for (const auto& a : b.actions)
        if (a.kind == ActionKind::Capture) m = std::max(m, a.post);
  return m;
}

bool TriggerDef::captures() const {
  for (const auto& s : states)
    for (const auto& b : s.branches)
      for (const auto& a : b.actions)
        if (a.kind == ActionKind::Capture) return true;
  return false;
}

std::string EventDef::to_string() const {
  std::string s = "def " + name + " = ";
  if (kind == Kind::Every) return s + "every " + std::to_string(period) + " " + source_name;
  s += "dispatch";
  if (opcode) s += " " + isa::opcode_name(*opcode);
  if (cmd_id) s += " index " + std::to_string(*cmd_id);
  if (!layer_name.empty())
    s += " layer " + layer_name;
  else if (layer)
    s += " layer " + std::to_string(*layer);
  return s;
}

size_t TriggerProgram::history_bytes() const {
  size_t n = 0;
  for (const auto& t : triggers)
    for (const auto& c : t.conds) n += c.expr.memory_bytes();
  return n;
}

std::string shown_token(std::string_view token) {
  constexpr size_t kShown = 40;
  if (token.size() <= kShown) return std::string(token);
  size_t cut = kShown;  // not inside a UTF-8 sequence
  while (cut > 0 && (static_cast<unsigned char>(token[cut]) & 0xc0) == 0x80) --cut;
  return std::string(token.substr(0, cut)) + "... (" + std::to_string(token.size()) + " bytes)";
}

const std::vector<std::string>& builtin_var_names() {
  static const std::vector<std::string> names(kBuiltinNames, kBuiltinNames + kNumBuiltinVars);
  return names;
}

namespace {

// `bytes` is 0 when only "more than the limit" is known (the file was not read further).
TriggerParse too_large(const std::string& file, uint64_t bytes, const TriggerLimits& limits) {
  TriggerParse out;
  const std::string limit = std::to_string(limits.max_file_bytes) + " bytes";
  out.errors.push_back({SourceLoc{file, 0, 0},
                        bytes ? "the trigger text is " + std::to_string(bytes) +
                                    " bytes, more than the limit of " + limit
                              : "the trigger file is larger than the limit of " + limit,
                        {}});
  return out;
}

}  // namespace

TriggerParse parse_triggers(std::string_view text, const std::string& file, const TriggerEnv& env) {
  if (text.size() > env.limits.max_file_bytes) return too_large(file, text.size(), env.limits);
  return Parser(text, file, env).run();
}

TriggerParse load_trigger_file(const std::string& path, const TriggerEnv& env) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    TriggerParse out;
    out.errors.push_back({SourceLoc{path, 0, 0}, "cannot read the trigger file", {}});
    return out;
  }
  // Never read more than the limit allows (a multi-GiB file or /dev/zero).
  std::string text(env.limits.max_file_bytes + 1, '\0');
  f.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(f.gcount()));
  if (text.size() > env.limits.max_file_bytes) return too_large(path, 0, env.limits);
  return parse_triggers(text, path, env);
}

}  // namespace bud::debugger
