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
  /// While a command runs the design: every this many simulated cycles (not wall-clock time,
  /// so what is printed does not depend on the machine) rewrite one status line
  /// ("\r  running... cycle N"), erased when the command ends. 0: never. `bud debug` sets it
  /// only when stdout is a terminal and neither --batch nor --json is given.
  uint64_t progress_every = 0;
};

class Console {
 public:
  Console(Interpreter& interp, ConsoleOptions options, std::ostream& out, std::ostream& err);
  ~Console();
  Console(const Console&) = delete;
  Console& operator=(const Console&) = delete;

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
  void show_progress(uint64_t cycle);

  Interpreter& interp_;
  ConsoleOptions options_;
  std::ostream& out_;
  std::ostream& err_;
  bool failed_ = false;
  bool quit_ = false;
  uint64_t run_start_ = 0;       ///< cycle the current command started at
  uint64_t next_progress_ = 0;   ///< cycle at or after which the next progress line is due
  bool progress_shown_ = false;  ///< a progress line is on the screen and must be erased
};

}  // namespace bud::debugger
