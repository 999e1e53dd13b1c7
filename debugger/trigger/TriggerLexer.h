// The words of the trigger language (docs/triggers.md): keywords, identifiers, numbers, quoted
// strings and the helpers that find statements and clauses in a line. The parser
// (TriggerParser.h) reads a file one line at a time with these.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "debugger/trigger/TriggerFile.h"

namespace bud::debugger::lex {

/// The names of the built-in variables, by BuiltinVar slot.
extern const char* const kBuiltinNames[kNumBuiltinVars];
/// Words the language reserves.
const std::vector<std::string>& keywords();
bool is_ident_char(char c);
/// A condition-language identifier: [A-Za-z_][A-Za-z0-9_]*.
bool is_identifier(std::string_view s);
/// Trigger names may also contain '-' (they name files of captures).
bool is_trigger_name(std::string_view s);
/// A decimal number with single '_' separators; nullopt when malformed or past 2^64 - 1.
std::optional<uint64_t> parse_uint(std::string_view s);
/// "A, B or C".
std::string join_suggestions(const std::vector<std::string>& s);

/// One token of a line: a word, a quoted string or a punctuation character, with its 0-based
/// byte offset in the line.
struct Token {
  std::string text;
  size_t pos = 0;
  bool quoted = false;
};

/// Splits `s` (a part of a line starting at byte `base`) into tokens. Words run until whitespace,
/// ',' or '='. A quote starts a string up to the next unescaped quote; `bad` receives the offset
/// of an unterminated one.
std::vector<Token> tokenize(std::string_view s, size_t base, std::optional<size_t>& bad);
/// Byte offset of the first occurrence of `word` as a whole word at parenthesis depth 0 and
/// outside quotes, at or after `from`; npos if none.
size_t find_word(std::string_view line, std::string_view word, size_t from);
/// The line without its '#' comment (a '#' inside quotes is text).
std::string_view strip_comment(std::string_view line);
/// The first non-space byte at or after `i`.
size_t skip_space(std::string_view line, size_t i);
/// The end of the word starting at `i` (the next space).
size_t word_end(std::string_view line, size_t i);

}  // namespace bud::debugger::lex
