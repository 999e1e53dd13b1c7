// `bud serve`: run a workload (or a replay packet's run) under the debug service, so that
// `bud attach` and the Python client (tools/python/bud_client) can drive and observe it.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "emu/run/RunJob.h"
#include "tools/bud/TriggerCommand.h"

namespace bud::cli {

struct ServeOptions {
  run::RunOptions run;
  std::vector<std::string> fault_texts;
  std::string packet;                        ///< --packet P
  std::string triggers;                      ///< --triggers FILE
  TriggerLimitOptions trigger_limits;  ///< --max-trigger-history, --max-session-trigger-history
  std::string listen = "unix:bud.sock";      ///< --listen unix:PATH | tcp:HOST:PORT
  std::string token_file;                    ///< --token-file F (required for TCP)
  bool allow_remote = false;                 ///< --allow-remote: bind a non-loopback address
  std::string output_dir = "bud-serve-out";  ///< --output-dir: every file the server writes
  bool run_now = false;                      ///< --run: start running at once
  size_t max_clients = 16;
  uint32_t max_read_bytes = 1u << 20;
  uint64_t checkpoint_interval = 0;  ///< 0: the Session's default (as bud debug)
  uint64_t checkpoint_budget_mb = 512;
  bool json = false;  ///< the "listening" line as JSON
  /// --design FILE: serve a design file's model (docs/designs.md), with its --define/--param
  /// overrides and model cache; a design packet given to --packet is served likewise.
  std::string design;
  std::vector<std::string> defines, params;
  std::string design_cache;
};

void setup_serve(CLI::App& app, ServeOptions& options);
/// Exit code: 0 after a Shutdown request or SIGINT/SIGTERM, 2 on bad input or when it cannot
/// listen.
int run_serve(const ServeOptions& options);

}  // namespace bud::cli
