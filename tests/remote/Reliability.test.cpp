// Reliability of `bud serve` as a separate process: 1000 connect/disconnect cycles without
// growth in threads or memory, a client killed in the middle of a request, clients racing for
// control, and unauthenticated, oversized and malformed requests. After each, the server still
// answers and the emulation state (its digest) is unchanged.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <barrier>
#include <catch2/catch.hpp>

#include "tests/remote/RemoteTestSupport.h"

using namespace bud;
using namespace bud::test;

namespace {

const std::string kLong = "examples/long_run.textpb";

// One connection that attaches and leaves: `graceful` detaches, otherwise the stream is just
// cancelled and the channel dropped (as when a client dies).
void connect_once(const std::string& address, bool graceful) {
  std::string error;
  auto addr = remote::parse_listen_address(address, error);
  REQUIRE(addr);
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  auto channel =
      grpc::CreateCustomChannel(addr->grpc_uri(), grpc::InsecureChannelCredentials(), args);
  auto stub = remote::v1::Debugger::NewStub(channel);
  grpc::ClientContext ctx;
  remote::v1::AttachRequest req;
  req.set_client_name("cycle");
  auto stream = stub->Attach(&ctx, req);
  remote::v1::Event first;
  REQUIRE(stream->Read(&first));
  REQUIRE(first.has_attached());
  if (graceful) {
    grpc::ClientContext d;
    d.AddMetadata("bud-session", first.attached().session_id());
    remote::v1::DetachReply rep;
    REQUIRE(stub->Detach(&d, remote::v1::DetachRequest(), &rep).ok());
  }
  ctx.TryCancel();
  stream->Finish();
}

// Waits until the server reports `n` attached clients (sessions end asynchronously).
void wait_sessions(remote::RemoteClient& c, uint32_t n) {
  for (int i = 0; i < 100 && status(c, false).sessions() != n; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(status(c, false).sessions() == n);
}

}  // namespace

TEST_CASE("1000 connect/disconnect cycles: no growth in threads or memory",
          "[remote][reliability]") {
  TempDir dir;
  ServerProcess srv(dir,
                    {"gemm_small", "--listen", "unix:" + (dir / "s.sock"), "--max-clients", "64"});
  auto probe = attach(srv.address(), true, "", "probe");
  ok(*probe, "step 100");
  const uint64_t digest = status(*probe).digest();
  for (int i = 0; i < 50; ++i) connect_once(srv.address(), i % 10 != 0);  // warm-up
  wait_sessions(*probe, 1);
  const long threads0 = srv.proc_status("Threads");
  const long rss0 = srv.proc_status("VmRSS");
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 1000; ++i) connect_once(srv.address(), i % 10 != 0);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  wait_sessions(*probe, 1);
  // Session threads end after the session count drops (no event for it): wait, bounded.
  long threads1 = 0;
  eventually([&] { return (threads1 = srv.proc_status("Threads")) <= threads0 + 2; }, 10);
  const long rss1 = srv.proc_status("VmRSS");
  WARN("1000 cycles in " << secs << " s; threads " << threads0 << " -> " << threads1 << "; RSS "
                         << rss0 << " -> " << rss1 << " kB");
  CHECK(threads1 <= threads0 + 2);
  CHECK(rss1 - rss0 < 8 * 1024);  // kB
  const auto st = status(*probe);
  CHECK(st.digest() == digest);
  CHECK(st.cycle() == 100);
  CHECK(probe->controller());
}

