// The parser of trigger files (docs/triggers.md): reads the text one line at a time, each line
// one statement (def, trigger, when, do, shots, counter, flag, state, if, else, end), compiles
// conditions with debugger/expr against the trigger's names (TriggerResolver) and actions with
// TriggerActionParser, and collects every error in file order. It never throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "debugger/expr/Compiler.h"
#include "debugger/trigger/TriggerActionParser.h"
#include "debugger/trigger/TriggerFile.h"
#include "debugger/trigger/TriggerLexer.h"

namespace bud::debugger {

/// One parse of one text (use parse_triggers()).
class TriggerParser {
 public:
  TriggerParser(std::string_view text, const std::string& file, const TriggerEnv& env);

  /// Parses the whole text: a program, or every error found.
  TriggerParse run();

 private:
  SourceLoc loc(size_t pos) const;
  void error(const SourceLoc& at, std::string message, std::vector<std::string> suggestions = {});
  void error_at(size_t pos, std::string message, std::vector<std::string> suggestions = {});

  void do_line(std::string_view line);

  // def NAME = dispatch [OPCODE] [index N] [layer L]  |  def NAME = every N QUANTITY
  void do_def(std::string_view line, size_t after);

  bool resolve_layer(const lex::Token& tok, EventDef& ev);

  // Names of events, triggers' variables and states must not hide design names or keywords.
  bool check_new_name(const std::string& name, size_t pos, bool file_scope);

  uint32_t new_var(const std::string& name);

  // trigger NAME [shots K|all] [when COND do ACTIONS]
  void do_trigger(std::string_view line, size_t after);

  void do_shots(std::string_view line, size_t after, size_t end);

  // A condition whose history does not fit what is left of the file's or the session's budget.
  // One error names the first trigger past the limit, its need and the total; the triggers after
  // it only add to the total that error reports (history_need_).
  void history_error(size_t begin, const CompileError& e);

  // Compiles the expression in line[begin, end) and returns its condition index, or -1.
  int compile_cond(std::string_view line, size_t begin, size_t end);

  void do_when(std::string_view line, size_t after, size_t end);

  void do_do(std::string_view line, size_t after);

  void do_vars(std::string_view line, size_t after, bool counter);

  void do_state(std::string_view line, size_t after);

  void do_if(std::string_view line, size_t after);

  void do_else(std::string_view line, size_t after);

  void parse_actions(std::string_view line, size_t begin, size_t end, TriggerBranch& br,
                     bool machine);

  void finish_trigger();

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

}  // namespace bud::debugger
