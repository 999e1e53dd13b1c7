#include "debugger/trigger/TriggerLexer.h"

#include <algorithm>
#include <cctype>

namespace bud::debugger::lex {

const char* const kBuiltinNames[kNumBuiltinVars] = {
    "progress", "since_progress", "assertion", "hang", "error", "finished", "mismatch"};

const std::vector<std::string>& keywords() {
  static const std::vector<std::string> k = {
      "def",  "trigger", "when",  "do",  "shots",    "counter",     "flag",  "state",
      "if",   "then",    "else",  "end", "dispatch", "every",       "index", "layer",
      "goto", "incr",    "reset", "set", "clear",    "state_cycles"};
  return k;
}

namespace {
bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
}  // namespace

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

std::string_view strip_comment(std::string_view line) {
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

size_t skip_space(std::string_view line, size_t i) {
  while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
  return i;
}
size_t word_end(std::string_view line, size_t i) {
  while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
  return i;
}

}  // namespace bud::debugger::lex
