// Opening a file named on the command line as an input (a packet, and any other file a command
// reads whole): it must be a regular file this process can read. Directories, FIFOs, devices and
// sockets are refused before a byte is read (a FIFO is opened non-blocking, so nothing waits on
// it), and every message names the file in printable form, whatever bytes its name holds.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace bud::replay {

/// `text` safe to print on a terminal and in one line: valid UTF-8 stays as is; control
/// characters (C0, DEL, C1: terminal escape sequences start with them), bytes that are not
/// valid UTF-8 become C-style escapes (\n, \t, \x1b). Idempotent (backslash is kept as is), so
/// a message built from already printable parts may be passed through again.
std::string printable(std::string_view text);

/// A regular file opened for reading. Closes on destruction.
class InputFile {
 public:
  /// Opens `path`. nullopt and `error` ("PATH: is a directory", "PATH: is a FIFO, not a regular
  /// file", "PATH: cannot open: Permission denied", ...) if it is not a readable regular file.
  static std::optional<InputFile> open(const std::string& path, std::string& error);
  InputFile(InputFile&& o) noexcept : fd_(o.fd_), size_(o.size_), name_(std::move(o.name_)) {
    o.fd_ = -1;
  }
  InputFile& operator=(InputFile&&) = delete;
  InputFile(const InputFile&) = delete;
  ~InputFile();

  /// Size in bytes when it was opened.
  uint64_t size() const { return size_; }
  /// The path in printable form, for messages.
  const std::string& name() const { return name_; }
  /// Reads exactly `out.size()` bytes at byte `offset`. False and `error` (naming the file and
  /// the offset) on a read error or if the file ends first.
  bool read_at(uint64_t offset, std::span<uint8_t> out, std::string& error) const;

 private:
  InputFile(int fd, uint64_t size, std::string name)
      : fd_(fd), size_(size), name_(std::move(name)) {}
  int fd_ = -1;
  uint64_t size_ = 0;
  std::string name_;
};

}  // namespace bud::replay
