// `bud packet inspect`: what a replay packet holds (seeds, revision, workload, cycles, symptom,
// checkpoints, size by record kind), for people and, with --json, for tools.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace bud::cli {

struct PacketOptions {
  std::string path;
  bool json = false;
};

void setup_packet(CLI::App& app, PacketOptions& options);
/// Exit code: 0 readable (an incomplete packet is reported with a warning), 2 unreadable.
int run_packet(const PacketOptions& options);

}  // namespace bud::cli
