// The C++ client of the debug service (bud attach, tests, benchmarks): connects, attaches (the
// Attach stream is read on a background thread into an event queue), and makes calls that carry
// the token and session id.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "remote.grpc.pb.h"

namespace bud::remote {

struct ClientOptions {
  std::string address;     ///< unix:PATH or tcp:HOST:PORT
  std::string token_file;  ///< required by TCP servers
  std::string name = "bud attach";
  bool want_control = true;
  bool require_control = false;
  std::chrono::milliseconds connect_timeout{5000};
};

class RemoteClient {
 public:
  /// Connects and attaches. Null with a one-line `error` (unreachable, refused, bad token...).
  static std::unique_ptr<RemoteClient> connect(const ClientOptions& options, std::string& error);
  /// Detaches (the emulation goes on).
  ~RemoteClient();
  RemoteClient(const RemoteClient&) = delete;
  RemoteClient& operator=(const RemoteClient&) = delete;

  const v1::Attached& attached() const { return attached_; }
  bool controller() const { return role_ == v1::ROLE_CONTROLLER; }
  void set_role(v1::Role role) { role_ = role; }
  v1::Debugger::Stub& stub() { return *stub_; }
  /// A context with the token and session metadata (and a deadline when given).
  std::unique_ptr<grpc::ClientContext> context(
      std::optional<std::chrono::milliseconds> deadline = std::nullopt) const;

  /// Runs one prompt line on the server.
  grpc::Status execute(const std::string& line, v1::CommandReply& reply);
  /// Next event of the Attach stream; nullopt after `timeout` or when the stream ended.
  std::optional<v1::Event> next_event(std::chrono::milliseconds timeout);
  /// Whether the Attach stream (the session) is still open.
  bool attached_alive() const { return !stream_done_.load(); }
  /// Ends the session now (Detach + cancel the stream); the destructor does it too.
  void detach();

 private:
  RemoteClient() = default;
  void read_events();

  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Debugger::Stub> stub_;
  std::string token_;
  v1::Attached attached_;
  v1::Role role_ = v1::ROLE_UNSPECIFIED;
  grpc::ClientContext stream_ctx_;
  std::unique_ptr<grpc::ClientReader<v1::Event>> stream_;
  std::thread reader_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<v1::Event> events_;
  std::atomic<bool> stream_done_{false};
  bool detached_ = false;
};

/// "CODE: message" for a failed call (e.g. "PERMISSION_DENIED: observers may only read").
std::string status_text(const grpc::Status& status);

}  // namespace bud::remote
