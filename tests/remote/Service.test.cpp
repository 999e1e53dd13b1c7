// The debug service in-process over the Verilated NPU: every prompt command gives the same
// output remotely as locally, roles, attaching to a running emulation and detaching without
// stopping it, interrupting, the event stream, typed reads and their bounds, file confinement.
#include <catch2/catch.hpp>

#include "tests/remote/RemoteTestSupport.h"

using namespace bud;
using namespace bud::test;
using remote::v1::CommandReply;

TEST_CASE("every prompt command gives the same output remotely as locally", "[remote][service]") {
  // A script touching each command family: breakpoints, run control, inspection, state
  // changes, checkpoints and time travel, triggers, help. Outputs must match line for line.
  const std::vector<std::string> script = {
      "break if gemm.stall_dep > 100",
      "watch load.state",
      "info breakpoints",
      "condition 1 gemm.stall_dep > 101",
      "display/x load.state",
      "display cycle",
      "info display",
      "info watchpoints",
      "commands 2",
      "print cycle",
      "end",
      "continue",
      "where",
      "info stages",
      "print/x load.state",
      "counters gemm",
      "x/x32 dram 0 8",
      "delete",
      "checkpoint here",
      "step 50",
      "deposit compute.state 0",
      "goto 120",
      "reverse-step 10",
      "restore here",
      "info checkpoints",
      "trigger add busy shots 1 when gemm.active > 10 do halt",
      "trigger list",
      "continue",
      "trigger hits",
      "until 700",
      "undisplay 2",
      "tbreak 720",
      "break layer 0 end",
      "info breakpoints",
      "continue",
      "finish",
      "save breakpoints",
      "help goto",
      "help finish",
      "nosuchcommand",
  };
  Debugger local("gemm_small");
  debugger::TriggerEngine engine(local.session->emu(), debugger::TriggerEngineConfig{});
  engine.attach(*local.session);
  TempDir dir;
  InProcessServer srv(dir, "gemm_small");
  auto c = attach(srv.address);
  REQUIRE(c->controller());
  for (const auto& line : script) {
    const auto l = local.in->execute(line);
    CommandReply r;
    const auto st = c->execute(line, r);
    INFO(line);
    REQUIRE(st.ok());
    CHECK(r.ok() == l.ok);
    CHECK(r.error() == l.error);
    CHECK(r.data_json() == l.data.dump());
    std::vector<std::string> lines(r.lines().begin(), r.lines().end());
    CHECK(lines == l.lines);
    CHECK(r.cycle() == local.session->emu().cycle());
  }
  CHECK(status(*c).digest() == local.session->emu().digest());
  engine.detach();
}

namespace {

const std::string kLong = std::string(BUD_SOURCE_DIR) + "/examples/long_run.textpb";

grpc::Status continue_bg(remote::RemoteClient& c) {
  auto ctx = c.context();
  remote::v1::ContinueRequest req;
  req.set_wait(false);
  CommandReply r;
  return c.stub().Continue(ctx.get(), req, &r);
}

uint64_t counter(remote::RemoteClient& c, const std::string& name) {
  auto ctx = c.context();
  remote::v1::ReadCountersRequest req;
  req.add_names(name);
  remote::v1::Counters out;
  REQUIRE(c.stub().ReadCounters(ctx.get(), req, &out).ok());
  REQUIRE(out.counters_size() == 1);
  return out.counters(0).value();
}

}  // namespace

