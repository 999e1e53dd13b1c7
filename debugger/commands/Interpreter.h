// The debugger's command interpreter: a table of commands (name, aliases, help with examples,
// what they need), one entry point that runs a line and returns a CommandResult, completion for
// line editors, and "did you mean" for typos. The same interpreter serves the interactive
// prompt, scripts (-x, source), --batch runs, replayed packets and remote clients.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "debugger/commands/CommandResult.h"
#include "debugger/session/Session.h"

namespace bud::debugger {

class Interpreter;
class RecordBackend;

/// A command line split into words; `rest` is the raw text after the command word (for
/// expressions), `flag` the /FMT suffix of the command word ("print/x" -> "x").
struct Args {
  std::string command;
  std::string flag;
  std::vector<std::string> words;  ///< after the command word
  std::string rest;
};

/// Preconditions checked centrally before a command runs.
enum Needs : unsigned {
  kNeedsNothing = 0,
  kNeedsLiveRun = 1,  ///< the program must not have finished/hung at the current cycle
};

/// What Tab offers for one argument of a command.
enum class ArgKind : uint8_t {
  None,        ///< nothing (a number, free text)
  Name,        ///< signals, PMU counters, CSRs, `cycle` (print, force, display, break if ...)
  Watchable,   ///< Name plus memory names (watch)
  Memory,      ///< memory names (x, deposit MEMORY)
  ReadFile,    ///< a file the command reads (completes file names; `bud serve` resolves it in
               ///< its output directory)
  WriteFile,   ///< a file the command writes (completes file names; `bud serve` creates it in
               ///< its output directory)
  Script,      ///< a script of commands the interpreter runs (completes file names; remote
               ///< clients run scripts themselves, `bud serve` refuses the line)
  Checkpoint,  ///< named checkpoints (restore)
  Breakpoint,  ///< breakpoint ids (delete, condition, ...)
  Display,     ///< display ids (undisplay)
  Command,     ///< command names (help)
  Opcode,      ///< opcodes and `layer` (break cmd)
  Layer,       ///< workload layer names
  Engine,      ///< engines that execute commands (finish)
};

/// What running a command (or one of its subcommands) may change. The observer rule of `bud
/// serve` derives from it: observers run only ReadOnly lines, which may also run between cycles
/// of a run. Every registered command and subcommand declares one (a test refuses Undeclared).
enum class Effect : uint8_t {
  Undeclared,  ///< nothing declared yet (never valid on a registered command)
  ReadOnly,    ///< reads the emulation and the session (shared by every client); changes nothing
  Changes,     ///< changes the emulation, the session or files, or uses what only the
               ///< controlling interpreter holds (displays, `commands` blocks)
};

/// True for the argument kinds that name a file (ReadFile, WriteFile, Script).
constexpr bool is_file_arg(ArgKind k) {
  return k == ArgKind::ReadFile || k == ArgKind::WriteFile || k == ArgKind::Script;
}

/// The kind of the argument at `pos` in `kinds`: the last kind repeats (None: nothing).
inline ArgKind arg_kind_at(const std::vector<ArgKind>& kinds, size_t pos) {
  if (kinds.empty()) return ArgKind::None;
  return pos < kinds.size() ? kinds[pos] : kinds.back();
}

/// Runs a command: fills the result, never prints. For a subcommand, `words[0]` is the
/// subcommand word as typed.
using RunFn = std::function<void(Interpreter&, const Args&, CommandResult&)>;

/// A noun-verb subcommand (`wave dump`, `trigger add`, `info stages`): its own argument kinds,
/// effect and run function. The interpreter dispatches the first word to it.
struct SubcommandSpec {
  std::string name;
  /// The words after the subcommand, by position; the last kind repeats (unless None). File
  /// kinds declare which words are file paths: `bud serve` confines them, and a line with more
  /// words than the last file argument's position is refused there.
  std::vector<ArgKind> args;
  Effect effect = Effect::Undeclared;
  RunFn run = {};
  /// The shortest prefix of `name` that selects it (`info b`); 0: the whole name.
  size_t abbrev = 0;
  std::vector<std::string> aliases = {};  ///< other words that select it (`break command`)

  /// Whether `word` selects this subcommand (its name, an alias, or a long enough prefix).
  bool matches(const std::string& word) const;
};

struct CommandSpec {
  std::string name;
  std::vector<std::string> aliases;
  std::string usage;     ///< "break if EXPR | break CYCLE | break cmd [OPCODE] [#INDEX] [layer L]"
  std::string summary;   ///< one line for `help`
  std::string details;   ///< paragraphs for `help NAME`
  std::vector<std::string> examples;
  unsigned needs = kNeedsNothing;
  bool repeatable = false;  ///< an empty line repeats it (step, continue, ...)
  /// Runs the command when no subcommand matches its first word (`break CYCLE`, `trigger` alone
  /// lists); with subcommands and no other form it only reports the usage.
  RunFn run;
  /// With subcommands: the first word selects one (SubcommandSpec::matches) and the rest follow
  /// its `args`; other first words go to `run` and complete from `args[0]`. Without: `args` by
  /// position (the last kind repeats unless None).
  std::vector<SubcommandSpec> subcommands = {};
  std::vector<ArgKind> args = {};
  /// The effect of `run` (of the forms that are not subcommands).
  Effect effect = Effect::Undeclared;

