// BASE and NEW of `bud matrix` (docs/matrix.md, "Configurations"): a configuration is the run
// options of `bud run` (--config, --tile-rows, --precision, --energy-table, --point, --mem-*,
// --thermal...), written one option per line in a file, given inline as one argument starting
// with "--", or `default` (none). They are parsed by the same option definitions as `bud run`
// (add_emulation_options), so a configuration means exactly what the same flags mean there.
#pragma once

#include <string>

#include "load/matrix/MatrixRun.h"

namespace bud::cli {

/// Reads `arg` (a file, inline options, or "default") into `out` (name, origin, flags, resolved
/// options and energy table). Empty, or one line naming FILE:LINE:COL and the option at fault;
/// `exit_code` is then 2 (bad input) or kExitNotBuilt (a --config this bud was not built with).
std::string read_configuration(const std::string& arg, const std::string& name,
                               matrix::Configuration& out, int& exit_code);

}  // namespace bud::cli