TEST_CASE("observers attach to a running emulation, read, and detach without stopping it",
          "[remote][service][roles]") {
  TempDir dir;
  InProcessServer srv(dir, kLong);
  auto c = attach(srv.address, true, "", "controller");
  REQUIRE(continue_bg(*c).ok());
  REQUIRE(wait_for(*c, "running", 10));

  auto o = attach(srv.address, true, "", "observer");  // control is taken: an observer
  CHECK_FALSE(o->controller());
  CHECK(o->attached().running());
  const uint64_t a = counter(*o, "gemm.active");
  const auto s1 = status(*o, false);
  // No event announces progress: poll the observer's status until the cycle moves on.
  remote::v1::Status s2;
  CHECK(eventually([&] { return (s2 = status(*o, false)).cycle() > s1.cycle(); }, 30));
  CHECK(s2.running());  // reading did not stop it
  CHECK(counter(*o, "gemm.active") >= a);
  CHECK(s2.controller() == "controller");
  CHECK(s2.sessions() == 2);

  // Reads between cycles work for observers; changes are refused by role, then by state.
  CHECK(ok(*o, "print cycle").lines(0).rfind("cycle = ", 0) == 0);
  CommandReply r;
  CHECK(o->execute("step", r).error_code() == grpc::StatusCode::PERMISSION_DENIED);
  CHECK(o->execute("deposit compute.state 0", r).error_code() ==
        grpc::StatusCode::PERMISSION_DENIED);
  CHECK(c->execute("step", r).error_code() == grpc::StatusCode::FAILED_PRECONDITION);
  {
    auto ctx = o->context();
    remote::v1::InterruptRequest req;
    remote::v1::InterruptReply rep;
    CHECK(o->stub().Interrupt(ctx.get(), req, &rep).error_code() ==
          grpc::StatusCode::PERMISSION_DENIED);
  }
  o->detach();
  o.reset();
  CHECK(status(*c, false).running());  // the observer's departure did not stop it

  // The controller interrupts: the stop arrives as an event with reason "interrupted".
  {
    auto ctx = c->context();
    remote::v1::InterruptRequest req;
    remote::v1::InterruptReply rep;
    REQUIRE(c->stub().Interrupt(ctx.get(), req, &rep).ok());
    CHECK(rep.was_running());
  }
  auto stop = wait_for(*c, "stopped", 10);
  REQUIRE(stop);
  REQUIRE(stop->stopped().reasons_size() >= 1);
  CHECK(stop->stopped().reasons(0).kind() == "interrupted");
  const auto s3 = status(*c);
  CHECK_FALSE(s3.running());
  CHECK(s3.cycle() == stop->stopped().cycle());
  CHECK(s3.state() == "ready");
  // The controller leaves: the role is free, the state is intact.
  c->detach();
  c.reset();
  auto d = attach(srv.address, true, "", "next");
  CHECK(d->controller());
  const auto s4 = status(*d);
  CHECK(s4.cycle() == s3.cycle());
  CHECK(s4.digest() == s3.digest());
  CHECK(ok(*d, "step 10").stop().cycle() == s3.cycle() + 10);
}

TEST_CASE("the event stream reports trigger hits, stops, symptoms and the end of the run",
          "[remote][service][events]") {
  TempDir dir;
  InProcessServer srv(dir, "gemm_small");
  auto c = attach(srv.address);
  auto o = attach(srv.address, false, "", "watcher");
  {
    auto ctx = c->context();
    remote::v1::LoadTriggersRequest req;
    req.set_text("trigger deps shots 1 when gemm.stall_dep > 200 do halt\n");
    req.set_name("deps.trig");
    CommandReply r;
    REQUIRE(c->stub().LoadTriggers(ctx.get(), req, &r).ok());
    INFO(r.error());
    REQUIRE(r.ok());
  }
  REQUIRE(continue_bg(*c).ok());
  for (auto* client : {c.get(), o.get()}) {  // every attached client sees the same events
    auto hit = wait_for(*client, "trigger_hit", 20);
    REQUIRE(hit);
    CHECK(hit->trigger_hit().trigger() == "deps");
    CHECK(hit->trigger_hit().halted());
    auto stop = wait_for(*client, "stopped", 20);
    REQUIRE(stop);
    CHECK(stop->stopped().cycle() == hit->trigger_hit().cycle());
    CHECK(stop->stopped().reasons(0).kind() == "trigger");
  }
  CHECK(counter(*o, "gemm.stall_dep") == 201);

  // A fault that makes the run hang: symptom + run_finished.
  {
    auto ctx = c->context();
    remote::v1::InjectFaultRequest req;
    req.set_spec("dram-drop@400");
    CommandReply r;
    REQUIRE(c->stub().InjectFault(ctx.get(), req, &r).ok());
    INFO(r.error());
    REQUIRE(r.ok());
    auto ctx2 = c->context();
    remote::v1::FaultList faults;
    REQUIRE(o->stub().ListFaults(ctx2.get(), remote::v1::ListFaultsRequest(), &faults).ok());
    REQUIRE(faults.faults_size() == 1);
    CHECK(faults.faults(0) == "dram-drop@400");
  }
  ok(*c, "continue");
  auto sym = wait_for(*o, "symptom", 20);
  REQUIRE(sym);
  CHECK(sym->symptom().kind() == "hang");
  CHECK(sym->symptom().message().find("no progress") != std::string::npos);
  auto fin = wait_for(*o, "run_finished", 20);
  REQUIRE(fin);
  CHECK(fin->run_finished().state() == "hang");
}

