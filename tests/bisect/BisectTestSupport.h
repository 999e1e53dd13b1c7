// Helpers shared by the bisect tests: recording a run with faults into a packet, running the bud
// binary with its output captured, reading fields of its one-object --json output, and reading
// the per-stage first divergence cycles back from a report's ladder.
#pragma once

#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "debugger/bisect/Bisector.h"
#include "emu/core/Fault.h"
#include "emu/run/RunJob.h"
#include "replay/PacketReader.h"
#include "replay/PacketRun.h"
#include "replay/Recorder.h"

namespace bud::test {

/// The name of a report's first failing stage ("" when none), for comparisons with stage names.
inline std::string stage_of(const debugger::BisectReport& r) {
  return r.first_failing_stage ? debugger::rung_name(*r.first_failing_stage) : "";
}
/// The names of a report's downstream stages, in order.
inline std::vector<std::string> downstream_of(const debugger::BisectReport& r) {
  std::vector<std::string> v;
  for (auto d : r.downstream_stages) v.push_back(debugger::rung_name(d));
  return v;
}

/// A fresh directory under the build tree for one test's files.
inline std::filesystem::path temp_dir(const std::string& name) {
  auto d = std::filesystem::path(BUD_BINARY_DIR) / "tests" / "bisect" / "tmp" / name;
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

/// A file of tests/bisect/data or tests/replay/data.
inline std::string data_file(const std::string& rel) {
  return std::string(BUD_SOURCE_DIR) + "/tests/" + rel;
}

/// Run options for `workload` with the faults given in their text form.
inline run::RunOptions options_with(const std::string& workload,
                                    const std::vector<std::string>& faults = {}) {
  run::RunOptions o;
  o.workload = workload;
  for (const auto& f : faults) {
    std::string error;
    auto spec = emu::parse_fault(f, error);
    INFO(f << ": " << error);
    REQUIRE(spec);
    o.faults.push_back(*spec);
  }
  return o;
}

/// Records a run of `options` to `path`; returns the outcome (the run's report and summary).
inline replay::RecordOutcome record(const std::string& path, const run::RunOptions& options,
                                    replay::RecordConfig config = {}) {
  auto prepared = run::prepare(options);
  INFO(options.workload << ": " << (prepared ? "" : prepared.error()));
  REQUIRE(prepared);
  auto spec = replay::make_spec(options, *prepared);
  REQUIRE(spec);
  auto out = replay::record_run(path, *spec, *prepared, config);
  INFO(out.error);
  REQUIRE(out.error.empty());
  return out;
}

/// Reads a packet that must be readable.
inline replay::Packet read(const std::string& path) {
  std::string error;
  auto p = replay::read_packet(path, error);
  INFO(path << ": " << error);
  REQUIRE(p);
  return std::move(*p);
}

/// Bisects `options` without a packet.
inline debugger::BisectReport bisect_live(const run::RunOptions& options,
                                          const debugger::BisectOptions& bopts = {}) {
  auto prepared = run::prepare(options);
  REQUIRE(prepared);
  return debugger::bisect_run(*prepared, options, bopts);
}

/// The cycle of each stage that the ladder says DIVERGES ("gemm" -> 703).
inline std::map<std::string, uint64_t> ladder_cycles(const debugger::BisectReport& r) {
  std::map<std::string, uint64_t> out;
  for (const auto& l : r.ladder) {
    const auto colon = l.find(": DIVERGES at cycle ");
    if (colon == std::string::npos) continue;
    out[l.substr(0, colon)] = std::stoull(l.substr(colon + 20));
  }
  return out;
}

/// Rung of a stage on the ladder (ingress = 0 ... result = 7; unknown: 99).
inline int rung(const std::string& stage) {
  static const char* kLadder[] = {"ingress", "lowering", "fetch", "load",
                                  "gemm",    "post",     "store", "result"};
  for (int i = 0; i < 8; ++i)
    if (stage == kLadder[i]) return i;
  return 99;
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Quotes for a POSIX shell.
inline std::string q(const std::string& s) {
  std::string r = "'";
  for (char c : s) r += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return r + "'";
}

struct BudResult {
  int status = -1;  ///< exit status (128 + signal if killed)
  std::string out, err;
};

/// Runs `${BUD_BINARY_DIR}/bud ARGS` (ARGS already quoted for a shell) from the source directory.
inline BudResult bud(const std::string& args, const std::filesystem::path& dir) {
  const auto out = (dir / "stdout").string(), err = (dir / "stderr").string();
  const std::string cmd = "cd " + q(BUD_SOURCE_DIR) + " && " +
                          q(std::string(BUD_BINARY_DIR) + "/bud") + " " + args + " >" + q(out) +
                          " 2>" + q(err) + " </dev/null";
  const int s = std::system(cmd.c_str());
  BudResult r;
  if (WIFEXITED(s))
    r.status = WEXITSTATUS(s);
  else if (WIFSIGNALED(s))
    r.status = 128 + WTERMSIG(s);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

/// The raw JSON text of the first member named `key` of a one-object JSON output (strings with
/// their quotes, arrays with their brackets), or nullopt. Enough for bud's flat reports.
inline std::optional<std::string> json_field(const std::string& j, const std::string& key) {
  const std::string k = "\"" + key + "\":";
  const auto at = j.find(k);
  if (at == std::string::npos) return std::nullopt;
  size_t i = at + k.size(), depth = 0;
  bool in_str = false;
  const size_t start = i;
  for (; i < j.size(); ++i) {
    const char c = j[i];
    if (in_str) {
      if (c == '\\')
        ++i;
      else if (c == '"') {
        in_str = false;
        if (depth == 0) return j.substr(start, i + 1 - start);
      }
      continue;
    }
    if (c == '"')
      in_str = true;
    else if (c == '[' || c == '{')
      ++depth;
    else if (c == ']' || c == '}') {
      if (depth == 0) return j.substr(start, i - start);
      if (--depth == 0) return j.substr(start, i + 1 - start);
    } else if (c == ',' && depth == 0) {
      return j.substr(start, i - start);
    }
  }
  return std::nullopt;
}

/// A JSON string member's value without quotes (no escapes expected).
inline std::string json_string(const std::string& j, const std::string& key) {
  auto v = json_field(j, key);
  if (!v || v->size() < 2 || v->front() != '"')
    return "<not a string: " + v.value_or("absent") + ">";
  return v->substr(1, v->size() - 2);
}

inline bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace bud::test
