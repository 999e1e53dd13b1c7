// `bud workloads`: list the built-in workloads.
#pragma once

#include <CLI/CLI.hpp>

namespace bud::cli {

struct WorkloadsOptions {
  bool json = false;
  std::string show;  ///< print this built-in's text
};

void setup_workloads(CLI::App& app, WorkloadsOptions& options);
int run_workloads(const WorkloadsOptions& options);

}  // namespace bud::cli
