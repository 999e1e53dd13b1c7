// The debugger front end: reads command lines (libedit with history and completion on a
// terminal, plain lines otherwise), runs them through the Interpreter and renders each result as
// text or as one JSON object per line. Owns Ctrl-C handling: a running command stops at the next
// check, the prompt survives.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "debugger/commands/Interpreter.h"

namespace bud::debugger {

/// Source of command lines.
class LineReader {
 public:
  virtual ~LineReader() = default;
  /// Next line without its newline; nullopt at end of input.
  virtual std::optional<std::string> read(const std::string& prompt) = 0;
};

/// Reads lines from a stream (scripts, pipes, tests).
std::unique_ptr<LineReader> make_stream_reader(std::istream& in);
/// libedit on the terminal: line editing, history (kept in `history_file` if not empty) and tab
/// completion through `complete`.
std::unique_ptr<LineReader> make_editline_reader(
    std::function<std::vector<std::string>(const std::string&)> complete,
    const std::string& history_file);

struct ConsoleOptions {
  bool json = false;   ///< one JSON object per command on stdout
  bool echo = false;   ///< print each command before its output (scripts)
  std::string prompt = "(bud) ";
};

class Console {
 public:
  Console(Interpreter& interp, ConsoleOptions options, std::ostream& out, std::ostream& err);

  /// Runs one line and renders its result. Returns the result.
  CommandResult run_line(const std::string& line);
  /// Runs a script file; returns false if a command failed (stops at the first failure).
  bool run_script(const std::string& path);
  /// Reads and runs lines until quit or end of input. Returns false if any command failed.
  bool loop(LineReader& reader);

  /// Installs a SIGINT handler that interrupts running commands (Session::interrupt_flag).
  static void install_interrupt_handler();

  bool failed() const { return failed_; }

 private:
  void render(const std::string& line, const CommandResult& r);

  Interpreter& interp_;
  ConsoleOptions options_;
  std::ostream& out_;
  std::ostream& err_;
  bool failed_ = false;
  bool quit_ = false;
};

}  // namespace bud::debugger
