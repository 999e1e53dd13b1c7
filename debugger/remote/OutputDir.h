// The one directory a server writes into (waveforms, replay packets, trigger captures and logs,
// checkpoint state files, saved breakpoints): every file the server writes is created by
// OutputDir::create(), relative to a descriptor of the directory, never through a symlink.
#pragma once

#include <optional>
#include <string>

namespace bud::remote {

class OutputDir {
 public:
  /// Creates `path` (mode 0700) if missing, opens it and pins its canonical location. nullopt
  /// with `error` if it cannot be created or is not a directory.
  static std::optional<OutputDir> open(const std::string& path, std::string& error);
  ~OutputDir();
  OutputDir(OutputDir&& o) noexcept;
  OutputDir& operator=(OutputDir&& o) noexcept;
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;

  /// Canonical absolute path of the directory.
  const std::string& path() const { return root_; }

  /// The confinement function: prepares the client- or trigger-supplied file `name` for writing
  /// and returns the absolute path to write. Walks every directory component with
  /// openat(O_NOFOLLOW | O_DIRECTORY) from the directory's descriptor and creates the last one
  /// with openat(O_CREAT | O_EXCL | O_NOFOLLOW); an existing file is reused (truncated) only if
  /// it is a regular file with no other hard link. So a symlink anywhere in `name` (to a file,
  /// to a directory, dangling) is refused, and nothing outside the directory is ever created or
  /// truncated. Refused too: empty names, absolute paths, '.' and '..' components, quotes and
  /// control characters, names over 255 bytes, missing directories. nullopt with a one-line
  /// `error` then.
  std::optional<std::string> create(const std::string& name, std::string& error) const;

  /// Resolves a file name to read (`trigger load`): the same name rules, and the file must be a
  /// regular file reached without any symlink. nullopt with `error` otherwise.
  std::optional<std::string> resolve(const std::string& name, std::string& error) const;

 private:
  OutputDir(std::string root, int fd) : root_(std::move(root)), fd_(fd) {}
  /// Opens the directory holding `name`'s last component without following symlinks and sets
  /// `relative` to the normalized name ("/a/b"); -1 with `error` if refused. The caller closes a
  /// descriptor other than fd_.
  int open_parent(const std::string& name, std::string& relative, std::string& error) const;
  std::string root_;
  int fd_ = -1;  ///< the directory, opened once
};

}  // namespace bud::remote
