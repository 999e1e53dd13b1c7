// libFuzzer target: the remote request path of `bud serve` (docs/remote.md). One in-process
// server over a gemm_small session and one controlling client live for the whole run. Each input
// is one request: the first byte picks the RPC (Execute, Complete, GetStatus, ReadCounters,
// ReadSignal, ReadMemory, LoadTriggers, ListFaults, InjectFault), the rest is decoded as that
// request's protobuf, sent over gRPC and decoded and validated by DebugService. The reply must
// parse back (every string field valid UTF-8, the Python client's failure) and the server must
// still answer GetStatus. Run control that would outlive the request (background continue,
// interrupt), giving up control and Shutdown are left out.
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "debugger/remote/DebugServer.h"
#include "debugger/remote/RemoteClient.h"
#include "debugger/session/Session.h"
#include "debugger/trigger/TriggerEngine.h"
#include "emu/npu/NpuEmulator.h"
#include "emu/run/RunJob.h"

namespace {

using namespace bud;

struct Server {
  std::string dir;
  std::unique_ptr<run::PreparedRun> prepared;
  std::unique_ptr<debugger::Session> session;
  std::unique_ptr<debugger::TriggerEngine> triggers;
  std::optional<remote::OutputDir> out;
  std::unique_ptr<remote::DebugServer> server;
  std::unique_ptr<remote::RemoteClient> client;

  Server() {
    char tmpl[] = "/tmp/bud-fuzz-remote-XXXXXX";
    if (!mkdtemp(tmpl)) abort();
    dir = tmpl;
    run::RunOptions options;
    options.workload = "gemm_small";
    auto p = run::prepare(options);
    if (!p) abort();
    prepared = std::make_unique<run::PreparedRun>(std::move(p).value());
    auto emu = std::make_unique<emu::NpuEmulator>(options.emulator);
    if (!run::start(*prepared, options, *emu).empty()) abort();
    debugger::ProgramInfo info;
    info.workload = prepared->workload.name;
    info.commands = prepared->program.commands;
    for (const auto& l : prepared->workload.layers) info.layer_names.push_back(l.name);
    session = std::make_unique<debugger::Session>(std::move(emu), std::move(info),
                                                  debugger::SessionConfig{});
    debugger::TriggerEngineConfig tc;
    tc.capture_dir = dir;
    triggers = std::make_unique<debugger::TriggerEngine>(session->emu(), tc);
    triggers->attach(*session);
    std::string error;
    out = remote::OutputDir::open(dir + "/out", error);
    if (!out) abort();
    remote::ServerConfig config;
    config.address = *remote::parse_listen_address("unix:" + dir + "/s.sock", error);
    server = std::make_unique<remote::DebugServer>(*session, *out, config);
    if (!server->start().empty()) abort();
    remote::ClientOptions co;
    co.address = server->address().to_string();
    co.want_control = true;
    co.name = "fuzz";
    client = remote::RemoteClient::connect(co, error);
    if (!client) abort();
  }
  ~Server() {
    client.reset();
    server->request_shutdown();
    server->wait();
    server.reset();
    triggers->detach();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

Server& server() {
  static Server s;
  return s;
}

template <class Msg>
void must_round_trip(const Msg& m) {
  std::string wire;
  Msg back;
  if (!m.SerializeToString(&wire) || !back.ParseFromString(wire)) __builtin_trap();
}

// Decodes `data` as Req, calls `rpc` and checks the reply.
template <class Req, class Reply, class Rpc>
void call(const uint8_t* data, size_t size, Rpc rpc) {
  Req req;
  if (!req.ParseFromArray(data, static_cast<int>(size))) return;
  auto& c = *server().client;
  auto ctx = c.context(std::chrono::seconds(60));
  Reply reply;
  const grpc::Status st = (c.stub().*rpc)(ctx.get(), req, &reply);
  if (st.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) __builtin_trap();
  if (st.ok()) must_round_trip(reply);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace remote::v1;
  using Stub = Debugger::Stub;
  if (size == 0) return 0;
  const uint8_t* body = data + 1;
  const size_t n = size - 1;
  switch (data[0] % 9) {
    case 0:
      call<ExecuteRequest, CommandReply>(body, n, &Stub::Execute);
      break;
    case 1:
      call<CompleteRequest, CompleteReply>(body, n, &Stub::Complete);
      break;
    case 2:
      call<StatusRequest, Status>(body, n, &Stub::GetStatus);
      break;
    case 3:
      call<ReadCountersRequest, Counters>(body, n, &Stub::ReadCounters);
      break;
    case 4:
      call<ReadSignalRequest, SignalValue>(body, n, &Stub::ReadSignal);
      break;
    case 5:
      call<ReadMemoryRequest, MemoryBytes>(body, n, &Stub::ReadMemory);
      break;
    case 6:
      call<LoadTriggersRequest, CommandReply>(body, n, &Stub::LoadTriggers);
      break;
    case 7:
      call<ListFaultsRequest, FaultList>(body, n, &Stub::ListFaults);
      break;
    default:
      call<InjectFaultRequest, CommandReply>(body, n, &Stub::InjectFault);
      break;
  }
  // Still alive and answering.
  auto& c = *server().client;
  auto ctx = c.context(std::chrono::seconds(60));
  Status st;
  if (!c.stub().GetStatus(ctx.get(), StatusRequest(), &st).ok()) __builtin_trap();
  return 0;
}
