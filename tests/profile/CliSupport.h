// Shared by the profiler's end-to-end tests: the `bud` binary run as a user would, and its one
// JSON object.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace bud::profile_test {

struct Bud {
  int status = -1;
  std::string out, err;
};

inline std::string read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

/// `${BUD_BINARY_DIR}/bud ARGS` from the source directory (ARGS need no shell quoting).
inline Bud run_bud(const std::string& args) {
  static int n = 0;
  const std::string base = std::string(BUD_BINARY_DIR) + "/profile_cli_" +
                           std::to_string(getpid()) + "_" + std::to_string(n++);
  const std::string cmd = std::string("cd ") + BUD_SOURCE_DIR + " && " + BUD_BINARY_DIR + "/bud " +
                          args + " >" + base + ".out 2>" + base + ".err </dev/null";
  const int s = std::system(cmd.c_str());
  Bud r;
  if (WIFEXITED(s)) r.status = WEXITSTATUS(s);
  r.out = read_all(base + ".out");
  r.err = read_all(base + ".err");
  std::remove((base + ".out").c_str());
  std::remove((base + ".err").c_str());
  return r;
}

/// The whole of stdout must be exactly one JSON object.
inline nlohmann::json one_object(const std::string& out) {
  nlohmann::json j;
  REQUIRE_NOTHROW(j = nlohmann::json::parse(out));
  REQUIRE(j.is_object());
  return j;
}

/// A scratch file path in the build directory, removed by the caller.
inline std::string scratch(const std::string& name) {
  return std::string(BUD_BINARY_DIR) + "/profile_" + std::to_string(getpid()) + "_" + name;
}

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

}  // namespace bud::profile_test