TEST_CASE("a client killed in the middle of a request frees control and the run goes on",
          "[remote][reliability]") {
  TempDir dir;
  ServerProcess srv(dir, {kLong, "--listen", "unix:" + (dir / "s.sock")});
  {
    std::ofstream f(dir / "cont.bud");
    f << "continue\n";
  }
  const pid_t client = spawn_bud({"attach", srv.address(), "-x", dir / "cont.bud", "--batch"},
                                 dir / "attach.out", dir / "attach.err");
  auto o = attach(srv.address(), false, "", "observer");
  bool running = false;
  for (int i = 0; i < 200 && !running; ++i) {
    running = status(*o, false).running();
    if (!running) std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  REQUIRE(running);
  CHECK(status(*o, false).controller() == "bud attach");
  kill(client, SIGKILL);
  CHECK(wait_exit(client, 10) == 128 + SIGKILL);
  // The session ends with the connection; the run it started does not.
  for (int i = 0; i < 100 && !status(*o, false).controller().empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto s1 = status(*o, false);
  CHECK(s1.controller().empty());
  CHECK(s1.running());
  auto c = attach(srv.address(), true, "", "second");
  REQUIRE(c->controller());
  {
    auto ctx = c->context();
    remote::v1::InterruptReply rep;
    REQUIRE(c->stub().Interrupt(ctx.get(), remote::v1::InterruptRequest(), &rep).ok());
  }
  REQUIRE(wait_for(*c, "stopped", 10));
  const auto s2 = status(*c);
  CHECK(s2.cycle() > s1.cycle());
  CHECK(status(*o).digest() == s2.digest());  // reads change nothing
}

TEST_CASE("clients racing for control: exactly one wins", "[remote][reliability]") {
  TempDir dir;
  ServerProcess srv(dir, {"gemm_small", "--listen", "unix:" + (dir / "s.sock")});
  auto probe = attach(srv.address(), false, "", "probe");
  const uint64_t digest = status(*probe).digest();
  for (int round = 0; round < 5; ++round) {
    constexpr int kClients = 8;
    std::barrier sync(kClients);
    std::atomic<int> won{0}, refused{0};
    std::vector<std::unique_ptr<remote::RemoteClient>> winners(kClients);
    std::vector<std::thread> threads;
    for (int i = 0; i < kClients; ++i)
      threads.emplace_back([&, i] {
        remote::ClientOptions o;
        o.address = srv.address();
        o.require_control = true;
        o.name = "racer" + std::to_string(i);
        sync.arrive_and_wait();
        std::string error;
        auto c = remote::RemoteClient::connect(o, error);
        if (c) {
          ++won;
          winners[static_cast<size_t>(i)] = std::move(c);
        } else if (error.find("FAILED_PRECONDITION") != std::string::npos) {
          ++refused;
        }
      });
    for (auto& t : threads) t.join();
    CHECK(won == 1);
    CHECK(refused == kClients - 1);
    // The winner leaves; the role is free for the next round.
    winners.clear();
    for (int i = 0; i < 100 && !status(*probe, false).controller().empty(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // TakeControl races too: one of two observers gets it.
  auto a = attach(srv.address(), false, "", "a");
  auto b = attach(srv.address(), false, "", "b");
  std::atomic<int> controllers{0};
  std::thread ta([&] {
    auto ctx = a->context();
    remote::v1::ControlReply r;
    if (a->stub().TakeControl(ctx.get(), remote::v1::ControlRequest(), &r).ok() &&
        r.role() == remote::v1::ROLE_CONTROLLER)
      ++controllers;
  });
  std::thread tb([&] {
    auto ctx = b->context();
    remote::v1::ControlReply r;
    if (b->stub().TakeControl(ctx.get(), remote::v1::ControlRequest(), &r).ok() &&
        r.role() == remote::v1::ROLE_CONTROLLER)
      ++controllers;
  });
  ta.join();
  tb.join();
  CHECK(controllers == 1);
  CHECK(status(*probe).digest() == digest);
}

TEST_CASE("unauthenticated, oversized and malformed requests are rejected and change nothing",
          "[remote][reliability][security]") {
  TempDir dir;
  const auto token = write_token(dir, "remote-test-token-0123456789");
  {
    std::ofstream f(dir / "wrong");
    f << "remote-test-token-0123456780\n";
  }
  chmod((dir / "wrong").c_str(), 0600);
  ServerProcess srv(dir, {"gemm_small", "--listen", "tcp:127.0.0.1:0", "--token-file", token});
  REQUIRE(srv.address().rfind("tcp:127.0.0.1:", 0) == 0);
  REQUIRE(srv.address() != "tcp:127.0.0.1:0");
  auto c = attach(srv.address(), true, token, "owner");
  ok(*c, "step 77");
  const uint64_t digest = status(*c).digest();
  auto unchanged = [&] {
    const auto s = status(*c);
    CHECK(s.digest() == digest);
    CHECK(s.cycle() == 77);
  };

  // No token, a wrong token: refused before anything else.
  for (const std::string& tf : {std::string(), dir / "wrong"}) {
    remote::ClientOptions o;
    o.address = srv.address();
    o.token_file = tf;
    std::string error;
    CHECK_FALSE(remote::RemoteClient::connect(o, error));
    CHECK(error.find("UNAUTHENTICATED") != std::string::npos);
    unchanged();
  }
  // A call with the session id but no token.
  {
    std::string error;
    auto addr = remote::parse_listen_address(srv.address(), error);
    auto stub = remote::v1::Debugger::NewStub(
        grpc::CreateChannel(addr->grpc_uri(), grpc::InsecureChannelCredentials()));
    grpc::ClientContext ctx;
    ctx.AddMetadata("bud-session", c->attached().session_id());
    remote::v1::ExecuteRequest req;
    req.set_line("step");
    remote::v1::CommandReply r;
    CHECK(stub->Execute(&ctx, req, &r).error_code() == grpc::StatusCode::UNAUTHENTICATED);
    unchanged();
  }
  // A made-up session id.
  {
    auto ctx = c->context();
    ctx->AddMetadata("bud-session", "0123");
    remote::v1::CommandReply r;
    remote::v1::ExecuteRequest req;
    req.set_line("step");
    // Two bud-session values: the server takes the first, ours; use a fresh context instead.
    grpc::ClientContext fresh;
    fresh.AddMetadata("authorization", "Bearer remote-test-token-0123456789");
    fresh.AddMetadata("bud-session", "00000000000000000000000000000000");
    CHECK(c->stub().Execute(&fresh, req, &r).error_code() == grpc::StatusCode::FAILED_PRECONDITION);
    unchanged();
  }
  // Oversized: over the gRPC message limit, over the line limit, over the read limit.
  {
    remote::v1::CommandReply r;
    CHECK(c->execute("echo " + std::string(200 * 1024, 'x'), r).error_code() ==
          grpc::StatusCode::RESOURCE_EXHAUSTED);
    unchanged();
    CHECK(c->execute("echo " + std::string(5000, 'x'), r).error_code() ==
          grpc::StatusCode::INVALID_ARGUMENT);
    unchanged();
    CHECK(c->execute("step\n1", r).error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    unchanged();
    auto ctx = c->context();
    remote::v1::ReadMemoryRequest req;
    req.set_memory("dram");
    req.set_length(64u << 20);
    remote::v1::MemoryBytes m;
    CHECK(c->stub().ReadMemory(ctx.get(), req, &m).error_code() == grpc::StatusCode::OUT_OF_RANGE);
    unchanged();
  }
  // Malformed: bytes that are not a protobuf message, sent to real methods.
  {
    std::string error;
    auto addr = remote::parse_listen_address(srv.address(), error);
    auto channel = grpc::CreateChannel(addr->grpc_uri(), grpc::InsecureChannelCredentials());
    grpc::GenericStub generic(channel);
    grpc::CompletionQueue cq;
    for (const char* method :
         {"/bud.remote.v1.Debugger/Execute", "/bud.remote.v1.Debugger/ReadMemory",
          "/bud.remote.v1.Debugger/NoSuchMethod"}) {
      const std::string garbage = "\xff\xff\xff\xff\x0f\x12\x80";
      grpc::Slice slice(garbage);
      grpc::ByteBuffer request(&slice, 1);
      grpc::ClientContext ctx;
      ctx.AddMetadata("authorization", "Bearer remote-test-token-0123456789");
      ctx.AddMetadata("bud-session", c->attached().session_id());
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
      auto call = generic.PrepareUnaryCall(&ctx, method, request, &cq);
      call->StartCall();
      grpc::ByteBuffer response;
      grpc::Status st;
      call->Finish(&response, &st, reinterpret_cast<void*>(1));
      void* tag = nullptr;
      bool okay = false;
      REQUIRE(cq.Next(&tag, &okay));
      INFO(method << ": " << remote::status_text(st));
      CHECK_FALSE(st.ok());
      unchanged();
    }
    cq.Shutdown();
    void* tag = nullptr;
    bool okay = false;
    while (cq.Next(&tag, &okay)) {
    }
  }
  // Observers cannot change anything either.
  auto o = attach(srv.address(), true, token, "observer");
  REQUIRE_FALSE(o->controller());
  remote::v1::CommandReply r;
  CHECK(o->execute("goto 5", r).error_code() == grpc::StatusCode::PERMISSION_DENIED);
  unchanged();
  CHECK(ok(*c, "print cycle").lines(0) == "cycle = 77 (0x4d)");
}
