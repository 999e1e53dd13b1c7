#include "replay/InputFile.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace bud::replay {

namespace {

void append_escape(std::string& out, unsigned char c) {
  switch (c) {
    case '\n':
      out += "\\n";
      return;
    case '\t':
      out += "\\t";
      return;
    case '\r':
      out += "\\r";
      return;
    default: {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
}

// Length of the valid UTF-8 sequence at s[i] (1..4), or 0 if it is not one.
size_t utf8_length(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  const size_t n = c < 0x80                 ? 1
                   : c >= 0xC2 && c < 0xE0  ? 2
                   : c >= 0xE0 && c < 0xF0  ? 3
                   : c >= 0xF0 && c <= 0xF4 ? 4
                                            : 0;
  if (n <= 1 || i + n > s.size()) return n == 1 ? 1 : 0;
  uint32_t cp = n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
  for (size_t k = 1; k < n; ++k) {
    const auto d = static_cast<unsigned char>(s[i + k]);
    if ((d & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (d & 0x3F);
  }
  // Overlong forms, surrogates, beyond U+10FFFF.
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
      (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  // C1 controls (U+0080..U+009F: CSI and friends) are escaped like C0 ones.
  if (cp >= 0x80 && cp <= 0x9F) return 0;
  return n;
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const size_t n = utf8_length(text, i);
    if (n == 0 || (n == 1 && (c < 0x20 || c == 0x7F))) {
      append_escape(out, c);
      ++i;
      continue;
    }
    out.append(text.substr(i, n));
    i += n;
  }
  return out;
}

std::optional<InputFile> InputFile::open(const std::string& path, std::string& error) {
  const std::string name = printable(path);
  if (path.empty()) {
    error = "empty file name";
    return std::nullopt;
  }
  // O_NONBLOCK: opening a FIFO with no writer must not hang; it is refused below anyway.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    const int e = errno;
    error = name + ": cannot open: " + std::strerror(e);
    return std::nullopt;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    error = name + ": cannot stat: " + std::strerror(errno);
    ::close(fd);
    return std::nullopt;
  }
  const char* kind = S_ISDIR(st.st_mode)    ? "is a directory"
                     : S_ISFIFO(st.st_mode) ? "is a FIFO (named pipe)"
                     : S_ISCHR(st.st_mode)  ? "is a character device"
                     : S_ISBLK(st.st_mode)  ? "is a block device"
                     : S_ISSOCK(st.st_mode) ? "is a socket"
                     : !S_ISREG(st.st_mode) ? "is a special file"
                                            : nullptr;
  if (kind) {
    error = name + ": " + kind + ", not a regular file";
    ::close(fd);
    return std::nullopt;
  }
  // Back to blocking reads for a regular file (O_NONBLOCK has no effect on them, but be plain).
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return InputFile(fd, static_cast<uint64_t>(st.st_size), name);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

bool InputFile::read_at(uint64_t offset, std::span<uint8_t> out, std::string& error) const {
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t k =
        ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) {
      error = name_ + ": read error at byte " + std::to_string(offset + done) + ": " +
              std::strerror(errno);
      return false;
    }
    if (k == 0) {
      error = name_ + ": ends at byte " + std::to_string(offset + done) + " (it was " +
              std::to_string(size_) + " bytes when opened)";
      return false;
    }
    done += static_cast<size_t>(k);
  }
  return true;
}

}  // namespace bud::replay
