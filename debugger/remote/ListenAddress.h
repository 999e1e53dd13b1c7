// Where `bud serve` listens and `bud attach` connects: "unix:PATH" or "tcp:HOST:PORT", and
// whether that address is reachable only from this machine.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace bud::remote {

/// A parsed listen/connect address.
struct ListenAddress {
  enum class Kind { Unix, Tcp };
  Kind kind = Kind::Unix;
  std::string path;   ///< Unix: absolute socket path
  std::string host;   ///< Tcp: IPv4/IPv6 literal or "localhost" (IPv6 without brackets)
  uint16_t port = 0;  ///< Tcp: 0 lets the server choose (see DebugServer::address())

  /// Only this machine can connect: a Unix socket, 127.0.0.0/8, ::1 or localhost.
  bool loopback() const;
  /// The gRPC target/listen URI ("unix:/abs/path", "127.0.0.1:7000", "[::1]:7000").
  std::string grpc_uri() const;
  /// The user-facing form accepted by parse_listen_address ("unix:/abs/path",
  /// "tcp:127.0.0.1:7000").
  std::string to_string() const;
};

/// Parses "unix:PATH" (relative paths become absolute; at most 107 bytes, the sun_path limit) or
/// "tcp:HOST:PORT" (HOST an IP literal, "[v6]" or "localhost"; other host names are refused so
/// that what is bound is what was checked). nullopt with a one-line `error` otherwise.
std::optional<ListenAddress> parse_listen_address(const std::string& text, std::string& error);

}  // namespace bud::remote
