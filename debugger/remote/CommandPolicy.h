// What a remote client may do with a prompt line: whether the line only reads state (so an
// observer may run it, and it may run between cycles of a run), and the rewrite of the file
// names it carries into the server's output directory.
#pragma once

#include <optional>
#include <string>

#include "debugger/commands/Interpreter.h"
#include "debugger/remote/OutputDir.h"

namespace bud::remote {

/// True when `line` cannot change the emulation, the session or the server's files: print,
/// counters, x, where, info, help, echo, trigger list|hits, blank comments, unknown commands
/// (which only fail). An empty line is not read-only (it repeats the last step).
bool is_read_only_line(const debugger::Interpreter& interp, const std::string& line);
/// The same, from the command table alone, for threads other than the interpreter's (the
/// service's request threads): the caller checks that no `commands N` block is being collected
/// (RequestExecutor::collecting_commands()), since that state belongs to the interpreter's thread.
bool is_read_only_command(const debugger::Interpreter& interp, const std::string& line);

/// Rewrites the file names of `wave on|dump`, `record start`, `trigger load` and `source` to
/// absolute paths inside `out` (OutputDir::resolve). Returns the line to execute, or nullopt with
/// `error` when a name is refused. Other lines are returned unchanged.
std::optional<std::string> confine_paths(const debugger::Interpreter& interp,
                                         const std::string& line, const OutputDir& out,
                                         std::string& error);

}  // namespace bud::remote
