// Shared helpers of the remote tests: temporary directories, a `bud serve` child process (with
// its listening address, thread count and resident memory), an in-process server over an NPU
// session, and small client helpers.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "debugger/remote/DebugServer.h"
#include "debugger/remote/RemoteClient.h"
#include "debugger/trigger/TriggerEngine.h"
#include "tests/debugger/DebuggerTestSupport.h"

extern char** environ;

namespace bud::test {

/// A fresh directory under the build tree, removed at the end of the test.
struct TempDir {
  std::string path;
  TempDir() {
    std::string tmpl = std::string(BUD_BINARY_DIR) + "/remote_test_XXXXXX";
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string operator/(const std::string& name) const { return path + "/" + name; }
};

inline std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

/// Writes a token file with mode 0600 and returns its path.
inline std::string write_token(const TempDir& dir, const std::string& token) {
  const std::string p = dir / "token";
  {
    std::ofstream f(p);
    f << token << "\n";
  }
  chmod(p.c_str(), 0600);
  return p;
}

/// Spawns `${BUD_BINARY_DIR}/bud args...` from the source directory; stdout and stderr go to
/// files. Returns the pid.
inline pid_t spawn_bud(const std::vector<std::string>& args, const std::string& out,
                       const std::string& err) {
  const std::string exe = std::string(BUD_BINARY_DIR) + "/bud";
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(exe.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addchdir_np(&fa, BUD_SOURCE_DIR);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  REQUIRE(rc == 0);
  return pid;
}

/// Polls `cond` every 10 ms until it holds or `seconds` pass; returns its last value. For
/// conditions the server announces no event for (cycles advancing, threads ending).
template <class Cond>
bool eventually(Cond cond, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!cond()) {
    if (std::chrono::steady_clock::now() >= end) return cond();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

/// Waits up to `seconds` for `pid` to exit; returns its exit status, or -1 (then kills it).
inline int wait_exit(pid_t pid, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int status = 0;
  while (std::chrono::steady_clock::now() < end) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

/// A `bud serve` child: started with --json, ready once its listening line is printed.
class ServerProcess {
 public:
  ServerProcess(const TempDir& dir, std::vector<std::string> args) : dir_(dir) {
    args.insert(args.begin(), "serve");
    args.push_back("--json");
    args.push_back("--output-dir");
    args.push_back(dir / "out");
    out_ = dir / ("serve" + std::to_string(counter_++) + ".out");
    err_ = out_ + ".err";
    pid_ = spawn_bud(args, out_, err_);
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < end) {
      const std::string text = slurp(out_);
      const auto k = text.find("\"listening\":\"");
      if (k != std::string::npos && text.find('\n') != std::string::npos) {
        const auto b = k + 13;
        address_ = text.substr(b, text.find('"', b) - b);
        return;
      }
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        FAIL("bud serve exited early: " << slurp(err_));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    FAIL("bud serve did not start: " << slurp(err_));
  }
  ~ServerProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      const int rc = wait_exit(pid_, 10);
      // A server that died on its own (a crash, a sanitizer report) says why in the test log.
      if (rc != 0 && rc != 128 + SIGTERM)
        std::fprintf(stderr, "bud serve exited with status %d:\n%s\n", rc, slurp(err_).c_str());
    }
  }
  const std::string& address() const { return address_; }
  pid_t pid() const { return pid_; }
  std::string stderr_text() const { return slurp(err_); }
  /// Ends the server with SIGTERM; returns its exit status.
  int stop() {
    kill(pid_, SIGTERM);
    const int rc = wait_exit(pid_, 10);
    pid_ = -1;
    return rc;
  }
  /// A field of /proc/PID/status ("Threads", "VmRSS" in kB).
  long proc_status(const std::string& key) const {
    std::ifstream f("/proc/" + std::to_string(pid_) + "/status");
    std::string line;
    while (std::getline(f, line))
      if (line.rfind(key + ":", 0) == 0) return std::atol(line.c_str() + key.size() + 1);
    return -1;
  }

 private:
  const TempDir& dir_;
  std::string out_, err_, address_;
  pid_t pid_ = -1;
  static inline int counter_ = 0;
};

/// Connects (REQUIRE success).
inline std::unique_ptr<remote::RemoteClient> attach(const std::string& address, bool control = true,
                                                    const std::string& token_file = "",
                                                    const std::string& name = "test") {
  remote::ClientOptions o;
  o.address = address;
  o.want_control = control;
  o.token_file = token_file;
  o.name = name;
  std::string error;
  auto c = remote::RemoteClient::connect(o, error);
  INFO(error);
  REQUIRE(c);
  return c;
}

/// Status of the server (with the state digest).
inline remote::v1::Status status(remote::RemoteClient& c, bool digest = true) {
  auto ctx = c.context(std::chrono::seconds(20));
  remote::v1::StatusRequest req;
  req.set_digest(digest);
  remote::v1::Status st;
  const auto s = c.stub().GetStatus(ctx.get(), req, &st);
  INFO(remote::status_text(s));
  REQUIRE(s.ok());
  return st;
}

/// Runs a line that must succeed on the server.
inline remote::v1::CommandReply ok(remote::RemoteClient& c, const std::string& line) {
  remote::v1::CommandReply r;
  const auto s = c.execute(line, r);
  INFO(line << ": " << remote::status_text(s) << " / " << r.error());
  REQUIRE(s.ok());
  REQUIRE(r.ok());
  return r;
}

/// Waits for an event of a kind ("stopped", "trigger_hit", ...), skipping others.
inline std::optional<remote::v1::Event> wait_for(remote::RemoteClient& c, const std::string& kind,
                                                 double seconds = 60) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    auto e = c.next_event(std::chrono::milliseconds(100));
    if (!e) continue;
    const auto* f = e->GetDescriptor()->FindOneofByName("kind");
    const auto* set = e->GetReflection()->GetOneofFieldDescriptor(*e, f);
    if (set && set->name() == kind) return e;
  }
  return std::nullopt;
}

/// An in-process server over an NPU session of `workload` on a Unix socket in `dir`.
struct InProcessServer {
  std::unique_ptr<debugger::Session> session;
  std::unique_ptr<debugger::TriggerEngine> triggers;  ///< attached first, as bud serve does
  std::optional<remote::OutputDir> out;
  std::unique_ptr<remote::DebugServer> server;
  std::string address;

  InProcessServer(const TempDir& dir, const std::string& workload,
                  remote::ServerConfig config = {}) {
    session = make_session(workload);
    triggers =
        std::make_unique<debugger::TriggerEngine>(session->emu(), debugger::TriggerEngineConfig{});
    triggers->attach(*session);
    std::string error;
    out = remote::OutputDir::open(dir / "out", error);
    REQUIRE(out);
    config.address = *remote::parse_listen_address("unix:" + (dir / "s.sock"), error);
    server = std::make_unique<remote::DebugServer>(*session, *out, config);
    const auto e = server->start();
    INFO(e);
    REQUIRE(e.empty());
    address = server->address().to_string();
  }
  ~InProcessServer() {
    server->request_shutdown();
    server->wait();
    server.reset();
    triggers->detach();
  }
};

}  // namespace bud::test
