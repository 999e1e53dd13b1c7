// The wire layer of the debug server (as rr's GdbServerConnection is to GdbServer): it checks
// authentication, sessions, roles and request limits, translates protobuf messages, and hands
// the work to the RequestExecutor. It never touches the Session itself: every access to the
// emulation is a job run on the emulation thread.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "debugger/remote/ClientRegistry.h"
#include "debugger/remote/EventBus.h"
#include "debugger/remote/RequestExecutor.h"
#include "debugger/remote/TokenAuth.h"
#include "remote.grpc.pb.h"

namespace bud::remote {

/// Limits on what one request may ask for.
struct RequestLimits {
  size_t max_line_bytes = 4096;        ///< Execute/Complete lines
  uint32_t max_read_bytes = 1u << 20;  ///< ReadMemory length
  size_t max_name_bytes = 256;         ///< signal/memory/client names
};

class DebugService final : public v1::Debugger::Service {
 public:
  /// `on_shutdown` is called (once per Shutdown request) from a handler thread; it must only
  /// signal the owner, which tears the server down from its own thread.
  DebugService(RequestExecutor& executor, ClientRegistry& clients, EventBus& events, TokenAuth auth,
               RequestLimits limits, std::function<void()> on_shutdown);

  /// The executor's events as protobuf events on the bus (install as the executor's callback).
  static void publish(EventBus& bus, const ExecutorEvent& e);

  grpc::Status Attach(grpc::ServerContext* ctx, const v1::AttachRequest* req,
                      grpc::ServerWriter<v1::Event>* writer) override;
  grpc::Status Detach(grpc::ServerContext* ctx, const v1::DetachRequest* req,
                      v1::DetachReply* reply) override;
  grpc::Status TakeControl(grpc::ServerContext* ctx, const v1::ControlRequest* req,
                           v1::ControlReply* reply) override;
  grpc::Status ReleaseControl(grpc::ServerContext* ctx, const v1::ControlRequest* req,
                              v1::ControlReply* reply) override;
  grpc::Status Execute(grpc::ServerContext* ctx, const v1::ExecuteRequest* req,
                       v1::CommandReply* reply) override;
  grpc::Status Complete(grpc::ServerContext* ctx, const v1::CompleteRequest* req,
                        v1::CompleteReply* reply) override;
  grpc::Status Continue(grpc::ServerContext* ctx, const v1::ContinueRequest* req,
                        v1::CommandReply* reply) override;
  grpc::Status Interrupt(grpc::ServerContext* ctx, const v1::InterruptRequest* req,
                         v1::InterruptReply* reply) override;
  grpc::Status GetStatus(grpc::ServerContext* ctx, const v1::StatusRequest* req,
                         v1::Status* reply) override;
  grpc::Status ReadCounters(grpc::ServerContext* ctx, const v1::ReadCountersRequest* req,
                            v1::Counters* reply) override;
  grpc::Status ReadSignal(grpc::ServerContext* ctx, const v1::ReadSignalRequest* req,
                          v1::SignalValue* reply) override;
  grpc::Status ReadMemory(grpc::ServerContext* ctx, const v1::ReadMemoryRequest* req,
                          v1::MemoryBytes* reply) override;
  grpc::Status LoadTriggers(grpc::ServerContext* ctx, const v1::LoadTriggersRequest* req,
                            v1::CommandReply* reply) override;
  grpc::Status ListFaults(grpc::ServerContext* ctx, const v1::ListFaultsRequest* req,
                          v1::FaultList* reply) override;
  grpc::Status InjectFault(grpc::ServerContext* ctx, const v1::InjectFaultRequest* req,
                           v1::CommandReply* reply) override;
  grpc::Status Shutdown(grpc::ServerContext* ctx, const v1::ShutdownRequest* req,
                        v1::ShutdownReply* reply) override;

  /// Ends every session (server shutdown): Attach streams complete.
  void close_sessions();

 private:
  /// Authenticates the call and finds its session ("bud-session" metadata).
  grpc::Status identify(grpc::ServerContext* ctx, ClientInfo& client) const;
  grpc::Status authenticate(grpc::ServerContext* ctx) const;
  /// identify() and require the controller role.
  grpc::Status controller(grpc::ServerContext* ctx, ClientInfo& client) const;
  /// Runs `work` on the emulation thread and waits for it (returning early, with CANCELLED, if
  /// the client goes away; the job still completes into its own copy of the reply).
  template <class Reply>
  grpc::Status call(grpc::ServerContext* ctx, Access access,
                    std::function<grpc::Status(Reply&)> work, Reply* reply, bool wait = true);
  void control_changed();

  RequestExecutor& executor_;
  ClientRegistry& clients_;
  EventBus& events_;
  TokenAuth auth_;
  RequestLimits limits_;
  std::function<void()> on_shutdown_;
  std::mutex boxes_mutex_;
  std::map<std::string, std::shared_ptr<Mailbox>> boxes_;  ///< session id -> its mailbox
};

}  // namespace bud::remote
