// End-to-end tests of the `bud` command line: the binary is spawned as a user would run it, with
// stdout, stderr and the exit status captured.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace {

struct Result {
  int status = -1;  ///< exit code, or -1 if the process did not exit normally
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

/// Runs `${BUD_BINARY_DIR}/bud args...` from the source directory (so relative workload paths
/// work) and captures everything.
Result bud(const std::vector<std::string>& args) {
  static int counter = 0;
  const std::string base = std::string(BUD_BINARY_DIR) + "/e2e_" + std::to_string(getpid()) + "_" +
                           std::to_string(counter++);
  const std::string out_path = base + ".out", err_path = base + ".err";
  const std::string exe = std::string(BUD_BINARY_DIR) + "/bud";
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(exe.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  Result r;
  const std::string cwd = BUD_SOURCE_DIR;
  // posix_spawn has no chdir action before glibc 2.29's _np variant; use it when present.
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 29))
  posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
#endif
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  REQUIRE(rc == 0);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  if (WIFEXITED(status)) r.status = WEXITSTATUS(status);
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  std::remove(out_path.c_str());
  std::remove(err_path.c_str());
  return r;
}

bool contains(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}

/// Number of top-level JSON values in `s` (objects/arrays), with a check that braces balance
/// and strings are closed. Enough to tell "exactly one object" from anything else.
int count_top_level_objects(const std::string& s, bool& well_formed) {
  int depth = 0, values = 0;
  bool in_str = false, esc = false;
  well_formed = true;
  for (char c : s) {
    if (in_str) {
      if (esc)
        esc = false;
      else if (c == '\\')
        esc = true;
      else if (c == '"')
        in_str = false;
      continue;
    }
    if (c == '"') {
      in_str = true;
    } else if (c == '{' || c == '[') {
      if (depth++ == 0) ++values;
    } else if (c == '}' || c == ']') {
      if (--depth < 0) well_formed = false;
    } else if (depth == 0 && !std::isspace(static_cast<unsigned char>(c))) {
      well_formed = false;  // text outside the object
    }
  }
  if (depth != 0 || in_str) well_formed = false;
  return values;
}

}  // namespace

TEST_CASE("bud run gemm_small passes", "[e2e][run]") {
  const auto r = bud({"run", "gemm_small"});
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  CHECK(contains(r.out, "PASS"));
  CHECK_FALSE(contains(r.out, "FAIL"));
  CHECK(contains(r.out, "gemm_small"));
}

TEST_CASE("bud run --json prints exactly one JSON object", "[e2e][run][json]") {
  const auto r = bud({"run", "gemm_small", "--json"});
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  bool ok = false;
  CHECK(count_top_level_objects(r.out, ok) == 1);
  CHECK(ok);
  REQUIRE(!r.out.empty());
  CHECK(r.out.front() == '{');
  for (const char* key :
       {"\"workload\":", "\"seed\":", "\"cycles\":", "\"passed\":", "\"counters\":"})
    CHECK(contains(r.out, key));
  CHECK(contains(r.out, "\"workload\":\"gemm_small\""));
  CHECK(contains(r.out, "\"passed\":true"));
  CHECK(contains(r.out, "\"retired_end\":1"));
}

TEST_CASE("same seeds give byte-identical --json output", "[e2e][run][json]") {
  const std::vector<std::string> args = {"run", "mlp",         "--json", "--seed",
                                         "9",   "--mem-seed",  "4",      "--mem-jitter",
                                         "30",  "--mem-bursty"};
  const auto a = bud(args);
  const auto b = bud(args);
  INFO(a.err << b.err);
  CHECK(a.status == 0);
  CHECK(b.status == 0);
  CHECK(a.out == b.out);
  CHECK(contains(a.out, "\"seed\":9"));
  CHECK(contains(a.out, "\"mem_seed\":4"));
  // And the memory seed does reach the run: another one changes the timing.
  auto args2 = args;
  args2[6] = "5";
  const auto c = bud(args2);
  CHECK(c.status == 0);
  CHECK(c.out != a.out);
}

TEST_CASE("bud workloads lists the five built-ins", "[e2e][workloads]") {
  const auto r = bud({"workloads"});
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  for (const char* w : {"compute_bound", "conv", "gemm_small", "mem_bound", "mlp"})
    CHECK(contains(r.out, w));
  int lines = 0;
  for (char c : r.out) lines += c == '\n';
  CHECK(lines == 5);
}

TEST_CASE("an unknown workload is a usage error", "[e2e][errors]") {
  const auto r = bud({"run", "no_such_thing"});
  INFO(r.out << r.err);
  CHECK(r.status == 2);
  CHECK(contains(r.err, "no_such_thing"));
  CHECK(contains(r.err, "neither a built-in workload"));
  CHECK(r.out.empty());
}

TEST_CASE("a workload file with a syntax error names FILE:LINE:COL", "[e2e][errors]") {
  const auto r = bud({"run", "tests/e2e/data/syntax_error.textpb"});
  INFO(r.out << r.err);
  CHECK(r.status == 2);
  // The '=' on line 6, column 21.
  CHECK(contains(r.err, "tests/e2e/data/syntax_error.textpb:6:21:"));
  CHECK(r.out.empty());
}

TEST_CASE("an impossible shape names the file and line of the layer", "[e2e][errors]") {
  const auto r = bud({"run", "tests/e2e/data/impossible_shape.textpb"});
  INFO(r.out << r.err);
  CHECK(r.status == 2);
  CHECK(contains(r.err, "tests/e2e/data/impossible_shape.textpb:10:"));
  CHECK(contains(r.err, "fc2"));
  CHECK(r.out.empty());
}

TEST_CASE("invalid option values and unknown flags are usage errors", "[e2e][errors]") {
  SECTION("--mem-bw 0") {
    const auto r = bud({"run", "gemm_small", "--mem-bw", "0"});
    INFO(r.err);
    CHECK(r.status == 2);
    CHECK(contains(r.err, "bytes_per_cycle"));
  }
  SECTION("--bogus-flag") {
    const auto r = bud({"run", "--bogus-flag"});
    INFO(r.err);
    CHECK(r.status == 2);
    CHECK(contains(r.err, "--bogus-flag"));
  }
  SECTION("--throttle without a valid period") {
    const auto r = bud({"run", "gemm_small", "--throttle", "3", "--throttle-period", "3"});
    INFO(r.err);
    CHECK(r.status == 2);
    CHECK(contains(r.err, "throttle"));
  }
}

TEST_CASE("a run that does not finish within --max-cycles fails", "[e2e][run]") {
  const auto r = bud({"run", "gemm_small", "--max-cycles", "100"});
  INFO(r.out << r.err);
  CHECK(r.status == 1);
  CHECK(contains(r.out, "FAIL"));
  CHECK(contains(r.out, "--max-cycles 100"));
}

TEST_CASE("help texts exit 0 and show an example", "[e2e][help]") {
  const auto top = bud({"--help"});
  CHECK(top.status == 0);
  CHECK(contains(top.out, "Examples:"));
  CHECK(contains(top.out, "bud run gemm_small"));
  const auto run = bud({"run", "--help"});
  CHECK(run.status == 0);
  CHECK(contains(run.out, "Examples:"));
  CHECK(contains(run.out, "bud run compute_bound --json"));
  CHECK(contains(run.out, "--mem-seed"));
}
