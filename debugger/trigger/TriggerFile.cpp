#include "debugger/trigger/TriggerFile.h"

#include <fstream>

#include "debugger/trigger/TriggerLexer.h"
#include "debugger/trigger/TriggerParser.h"
#include "emu/isa/Isa.h"

namespace bud::debugger {

std::string SourceLoc::to_string() const {
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

std::string TriggerDiagnostic::to_string() const {
  std::string s = loc.to_string() + ": error: " + message;
  if (!suggestions.empty()) s += " (did you mean " + lex::join_suggestions(suggestions) + "?)";
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
  static const std::vector<std::string> names(lex::kBuiltinNames,
                                              lex::kBuiltinNames + kNumBuiltinVars);
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
  return TriggerParser(text, file, env).run();
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
