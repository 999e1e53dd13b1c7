#include "tools/process/Subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace bud::process {

Finished run(const std::vector<std::string>& argv) {
  Finished r;
  if (argv.empty()) {
    r.err = "no program to run";
    return r;
  }
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) {
    r.err = argv[0] + ": cannot run: " + std::strerror(errno);
    return r;
  }
  if (::pipe2(err, O_CLOEXEC) != 0) {
    r.err = argv[0] + ": cannot run: " + std::strerror(errno);
    ::close(out[0]);
    ::close(out[1]);
    return r;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(out[1]);
  ::close(err[1]);
  if (rc != 0) {
    r.err = argv[0] + ": cannot run: " + std::strerror(rc);
    ::close(out[0]);
    ::close(err[0]);
    return r;
  }
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string* text[2] = {&r.out, &r.err};
  int open = 2;
  while (open > 0) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[8192];
      const ssize_t k = ::read(fds[i].fd, buf, sizeof buf);
      if (k < 0 && errno == EINTR) continue;
      if (k > 0) {
        text[i]->append(buf, static_cast<size_t>(k));
        continue;
      }
      ::close(fds[i].fd);
      fds[i].fd = -1;
      --open;
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) ::close(f.fd);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace bud::process