TEST_CASE("typed reads stay inside the model's memories and files inside the output directory",
          "[remote][service][security]") {
  TempDir dir;
  InProcessServer srv(dir, "gemm_small");
  auto c = attach(srv.address);
  const uint64_t before = status(*c).digest();
  auto read = [&](const std::string& mem, uint64_t off, uint32_t len,
                  remote::v1::MemoryBytes* out = nullptr) {
    auto ctx = c->context();
    remote::v1::ReadMemoryRequest req;
    req.set_memory(mem);
    req.set_offset(off);
    req.set_length(len);
    remote::v1::MemoryBytes bytes;
    auto st = c->stub().ReadMemory(ctx.get(), req, &bytes);
    if (out) *out = bytes;
    return st.error_code();
  };
  remote::v1::MemoryBytes m;
  CHECK(read("dram", 0, 64, &m) == grpc::StatusCode::OK);
  CHECK(m.data().size() == 64);
  // The same bytes as the prompt's `x`.
  const auto x = ok(*c, "x/u8 dram 0 4");
  CHECK(x.data_json().find(std::to_string(static_cast<uint8_t>(m.data()[0]))) != std::string::npos);
  CHECK(read("nosuch", 0, 1) == grpc::StatusCode::NOT_FOUND);
  CHECK(read("inp", UINT64_MAX - 2, 8) == grpc::StatusCode::OUT_OF_RANGE);   // no wrap-around
  CHECK(read("dram", 0, (1u << 20) + 1) == grpc::StatusCode::OUT_OF_RANGE);  // over the limit
  CHECK(read("acc", 1ull << 40, 1) == grpc::StatusCode::OUT_OF_RANGE);

  auto sig = [&](const std::string& name) {
    auto ctx = c->context();
    remote::v1::ReadSignalRequest req;
    req.set_name(name);
    remote::v1::SignalValue v;
    return c->stub().ReadSignal(ctx.get(), req, &v).error_code();
  };
  CHECK(sig("load.state") == grpc::StatusCode::OK);
  CHECK(sig("no.such.signal") == grpc::StatusCode::NOT_FOUND);
  CHECK(sig(std::string(300, 'a')) == grpc::StatusCode::INVALID_ARGUMENT);

  // Files: inside the output directory only.
  CHECK(ok(*c, "wave dump 0 20 w.fst").data_json().find(dir / "out/w.fst") != std::string::npos);
  std::filesystem::create_directory(dir / "outside");
  std::filesystem::create_directory_symlink(dir / "outside", dir / "out/link");
  for (const std::string bad :
       {"wave dump 0 20 ../escape.fst", "wave dump 0 20 /tmp/abs.fst", "wave on a/../../x.fst",
        "wave dump 0 20 link/x.fst", "record start ../p.bpk", "trigger load /etc/passwd",
        "source out.bud", "wave dump 0 20 nodir/x.fst"}) {
    CommandReply r;
    REQUIRE(c->execute(bad, r).ok());
    INFO(bad);
    CHECK_FALSE(r.ok());
  }
  CHECK_FALSE(std::filesystem::exists(dir / "escape.fst"));
  CHECK(std::filesystem::is_empty(dir / "outside"));
  CHECK(status(*c).digest() == before);
}
