#include "debugger/remote/ListenAddress.h"

#include <arpa/inet.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>

namespace bud::remote {

namespace {

bool is_ipv4(const std::string& h, in_addr& out) {
  return inet_pton(AF_INET, h.c_str(), &out) == 1;
}
bool is_ipv6(const std::string& h, in6_addr& out) {
  return inet_pton(AF_INET6, h.c_str(), &out) == 1;
}

}  // namespace

bool ListenAddress::loopback() const {
  if (kind == Kind::Unix) return true;
  if (host == "localhost") return true;
  in_addr v4{};
  if (is_ipv4(host, v4)) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (is_ipv6(host, v6)) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

std::string ListenAddress::grpc_uri() const {
  if (kind == Kind::Unix) return "unix:" + path;
  const std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return h + ":" + std::to_string(port);
}

std::string ListenAddress::to_string() const {
  if (kind == Kind::Unix) return "unix:" + path;
  return "tcp:" + grpc_uri();
}

std::optional<ListenAddress> parse_listen_address(const std::string& text, std::string& error) {
  ListenAddress a;
  if (text.rfind("unix:", 0) == 0) {
    std::string p = text.substr(5);
    if (p.empty()) {
      error = "'" + text + "': expected unix:PATH";
      return std::nullopt;
    }
    if (p[0] != '/') {
      char cwd[PATH_MAX];
      if (!getcwd(cwd, sizeof cwd)) {
        error = "cannot resolve '" + p + "': the current directory is unreadable";
        return std::nullopt;
      }
      p = std::string(cwd) + "/" + p;
    }
    if (p.size() > 107) {
      error = "'" + p + "': a Unix socket path is limited to 107 bytes";
      return std::nullopt;
    }
    a.kind = ListenAddress::Kind::Unix;
    a.path = p;
    return a;
  }
  if (text.rfind("tcp:", 0) == 0) {
    const std::string rest = text.substr(4);
    std::string host, port;
    if (!rest.empty() && rest[0] == '[') {
      const auto close = rest.find(']');
      if (close == std::string::npos || close + 1 >= rest.size() || rest[close + 1] != ':') {
        error = "'" + text + "': expected tcp:[IPV6]:PORT";
        return std::nullopt;
      }
      host = rest.substr(1, close - 1);
      port = rest.substr(close + 2);
    } else {
      const auto colon = rest.rfind(':');
      if (colon == std::string::npos) {
        error = "'" + text + "': expected tcp:HOST:PORT";
        return std::nullopt;
      }
      host = rest.substr(0, colon);
      port = rest.substr(colon + 1);
    }
    in_addr v4{};
    in6_addr v6{};
    if (host != "localhost" && !is_ipv4(host, v4) && !is_ipv6(host, v6)) {
      error = "'" + host + "': use an IP address or localhost (host names are not resolved)";
      return std::nullopt;
    }
    char* end = nullptr;
    errno = 0;
    const unsigned long n = port.empty() ? ULONG_MAX : std::strtoul(port.c_str(), &end, 10);
    if (port.empty() || errno != 0 || *end != '\0' || n > 65535) {
      error = "'" + port + "': expected a port number 0..65535";
      return std::nullopt;
    }
    a.kind = ListenAddress::Kind::Tcp;
    a.host = host;
    a.port = static_cast<uint16_t>(n);
    return a;
  }
  error = "'" + text + "': expected unix:PATH or tcp:HOST:PORT";
  return std::nullopt;
}

}  // namespace bud::remote
