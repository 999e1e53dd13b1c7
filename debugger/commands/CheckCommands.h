// Commands over the session's golden-model check: `break on|off mismatch` and `info check`.
#pragma once

#include "debugger/commands/Interpreter.h"

namespace bud::debugger {

/// `break on mismatch` / `break off mismatch`: whether a divergence from the golden model stops
/// the run (the check goes on either way). `a.words[0]` is "on" or "off".
void break_on_off(Interpreter& in, const Args& a, CommandResult& r);
/// `info check`: per stage, transactions checked so far and the first divergence; then result.
void info_check(Interpreter& in, CommandResult& r);

}  // namespace bud::debugger
