#include "debugger/remote/OutputDir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace bud::remote {

namespace {

std::optional<std::string> canonical(const std::string& p) {
  char buf[PATH_MAX];
  if (!realpath(p.c_str(), buf)) return std::nullopt;
  return std::string(buf);
}

std::string why_refused(const std::string& name, const std::string& why) {
  return "'" + name + "': " + why + " (files are written inside the server's output directory)";
}

// The name rules shared by create() and resolve(): the components of a relative name, or an
// empty vector with `error`.
std::vector<std::string> components(const std::string& name, std::string& error) {
  auto refuse = [&](const std::string& why) {
    error = why_refused(name, why);
    return std::vector<std::string>{};
  };
  if (name.empty()) return refuse("empty file name");
  if (name.size() > 255) return refuse("file name too long");
  if (name[0] == '/') return refuse("absolute paths are not allowed");
  for (char ch : name)
    if (static_cast<unsigned char>(ch) < 0x20 || ch == '"' || ch == '\\' || ch == 0x7f)
      return refuse("quotes, backslashes and control characters are not allowed");
  if (name.back() == '/') return refuse("names a directory");
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('/', start);
    if (end == std::string::npos) end = name.size();
    std::string comp = name.substr(start, end - start);
    if (comp == "..") return refuse("'..' is not allowed");
    if (comp == "." && end == name.size()) return refuse("names a directory");
    if (!comp.empty() && comp != ".") out.push_back(std::move(comp));
    start = end + 1;
  }
  if (out.empty()) return refuse("names a directory");
  return out;
}

}  // namespace

OutputDir::~OutputDir() {
  if (fd_ >= 0) ::close(fd_);
}

OutputDir::OutputDir(OutputDir&& o) noexcept : root_(std::move(o.root_)), fd_(o.fd_) { o.fd_ = -1; }

OutputDir& OutputDir::operator=(OutputDir&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    root_ = std::move(o.root_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

std::optional<OutputDir> OutputDir::open(const std::string& path, std::string& error) {
  if (path.empty()) {
    error = "the output directory must be named";
    return std::nullopt;
  }
  if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    error = path + ": cannot create the output directory: " + std::strerror(errno);
    return std::nullopt;
  }
  // The operator names the directory (it may be a symlink); from here on it is the descriptor.
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    error = path + ": not a directory";
    return std::nullopt;
  }
  auto c = canonical(path);
  if (!c) {
    ::close(fd);
    error = path + ": cannot resolve the output directory";
    return std::nullopt;
  }
  return OutputDir(*c, fd);
}

int OutputDir::open_parent(const std::string& name, std::string& relative,
                           std::string& error) const {
  const auto comps = components(name, error);
  if (comps.empty()) return -1;
  std::string normalized;
  for (const auto& c : comps) normalized += "/" + c;
  int dir = fd_;
  for (size_t i = 0; i + 1 < comps.size(); ++i) {
    const int next =
        ::openat(dir, comps[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    const int err = errno;
    if (dir != fd_) ::close(dir);
    if (next < 0) {
      error = why_refused(
          name, err == ENOENT ? "its directory does not exist"
                              : "'" + comps[i] + "' is not a directory inside it (a symlink?)");
      return -1;
    }
    dir = next;
  }
  relative = normalized;
  return dir;
}

std::optional<std::string> OutputDir::create(const std::string& name, std::string& error) const {
  std::string relative;
  const int dir = open_parent(name, relative, error);
  if (dir < 0) return std::nullopt;
  const std::string leaf = relative.substr(relative.rfind('/') + 1);
  struct CloseDir {
    int dir, keep;
    ~CloseDir() {
      if (dir != keep) ::close(dir);
    }
  } close_dir{dir, fd_};
  // O_NONBLOCK: a FIFO planted under the name must not block the server.
  const int common = O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;
  int fd = ::openat(dir, leaf.c_str(), common | O_CREAT | O_EXCL, 0644);
  if (fd < 0 && errno == EEXIST) {
    fd = ::openat(dir, leaf.c_str(), common);
    struct stat st {};
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1)) {
      ::close(fd);
      error = why_refused(name, "exists and is not a regular file of its own");
      return std::nullopt;
    }
    if (fd >= 0 && ftruncate(fd, 0) != 0) {
      error = why_refused(name, std::string("cannot truncate: ") + std::strerror(errno));
      ::close(fd);
      return std::nullopt;
    }
  }
  if (fd < 0) {
    error =
        why_refused(name, errno == ELOOP ? "is a symbolic link"
                                         : std::string("cannot create: ") + std::strerror(errno));
    return std::nullopt;
  }
  ::close(fd);
  // Writers open this path by name (the waveform library also writes NAME.hier beside it, which
  // it unlinks before creating): the file now exists as a regular file of the directory.
  return root_ + relative;
}

std::optional<std::string> OutputDir::resolve(const std::string& name, std::string& error) const {
  std::string relative;
  const int dir = open_parent(name, relative, error);
  if (dir < 0) return std::nullopt;
  const std::string leaf = relative.substr(relative.rfind('/') + 1);
  struct stat st {};
  const int rc = fstatat(dir, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW);
  if (dir != fd_) ::close(dir);
  if (rc == 0 && !S_ISREG(st.st_mode)) {
    error = why_refused(name, "exists and is not a regular file");
    return std::nullopt;
  }
  return root_ + relative;
}

}  // namespace bud::remote
