#include "debugger/remote/OutputDir.h"

#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace bud::remote {

namespace {

std::optional<std::string> canonical(const std::string& p) {
  char buf[PATH_MAX];
  if (!realpath(p.c_str(), buf)) return std::nullopt;
  return std::string(buf);
}

bool inside(const std::string& root, const std::string& p) {
  return p == root ||
         (p.size() > root.size() && p.compare(0, root.size(), root) == 0 && p[root.size()] == '/');
}

}  // namespace

std::optional<OutputDir> OutputDir::open(const std::string& path, std::string& error) {
  if (path.empty()) {
    error = "the output directory must be named";
    return std::nullopt;
  }
  if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    error = path + ": cannot create the output directory: " + std::strerror(errno);
    return std::nullopt;
  }
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    error = path + ": not a directory";
    return std::nullopt;
  }
  auto c = canonical(path);
  if (!c) {
    error = path + ": cannot resolve the output directory";
    return std::nullopt;
  }
  return OutputDir(*c);
}

std::optional<std::string> OutputDir::resolve(const std::string& name, std::string& error) const {
  auto refuse = [&](const std::string& why) {
    error = "'" + name + "': " + why + " (files are written inside the server's output directory)";
    return std::nullopt;
  };
  if (name.empty()) return refuse("empty file name");
  if (name.size() > 255) return refuse("file name too long");
  if (name[0] == '/') return refuse("absolute paths are not allowed");
  for (char ch : name)
    if (static_cast<unsigned char>(ch) < 0x20 || ch == '"' || ch == '\\' || ch == 0x7f)
      return refuse("quotes, backslashes and control characters are not allowed");
  // Component check first: ".." anywhere is refused even if it would stay inside.
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('/', start);
    if (end == std::string::npos) end = name.size();
    const std::string comp = name.substr(start, end - start);
    if (comp == "..") return refuse("'..' is not allowed");
    start = end + 1;
  }
  if (name.back() == '/') return refuse("names a directory");
  const std::string full = root_ + "/" + name;
  const std::string parent = full.substr(0, full.rfind('/'));
  auto cparent = canonical(parent);
  if (!cparent) return refuse("its directory does not exist");
  if (!inside(root_, *cparent)) return refuse("it resolves outside the output directory");
  const std::string leaf = full.substr(full.rfind('/') + 1);
  if (leaf == ".") return refuse("names a directory");
  const std::string resolved = *cparent + "/" + leaf;
  struct stat st {};
  if (lstat(resolved.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return refuse("exists and is not a regular file");
  return resolved;
}

}  // namespace bud::remote
