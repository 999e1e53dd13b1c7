// `bud attach ADDR`: the `bud debug` prompt against an emulation served by `bud serve` (every
// prompt command, -x scripts, --batch, --json), plus an event tail (--events).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace bud::cli {

struct AttachOptions {
  std::string address;               ///< unix:PATH or tcp:HOST:PORT
  std::string token_file;            ///< --token-file F
  std::vector<std::string> scripts;  ///< -x FILE (read here, run on the server line by line)
  bool batch = false;                ///< run the scripts and detach
  bool json = false;                 ///< one JSON object per command, as bud debug --json
  bool observe = false;              ///< attach read-only even if control is free
  bool events = false;               ///< print the event stream until Ctrl-C or the server ends
  std::string name = "bud attach";   ///< --name: how other clients see this one
};

void setup_attach(CLI::App& app, AttachOptions& options);
/// Exit code: 0 when every command succeeded, 1 when one failed, 2 when it cannot attach.
int run_attach(const AttachOptions& options);

}  // namespace bud::cli
