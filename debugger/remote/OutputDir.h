// The one directory a server writes into (waveforms, replay packets, trigger captures): every
// file name in a remote request is resolved inside it, and names that would leave it are refused.
#pragma once

#include <optional>
#include <string>

namespace bud::remote {

class OutputDir {
 public:
  /// Creates `path` (mode 0700) if missing and pins its canonical location. nullopt with
  /// `error` if it cannot be created or is not a directory.
  static std::optional<OutputDir> open(const std::string& path, std::string& error);

  /// Canonical absolute path of the directory.
  const std::string& path() const { return root_; }

  /// Resolves a client-supplied file name to an absolute path inside the directory. Refused:
  /// empty names, absolute paths, any ".." component, quotes and control characters, a parent
  /// directory that does not exist or resolves (through symlinks) outside the directory, and a
  /// final component that is a symlink. nullopt with a one-line `error` then.
  std::optional<std::string> resolve(const std::string& name, std::string& error) const;

 private:
  explicit OutputDir(std::string root) : root_(std::move(root)) {}
  std::string root_;
};

}  // namespace bud::remote
