#include "debugger/remote/CommandPolicy.h"

#include <cctype>
#include <set>

namespace bud::remote {

namespace {

// The same comment rule as Interpreter::execute: '#' starts a comment unless a digit follows.
std::string strip_comment(const std::string& raw) {
  const auto hash = raw.find('#');
  if (hash == std::string::npos) return raw;
  const bool index =
      hash + 1 < raw.size() && std::isdigit(static_cast<unsigned char>(raw[hash + 1]));
  return index ? raw : raw.substr(0, hash);
}

// Index (into Args::words) of the file name a command writes or reads, or -1.
int file_word(const std::string& name, const debugger::Args& a) {
  const std::string sub = a.words.empty() ? "" : a.words[0];
  if (name == "wave" && sub == "on" && a.words.size() == 2) return 1;
  if (name == "wave" && sub == "dump" && a.words.size() == 4) return 3;
  if (name == "record" && sub == "start" && a.words.size() == 2) return 1;
  if (name == "trigger" && sub == "load" && a.words.size() == 2) return 1;
  if (name == "source" && a.words.size() == 1) return 0;
  if (name == "save" && sub == "breakpoints" && a.words.size() == 2) return 1;
  return -1;
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
  if (!spec) return true;
  // Displays live in the controlling interpreter (they print at its stops).
  if (spec->name == "info" && !a.words.empty() && a.words[0].rfind("disp", 0) == 0) return false;
  static const std::set<std::string> kReadOnly = {"print", "counters", "x",   "where",
                                                  "info",  "help",     "echo"};
  if (kReadOnly.count(spec->name)) return true;
  if (spec->name == "trigger")
    return a.words.empty() || a.words[0] == "list" || a.words[0] == "hits";
  return false;
}

std::optional<std::string> confine_paths(const debugger::Interpreter& interp,
                                         const std::string& raw, const OutputDir& out,
                                         std::string& error) {
  const std::string line = strip_comment(raw);
  const auto a = debugger::parse_args(line);
  const auto* spec = a.command.empty() ? nullptr : interp.find(a.command);
  if (!spec) return raw;
  const int w = file_word(spec->name, a);
  if (w < 0) {
    // A file-taking command with the wrong arguments fails its own usage check; one that names
    // a file in a form we do not recognise is refused rather than passed through.
    const bool takes_file = spec->name == "source" ||
                            (spec->name == "wave" && !a.words.empty() && a.words[0] != "off") ||
                            (spec->name == "record" && !a.words.empty() && a.words[0] == "start") ||
                            (spec->name == "trigger" && !a.words.empty() && a.words[0] == "load") ||
                            spec->name == "save";
    if (takes_file && !a.words.empty() && a.words.size() > 1) {
      error = "usage: " + spec->usage;
      return std::nullopt;
    }
    return raw;
  }
  // Files the command writes are created through the one confinement function; the two that
  // read (trigger load, source) are only resolved.
  const std::string& name = a.words[static_cast<size_t>(w)];
  const bool reads = spec->name == "trigger" || spec->name == "source";
  auto path = reads ? out.resolve(name, error) : out.create(name, error);
  if (!path) return std::nullopt;
  std::string rebuilt = a.command + (a.flag.empty() ? "" : "/" + a.flag);
  for (size_t i = 0; i < a.words.size(); ++i) {
    const std::string& word = i == static_cast<size_t>(w) ? *path : a.words[i];
    rebuilt += word.find_first_of(" \t") == std::string::npos ? " " + word : " \"" + word + "\"";
  }
  return rebuilt;
}

}  // namespace bud::remote
