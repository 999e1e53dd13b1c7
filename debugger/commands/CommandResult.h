// What a debugger command produces. Commands never print: they fill a CommandResult, which the
// front end renders as text or as one JSON object, and which tests inspect directly.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "debugger/json/Json.h"
#include "debugger/session/Session.h"

namespace bud::debugger {

struct CommandResult {
  bool ok = true;
  std::string error;               ///< one line, when !ok
  std::vector<std::string> lines;  ///< human-readable output
  json::Json data = json::Json::object();  ///< the same facts, structured
  std::optional<StopInfo> stop;    ///< set by commands that ran the design
  bool quit = false;               ///< the session should end

  void say(std::string line) { lines.push_back(std::move(line)); }
  void fail(std::string message) {
    ok = false;
    error = std::move(message);
  }
};

/// JSON form of a stop: {"cycle": N, "reasons": [{"kind", "id", "detail"}...]}.
json::Json stop_json(const StopInfo& s);

}  // namespace bud::debugger
