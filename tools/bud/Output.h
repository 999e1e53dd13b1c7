// Rendering of run results for people (tables) and tools (JSON), and terminal progress.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "emu/run/RunJob.h"
#include "debugger/json/Json.h"

namespace bud::cli {

using json::Json;

/// "12,345,678"
std::string group_digits(uint64_t v);

/// A progress line on stderr, only when stderr is a terminal. Wall-clock time is used for the
/// displayed rate only; it never affects the simulation.
class ProgressLine {
 public:
  explicit ProgressLine(std::string label);
  ~ProgressLine() { finish(); }
  void update(uint64_t cycle);
  void finish();

 private:
  std::string label_;
  bool enabled_ = false;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_;
};

/// The run report as a table.
std::string report_text(const run::RunReport& r, const run::PreparedRun& p);
/// The run report as JSON: workload, seed, mem_seed, model_revision, cycles, state, passed,
/// failures, mac_utilization, counters (name -> value), stages, digests.
Json report_json(const run::RunReport& r);

/// Ends subcommand `command` with an error: "bud COMMAND: MESSAGE" on stderr and, when `json`,
/// also exactly one object on stdout: {"error": KIND, "message": MESSAGE, "exit_code": CODE}
/// (KIND "bad_input" for 2, "untestable" for 125, "error" otherwise). Returns `code`.
/// Exit status of a command asked for an array configuration this bud was not built with
/// (`--config npu32` without -DBUD_NPU_VARIANTS naming it; 4 is `bud profile`'s unwritable
/// output); JSON error kind "not_built".
inline constexpr int kExitNotBuilt = 5;
int fail_command(const std::string& command, bool json, int code, const std::string& message);
/// That object alone, {"error": KIND, "message": "bud COMMAND: MESSAGE", "exit_code": CODE}, for
/// a command that reports an error beside results it still has (`bud profile --design`).
Json error_json(const std::string& command, int code, const std::string& message);

/// The same object, for a command-line (CLI11) usage error: KIND "usage", exit status 2.
std::string usage_error_json(const std::string& message);

/// replay::write_file_atomically (a sibling temporary and a rename: the file appears whole or not
/// at all; a device or FIFO is written in place). False when it cannot be written.
bool write_file_atomically(const std::string& path, const std::string& text);

/// Exit status of a checked run: 0 passed, 3 the --max-cycles budget ran out (cycle limit),
/// 1 any other failure (check, hang, assertion, design error). docs/cli.md.
int run_exit_code(const run::RunReport& r);

}  // namespace bud::cli
