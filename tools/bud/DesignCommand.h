// `bud design check FILE`: reads a design file (docs/designs.md), elaborates its RTL with
// Verilator and checks that every clock, reset, port prefix, width, counter and stage it names
// exists; prints what each port binds (or --json).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace bud::cli {

struct DesignOptions {
  std::string file;
  bool json = false;
};

void setup_design(CLI::App& app, DesignOptions& options);
int run_design(const DesignOptions& options);

}  // namespace bud::cli
