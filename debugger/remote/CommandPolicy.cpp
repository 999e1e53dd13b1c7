#include "debugger/remote/CommandPolicy.h"

#include <cctype>

namespace bud::remote {

using debugger::ArgKind;

namespace {

// The same comment rule as Interpreter::execute: '#' starts a comment unless a digit follows.
std::string strip_comment(const std::string& raw) {
  const auto hash = raw.find('#');
  if (hash == std::string::npos) return raw;
  const bool index =
      hash + 1 < raw.size() && std::isdigit(static_cast<unsigned char>(raw[hash + 1]));
  return index ? raw : raw.substr(0, hash);
}

}  // namespace

bool is_read_only_line(const debugger::Interpreter& interp, const std::string& raw) {
  // Inside `commands N ... end` every line belongs to the block the controlling interpreter is
  // collecting, whatever it says.
  return interp.collecting_commands() == 0 && is_read_only_command(interp, raw);
}

bool is_read_only_command(const debugger::Interpreter& interp, const std::string& raw) {
  const std::string line = strip_comment(raw);
  const auto a = debugger::parse_args(line);
  if (a.command.empty()) return raw.find('#') != std::string::npos;  // a comment only
  const auto* spec = interp.find(a.command);
  return !spec || spec->effect_of(a) == debugger::Effect::ReadOnly;
}

std::optional<std::string> confine_paths(const debugger::Interpreter& interp,
                                         const std::string& raw, const OutputDir& out,
                                         std::string& error) {
  const auto a = debugger::parse_args(strip_comment(raw));
  const auto* spec = a.command.empty() ? nullptr : interp.find(a.command);
  if (!spec) return raw;
  size_t skip = 0;
  const auto& kinds = spec->arg_kinds(a, skip);
  bool has_file = false;
  size_t last_file = 0;
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (kinds[i] == ArgKind::Script) {
      error = "`" + spec->name +
              "` would read a script on the server; scripts run from the client (bud attach -x "
              "FILE, or source FILE at the bud attach prompt)";
      return std::nullopt;
    }
    if (debugger::is_file_arg(kinds[i])) {
      has_file = true;
      last_file = i;
    }
  }
  if (!has_file) return raw;
  const size_t given = a.words.size() - skip;
  // A file kind last repeats for every further word; otherwise words past the last file
  // argument are a form we do not know, refused rather than passed through.
  if (kinds.back() == ArgKind::None && given > last_file + 1) {
    error = "usage: " + spec->usage;
    return std::nullopt;
  }
  std::string rebuilt = a.command + (a.flag.empty() ? "" : "/" + a.flag);
  for (size_t i = 0; i < a.words.size(); ++i) {
    std::string word = a.words[i];
    if (i >= skip) {
      const ArgKind k = debugger::arg_kind_at(kinds, i - skip);
      // Files the command writes are created through the one confinement function; files it
      // reads are only resolved.
      if (k == ArgKind::ReadFile || k == ArgKind::WriteFile) {
        auto path = k == ArgKind::ReadFile ? out.resolve(word, error) : out.create(word, error);
        if (!path) return std::nullopt;
        word = *path;
      }
    }
    rebuilt += word.find_first_of(" \t") == std::string::npos ? " " + word : " \"" + word + "\"";
  }
  return rebuilt;
}

}  // namespace bud::remote
