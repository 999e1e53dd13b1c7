// Trigger files (docs/triggers.md): a small line-oriented language of event definitions, simple
// triggers (`when COND do ACTIONS`) and ILA-style trigger state machines (`state S` / `if COND
// then ACTIONS goto T`). Conditions are condition-language expressions (docs/expressions.md)
// compiled with debugger/expr. Parsing never throws: every problem is a TriggerDiagnostic naming
// FILE:LINE:COL; a file with any error yields no program (nothing runs).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "debugger/expr/Compiler.h"
#include "debugger/expr/Expr.h"
#include "debugger/expr/NameResolver.h"
#include "emu/core/Emulator.h"

namespace bud::debugger {

/// A position in a trigger file (1-based line and byte column).
struct SourceLoc {
  std::string file;
  uint32_t line = 0;
  uint32_t column = 0;
  /// "FILE:LINE:COL"
  std::string to_string() const;
};

/// One error in a trigger file.
struct TriggerDiagnostic {
  SourceLoc loc;
  std::string message;
  std::vector<std::string> suggestions;  ///< near names for unknown names, best first
  /// "FILE:LINE:COL: error: MESSAGE (did you mean A, B or C?)"
  std::string to_string() const;
};

/// What a trigger does when it fires (or a state-machine branch is taken).
enum class ActionKind : uint8_t {
  Halt,        ///< stop into the debugger / end a batch run with a report
  Capture,     ///< FST + event log of [hit - pre, hit + post]
  Checkpoint,  ///< named checkpoint (debugger) / state file (batch)
  Snapshot,    ///< record all PMU counters at the hit
  Record,      ///< ask the replay hook for a replay packet
  Log,         ///< add a message to the hit
  Rearm,       ///< restart the trigger's windows and counts from the next cycle
  Incr,        ///< state machine: add `amount` to a counter
  Reset,       ///< state machine: set a counter to 0
  SetFlag,     ///< state machine: set a flag to 1
  ClearFlag,   ///< state machine: set a flag to 0
  Goto,        ///< state machine: enter state `target`
};
const char* action_name(ActionKind k);

struct TriggerAction {
  ActionKind kind = ActionKind::Halt;
  uint64_t pre = 0;     ///< Capture: cycles before the hit
  uint64_t post = 0;    ///< Capture: cycles after the hit
  int64_t amount = 1;   ///< Incr
  uint32_t var = 0;     ///< Incr/Reset/SetFlag/ClearFlag: variable slot
  uint32_t target = 0;  ///< Goto: state index
  std::string text;     ///< Log message, Checkpoint name, Record file, variable/state name
  SourceLoc loc;
  /// Normalized source form, e.g. "capture pre 1000 post 200", "log \"burst\"".
  std::string to_string() const;
};

/// One `if COND then ACTIONS` (cond >= 0) or `else ACTIONS` (cond == -1) of a state.
struct TriggerBranch {
  int cond = -1;  ///< index into TriggerDef::conds
  std::vector<TriggerAction> actions;
  int target = -1;  ///< state entered (last goto), -1: stay
  SourceLoc loc;
  /// Whether taking it is a hit (any action other than counter/flag/goto/rearm).
  bool fires() const;
};

struct TriggerState {
  std::string name;
  std::vector<TriggerBranch> branches;
  SourceLoc loc;
};

/// A compiled condition with where it came from.
struct TriggerCondition {
  std::string text;  ///< normalized (Expr::to_string)
  Expr expr;
  SourceLoc loc;
};

/// One trigger. A simple trigger is a one-state machine whose single branch fires on the cycle its
/// condition becomes true (false -> true); a state machine's branches are level-sensitive.
struct TriggerDef {
  std::string name;
  SourceLoc loc;
  bool machine = false;
  std::vector<TriggerCondition> conds;
  std::vector<TriggerState> states;  ///< states[0] is the initial state
  std::vector<std::string> counters, flags;
  std::vector<uint32_t> counter_vars, flag_vars;  ///< variable slots
  uint32_t state_cycles_var = 0;                  ///< slot of `state_cycles`
  std::optional<uint64_t> shots;                  ///< k-shot; nullopt: unlimited
  /// Largest pre/post depth of its capture actions (0 if none).
  uint64_t max_pre() const;
  uint64_t max_post() const;
  bool captures() const;
};

/// A named event computed each cycle before the conditions: 1 on the cycles it happens, else 0.
struct EventDef {
  enum class Kind : uint8_t { Dispatch, Every };
  std::string name;
  Kind kind = Kind::Dispatch;
  // Dispatch: a command dispatched by fetch matches all given fields.
  std::optional<uint8_t> opcode;
  std::optional<uint32_t> cmd_id;
  std::optional<uint32_t> layer;
  std::string layer_name;  ///< as written when given by name
  // Every: the quantity `source` advanced by `period` since the last overflow.
  uint64_t period = 0;
  Ref source;
  std::string source_name;
  uint32_t var = 0;
  SourceLoc loc;
  std::string to_string() const;
};

/// Built-in variable slots (RefKind::Other ids) shared by every program.
enum class BuiltinVar : uint32_t {
  Progress = 0,   ///< 1 on cycles with a stage transaction
  SinceProgress,  ///< cycles since the last stage transaction (or since arming)
  Assertion,      ///< 1 at the end of a run stopped by a design assertion
  Hang,           ///< 1 at the end of a run stopped by the watchdog
  Error,          ///< 1 at the end of a run stopped by a design/memory error
  Finished,       ///< 1 at the end of a run that reached its END
  Mismatch,       ///< 1 at the end of a finished run whose checks failed
  Count,
};
inline constexpr uint32_t kNumBuiltinVars = static_cast<uint32_t>(BuiltinVar::Count);

/// A parsed, compiled trigger file (or `trigger add` text).
struct TriggerProgram {
  std::string file;
  std::vector<EventDef> events;
  std::vector<TriggerDef> triggers;
  std::vector<std::string> var_names;  ///< one per variable slot (builtins first)
  /// Bytes of history buffers of all its conditions (Expr::memory_bytes()).
  size_t history_bytes() const;
};

/// Resource limits of the trigger language (docs/triggers.md, "Limits"). Text past any of them
/// is refused with one error naming the file, line and the size, before the memory is allocated.
struct TriggerLimits {
  /// Bytes of one trigger file, `trigger add` text or LoadTriggers request.
  size_t max_file_bytes = size_t{1} << 20;
  /// Triggers defined in one file.
  size_t max_triggers = 1024;
  /// Nodes of one compiled condition (names, constants, operators, calls).
  size_t max_expression_nodes = kMaxNodes;
  /// History bytes (Expr::memory_bytes(), 8 * (W + 1) per distinct name and window) of all the
  /// conditions of one file: `--max-trigger-history` (MiB).
  size_t max_file_history_bytes = size_t{256} << 20;
  /// History bytes of every trigger loaded into one engine (a run, a debug session, a server),
  /// files and `trigger add` lines together: `--max-session-trigger-history` (MiB).
  size_t max_session_history_bytes = size_t{1} << 30;
};

/// What parsing needs to know about the design.
struct TriggerEnv {
  const emu::Emulator* emu = nullptr;  ///< names of signals and counters (required)
  /// Layer names of the workload; null when unknown (`bud trigger check` without --workload):
  /// then `layer NAME` is accepted and must be resolved later with resolve_layers().
  const std::vector<std::string>* layer_names = nullptr;
  TriggerLimits limits;
  /// History bytes already loaded in the engine the text is for (counts against
  /// limits.max_session_history_bytes).
  size_t session_history_bytes = 0;
};

/// Result of parsing: a program, or every error found (in file order).
struct TriggerParse {
  std::optional<TriggerProgram> program;
  std::vector<TriggerDiagnostic> errors;
  /// Names of layers used by name that could not be checked (env without layer names).
  std::vector<std::pair<std::string, SourceLoc>> unresolved_layers;
  bool ok() const { return program.has_value(); }
};

/// Parses and compiles trigger-language text. `file` names it in diagnostics.
TriggerParse parse_triggers(std::string_view text, const std::string& file, const TriggerEnv& env);
/// Reads and parses a file; an unreadable file, or one larger than env.limits.max_file_bytes (it
/// is not read past that), is one diagnostic at FILE:0:0.
TriggerParse load_trigger_file(const std::string& path, const TriggerEnv& env);

/// `token` for an error message: at most 40 bytes, else its start and an ellipsis with its length
/// (the diagnostic's column says where it is), so a pasted megabyte is not repeated.
std::string shown_token(std::string_view token);

/// Names the trigger language reserves (keywords and built-in variables).
const std::vector<std::string>& builtin_var_names();

}  // namespace bud::debugger
