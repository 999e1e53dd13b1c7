// Shared-secret authentication of remote clients: the token comes from a file readable only by
// its owner and is sent as "authorization: Bearer TOKEN" metadata; it is compared in constant
// time so that response timing does not reveal how much of a guess was right.
#pragma once

#include <optional>
#include <string>

namespace bud::remote {

/// Reads a token file: the first line without surrounding whitespace, at least 16 bytes. Refuses
/// a file that its group or others may read (mode & 077), so a token never sits world-readable.
/// nullopt with a one-line `error` naming the file otherwise.
std::optional<std::string> load_token_file(const std::string& path, std::string& error);

/// Equality whose running time depends only on the lengths, not on where the strings differ.
bool constant_time_equal(const std::string& a, const std::string& b);

/// Checks an "authorization" metadata value against the expected token (constant time).
class TokenAuth {
 public:
  /// No token: every request is accepted (Unix sockets, whose 0600 mode is the access control).
  TokenAuth() = default;
  explicit TokenAuth(std::string token) : token_(std::move(token)) {}
  bool required() const { return !token_.empty(); }
  /// True when no token is required or `header` is "Bearer TOKEN".
  bool accepts(const std::string& header) const;

 private:
  std::string token_;
};

}  // namespace bud::remote
