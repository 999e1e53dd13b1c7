// A debug server over one Session: listens (Unix socket with mode 0600, or TCP with a token),
// runs the emulation thread, and tears everything down on Shutdown or a signal. `bud serve` is
// a thin CLI around it; tests can run one in-process.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "debugger/remote/ListenAddress.h"
#include "debugger/remote/OutputDir.h"
#include "debugger/session/Session.h"

namespace bud::debugger {
class RecordBackend;
}

namespace grpc {
class Server;
}

namespace bud::remote {

struct ServerConfig {
  /// What the controller's `record start|stop` writes packets with (not owned; null: not
  /// available).
  debugger::RecordBackend* record = nullptr;
  ListenAddress address;
  /// Required for TCP; optional on a Unix socket (then enforced too).
  std::optional<std::string> token;
  /// Binding a non-loopback address needs this and a token.
  bool allow_remote = false;
  size_t max_clients = 16;
  size_t max_request_bytes = 64 * 1024;  ///< gRPC message limit for requests
  uint32_t max_read_bytes = 1u << 20;    ///< ReadMemory length limit
  size_t max_queue = 256;                ///< jobs waiting for the emulation thread
};

class DebugServer {
 public:
  DebugServer(debugger::Session& session, const OutputDir& output, ServerConfig config);
  ~DebugServer();
  DebugServer(const DebugServer&) = delete;
  DebugServer& operator=(const DebugServer&) = delete;

  /// Checks the security rules, binds and starts serving. Error message or empty.
  std::string start();
  /// The bound address (with the port the system chose for tcp:HOST:0).
  const ListenAddress& address() const { return address_; }
  /// Starts `continue` in the background, as a controller's Continue(wait=false) would.
  std::string run_in_background();
  /// Asks wait() to return (thread-safe; not async-signal-safe).
  void request_shutdown();
  /// Blocks until a Shutdown request or request_shutdown(), then stops the emulation thread,
  /// ends every session, stops listening and removes the socket file.
  void wait();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  ListenAddress address_;
};

}  // namespace bud::remote
