// Running the `bud` binary as a user would, for the end-to-end tests: spawned with stdin from
// /dev/null, stdout, stderr and the exit status captured.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

/// What one `bud` invocation did.
struct Result {
  int status = -1;  ///< exit code, or -1 if the process did not exit normally
  std::string out, err;
};

/// The whole file at `path` ("" if it cannot be read).
std::string slurp(const std::string& path);
/// Runs `${BUD_BINARY_DIR}/bud args...` in `cwd` (default: the source directory, so relative
/// workload paths work) and captures everything.
Result bud(const std::vector<std::string>& args, const std::string& cwd = BUD_SOURCE_DIR);
bool contains(const std::string& s, const std::string& what);
/// stdout of a --json command parsed as exactly one JSON object (nlohmann refuses trailing text).
nlohmann::json one_object(const Result& r);
/// A per-process path in the build tree for a test's file.
std::string temp_path(const std::string& name);
void write_file(const std::string& path, const std::string& bytes);
