#include "debugger/remote/DebugServer.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/resource_quota.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "debugger/remote/ClientRegistry.h"
#include "debugger/remote/DebugService.h"
#include "debugger/remote/EventBus.h"
#include "debugger/remote/RequestExecutor.h"

namespace bud::remote {

namespace {

// Whether something accepts connections on the Unix socket `path` (a live server).
bool socket_is_live(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  std::strncpy(sa.sun_path, path.c_str(), sizeof sa.sun_path - 1);
  const bool live = connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0;
  close(fd);
  return live;
}

}  // namespace

struct DebugServer::Impl {
  Impl(debugger::Session& session, const OutputDir& output, ServerConfig c)
      : config(std::move(c)),
        clients(config.max_clients),
        executor(
            session, output, [this](const ExecutorEvent& e) { DebugService::publish(events, e); },
            config.max_queue),
        service(executor, clients, events, config.token ? TokenAuth(*config.token) : TokenAuth(),
                RequestLimits{4096, config.max_read_bytes, 256}, [this] { shutdown(); }) {
    executor.set_record_backend(config.record);
  }

  void shutdown() {
    // Notified under the lock: wait() returns (and the server may be destroyed) only after the
    // notifying thread (a gRPC handler) has let go of the condition variable. gRPC's own
    // handler-joining is not visible to ThreadSanitizer, the mutex is.
    std::lock_guard<std::mutex> lock(mutex);
    stop = true;
    cv.notify_all();
  }

  ServerConfig config;
  ClientRegistry clients;
  EventBus events;
  RequestExecutor executor;
  DebugService service;
  std::unique_ptr<grpc::Server> server;
  std::mutex mutex;
  std::condition_variable cv;
  bool stop = false;
  bool started = false;
};

DebugServer::DebugServer(debugger::Session& session, const OutputDir& output, ServerConfig config)
    : impl_(std::make_unique<Impl>(session, output, config)), address_(config.address) {}

DebugServer::~DebugServer() {
  if (impl_->started) {
    request_shutdown();
    wait();
  }
}

std::string DebugServer::start() {
  const auto& c = impl_->config;
  if (!c.address.loopback()) {
    if (!c.allow_remote)
      return c.address.to_string() +
             ": not a loopback address; binding it exposes the emulation to the network and "
             "needs --allow-remote and --token-file";
    if (!c.token) return c.address.to_string() + ": a non-loopback address needs --token-file";
  }
  if (c.address.kind == ListenAddress::Kind::Tcp && !c.token)
    return c.address.to_string() +
           ": TCP needs --token-file (any local user can connect to a "
           "TCP port; use unix:PATH for a private socket)";
  if (c.address.kind == ListenAddress::Kind::Unix) {
    struct stat st {};
    if (lstat(c.address.path.c_str(), &st) == 0) {
      if (!S_ISSOCK(st.st_mode))
        return c.address.path + ": exists and is not a socket; choose another path";
      if (socket_is_live(c.address.path))
        return c.address.path + ": another server is listening there";
      unlink(c.address.path.c_str());  // stale socket of a server that died
    }
  }
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(c.address.grpc_uri(), grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&impl_->service);
  builder.SetMaxReceiveMessageSize(static_cast<int>(c.max_request_bytes));
  builder.SetMaxSendMessageSize(static_cast<int>(c.max_read_bytes + (64u << 10)));
  // Each attached client holds one handler thread (its event stream) plus one per call in
  // flight: bound them so a flood of connections cannot exhaust the process.
  grpc::ResourceQuota quota("bud-serve");
  quota.SetMaxThreads(static_cast<int>(c.max_clients * 2 + 16));
  builder.SetResourceQuota(quota);
  // The socket file is created by bind(): a restrictive umask makes it 0600 from the start,
  // with no window in which another user could connect.
  const mode_t old = umask(0177);
  impl_->server = builder.BuildAndStart();
  umask(old);
  if (!impl_->server || port == 0)
    return c.address.to_string() + ": cannot listen (address in use or not permitted)";
  if (c.address.kind == ListenAddress::Kind::Unix) {
    chmod(c.address.path.c_str(), 0600);
  } else {
    address_.port = static_cast<uint16_t>(port);
  }
  impl_->executor.start();
  impl_->started = true;
  return {};
}

std::string DebugServer::run_in_background() {
  std::string error;
  const auto why = impl_->executor.submit(
      Access::Control,
      [this](const std::string* refused) {
        if (!refused) impl_->executor.execute_line("continue");
      },
      error);
  return why == Refusal::None ? std::string() : error;
}

void DebugServer::request_shutdown() { impl_->shutdown(); }

void DebugServer::wait() {
  if (!impl_->started) return;
  {
    std::unique_lock<std::mutex> lock(impl_->mutex);
    impl_->cv.wait(lock, [&] { return impl_->stop; });
  }
  impl_->started = false;
  // Emulation first (a run stops at its next cycle; waiting calls get their refusal), then the
  // event streams, then the listener.
  impl_->executor.stop();
  impl_->service.close_sessions();
  impl_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  impl_->server->Wait();
  if (impl_->config.address.kind == ListenAddress::Kind::Unix)
    unlink(impl_->config.address.path.c_str());
}

}  // namespace bud::remote
