// `bud design check FILE` reads a design file (docs/designs.md), elaborates its RTL with
// Verilator and checks that every clock, reset, port prefix, width, counter and stage it names
// exists; prints what each port binds (or --json). `bud design build FILE` then Verilates it into
// a loadable model cached by revision.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace bud::cli {

struct DesignOptions {
  std::string action;  ///< "check" or "build"
  std::string file;
  bool json = false;
  std::string cache;  ///< build, run: the model cache (default docs/designs.md)
  uint64_t seed = 1;          ///< run: back-pressure seed
  uint64_t max_cycles = 10'000'000;
  std::string out_dir;        ///< run: where sink files go
  std::string record;         ///< run: write a replay packet here (design/DesignPacket.h)
  std::vector<std::string> defines, params;  ///< NAME=VALUE overrides of [design].defines/parameters
  /// bisect: the changed design (default FILE) and its overrides.
  std::string bad_file;
  std::vector<std::string> bad_defines, bad_params;
};

void setup_design(CLI::App& app, DesignOptions& options);
int run_design(const DesignOptions& options);

}  // namespace bud::cli
