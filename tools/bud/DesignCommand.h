// `bud design check FILE` reads a design file (docs/designs.md), elaborates its RTL with
// Verilator and checks that every clock, reset, port prefix, width, counter and stage it names
// exists; prints what each port binds (or --json). `bud design build FILE` then Verilates it into
// a loadable model cached by revision.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace bud::cli {

struct DesignOptions {
  std::string action;  ///< "check" or "build"
  std::string file;
  bool json = false;
  std::string cache;  ///< build: the model cache (default docs/designs.md)
};

void setup_design(CLI::App& app, DesignOptions& options);
int run_design(const DesignOptions& options);

}  // namespace bud::cli
