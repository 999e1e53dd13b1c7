// `bud import`: convert an ONNX model into a workload file (docs/import.md).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>

namespace bud::cli {

struct ImportOptions {
  std::string model;             ///< the .onnx file
  std::string output;            ///< -o FILE (empty: print the workload on stdout)
  std::optional<uint64_t> seed;  ///< --seed: the run input's seed (calibration is frozen)
  /// --precision: the precision the quality figures are measured at (int8, bf16, auto, FILE)
  std::string precision;
  bool per_channel = false;  ///< --per-channel: conv/dense weights quantised per output channel
  bool host_attention = false;  ///< --host-attention: attention MatMuls on the host
  bool json = false;
};

void setup_import(CLI::App& app, ImportOptions& options);
/// Exit code: 0 imported, 2 bad input (unreadable, malformed or unsupported model; nothing is
/// written) or an output file that cannot be written.
int run_import(const ImportOptions& options);

}  // namespace bud::cli