  /// The subcommand the first word of `a` selects, or nullptr.
  const SubcommandSpec* subcommand(const Args& a) const;
  /// The effect of the line `a` (its subcommand's, or the command's own).
  Effect effect_of(const Args& a) const;
  /// The kinds of the words of `a` after the command word and subcommand (if any), and how many
  /// leading words of `a.words` those exclude (0 or 1).
  const std::vector<ArgKind>& arg_kinds(const Args& a, size_t& skip) const;
};

/// An expression printed after every stop (`display`), through `print` with its format.
struct Display {
  int id = 0;
  std::string format;  ///< "", "x", "d" or "b"
  std::string expr;
};

class Interpreter {
 public:
  explicit Interpreter(Session& session);

  Session& session() { return session_; }
  /// Registers a command; the reference lets the caller set its completion spec.
  CommandSpec& add(CommandSpec spec);
  const std::vector<CommandSpec>& commands() const { return commands_; }
  const CommandSpec* find(const std::string& name) const;

  /// Runs one line. Empty line: repeats the last repeatable command. `#` starts a comment.
  CommandResult execute(const std::string& line);
  /// Runs every line of a file (for `source` and -x). Stops at the first failing command when
  /// `stop_on_error`. Results are appended to `out`. Returns false if any command failed or the
  /// file could not be read (the error names FILE:LINE).
  /// `on_result`, if set, sees each result as soon as its command has run (so a front end can
  /// show it while the emulator is still at that command's cycle).
  bool source(const std::string& path, std::vector<std::pair<std::string, CommandResult>>& out,
              bool stop_on_error,
              const std::function<void(const std::string&, const CommandResult&)>& on_result = {});

  /// Completion candidates for the word being typed at the end of `line`: command names for the
  /// first word, then what the command's spec declares for that position (subcommands,
  /// signal/counter/CSR names, memories, files, checkpoints, breakpoint ids, ...). Sorted, unique.
  std::vector<std::string> complete(const std::string& line) const;
  /// The candidates of one argument kind whose text starts with `prefix`.
  std::vector<std::string> candidates(ArgKind kind, const std::string& prefix) const;
  /// Every completable name (signals, counters, memories, CSRs).
  std::vector<std::string> names() const;

  /// `commands N`: lines given to execute() are collected as breakpoint N's commands until a
  /// line `end` (at the prompt, in scripts and remotely alike). 0 when not collecting.
  int collecting_commands() const { return collecting_id_; }
  void begin_commands(int id) {
    collecting_id_ = id;
    collected_.clear();
  }

  /// Displays (`display`, `undisplay`, `info display`), printed after every stop in id order.
  int add_display(Display d);
  bool remove_display(int id);
  const std::vector<Display>& displays() const { return displays_; }
  /// Appends "N: <print output>" for every display to `r` (as `r.data.displays`).
  void show_displays(CommandResult& r);

  /// What `record start|stop` writes packets with (not owned; null: recording is not available
  /// in this session). Each interpreter carries its own: nothing is shared between sessions.
  void set_record_backend(RecordBackend* backend) { record_backend_ = backend; }
  RecordBackend* record_backend() const { return record_backend_; }

 private:
  Session& session_;
  std::vector<CommandSpec> commands_;
  std::string last_repeatable_;
  int source_depth_ = 0;
  /// Runs the commands of the breakpoints that caused r's stop; their output joins r.
  void run_breakpoint_commands(CommandResult& r);
  int collecting_id_ = 0;
  std::vector<std::string> collected_;
  bool in_breakpoint_commands_ = false;
  std::vector<Display> displays_;
  int next_display_ = 1;
  RecordBackend* record_backend_ = nullptr;
};

/// Declares what a command's run function may change and the kinds of its arguments (Tab
/// completion, file paths). For commands without subcommands.
inline CommandSpec& declare(CommandSpec& spec, Effect effect, std::vector<ArgKind> args = {}) {
  spec.effect = effect;
  spec.args = std::move(args);
  return spec;
}

/// Declares a noun-verb command: its subcommands, and the effect of its own run function (the
/// forms that are not subcommands, or the usage error). `args` completes those forms' first word.
inline CommandSpec& declare(CommandSpec& spec, Effect effect,
                            std::vector<SubcommandSpec> subcommands,
                            std::vector<ArgKind> args = {}) {
  spec.effect = effect;
  spec.subcommands = std::move(subcommands);
  spec.args = std::move(args);
  return spec;
}

/// Splits a line into Args (quotes group words; the command word's "/x" becomes `flag`).
Args parse_args(const std::string& line);

/// Registers every built-in command (run control, inspection, state changes, time travel,
/// waveforms, scripting). Defined in the per-family files.
void register_all_commands(Interpreter& in);
void register_run_commands(Interpreter& in);
void register_inspect_commands(Interpreter& in);
void register_change_commands(Interpreter& in);
void register_time_commands(Interpreter& in);
void register_meta_commands(Interpreter& in);
void register_record_commands(Interpreter& in);
void register_trigger_commands(Interpreter& in);

/// Writes replay packets for `record start|stop` (implemented by the CLI over bud::replay, which
/// the debugger does not depend on).
class RecordBackend {
 public:
  virtual ~RecordBackend() = default;
  /// Starts recording the session's run at its current cycle to `path`. Error text or empty.
  virtual std::string start(Session& session, const std::string& path) = 0;
  /// Writes the packet up to the current cycle; `summary` says what was written.
  virtual std::string stop(Session& session, std::string& summary) = 0;
};

}  // namespace bud::debugger
