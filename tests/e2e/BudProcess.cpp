#include "tests/e2e/BudProcess.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>

extern char** environ;

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

Result bud(const std::vector<std::string>& args, const std::string& cwd) {
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

nlohmann::json one_object(const Result& r) {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  nlohmann::json v;
  REQUIRE_NOTHROW(v = nlohmann::json::parse(r.out));
  REQUIRE(v.is_object());
  return v;
}

std::string temp_path(const std::string& name) {
  return std::string(BUD_BINARY_DIR) + "/e2e_json_" + std::to_string(getpid()) + "_" + name;
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}
