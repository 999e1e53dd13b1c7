// What a remote client may do with a prompt line, derived from the command specs only
// (CommandSpec::effect and the file kinds of its arguments): whether the line only reads state
// (so an observer may run it, and it may run between cycles of a run), and the rewrite of the
// file names it carries into the server's output directory.
#pragma once

#include <optional>
#include <string>

#include "debugger/commands/Interpreter.h"
#include "debugger/remote/OutputDir.h"

namespace bud::remote {

/// True when the command or subcommand `line` names is declared Effect::ReadOnly, for blank
/// comments, and for unknown commands (which only fail). An empty line is not read-only (it
/// repeats the last step); neither is any line while a `commands N` block is being collected.
bool is_read_only_line(const debugger::Interpreter& interp, const std::string& line);
/// The same, from the command table alone, for threads other than the interpreter's (the
/// service's request threads): the caller checks that no `commands N` block is being collected
/// (RequestExecutor::collecting_commands()), since that state belongs to the interpreter's thread.
bool is_read_only_command(const debugger::Interpreter& interp, const std::string& line);

/// Rewrites every word of `line` at a position its spec declares a file (ArgKind::ReadFile:
/// OutputDir::resolve, ArgKind::WriteFile: OutputDir::create) to an absolute path inside `out`.
/// Refused (nullopt with `error`): a name outside `out`, more words than the last file
/// argument's position, and any command that runs a script (ArgKind::Script: scripts run on the
/// client). Lines without file arguments are returned unchanged.
std::optional<std::string> confine_paths(const debugger::Interpreter& interp,
                                         const std::string& line, const OutputDir& out,
                                         std::string& error);

}  // namespace bud::remote
