// The golden-model check at the prompt (debugger/bisect/GoldenCheck): a fault in each stage stops
// `continue` where `bud bisect` localizes it (stage, cycle, command, element), a clean run
// finishes with every stage matching, `break off mismatch` runs through, the stop is the same
// after time travel back and forth, and a failing packet stops at its divergence in `bud debug`.
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "debugger/bisect/Bisector.h"
#include "debugger/bisect/GoldenCheck.h"
#include "debugger/session/StageCheck.h"
#include "emu/core/Fault.h"
#include "emu/npu/NpuEmulator.h"
#include "tests/debugger/DebuggerTestSupport.h"

using namespace bud;
using bud::test::contains;

namespace {

run::RunOptions options_with(const std::vector<std::string>& faults) {
  run::RunOptions o;
  o.workload = "gemm_small";
  for (const auto& f : faults) {
    std::string error;
    auto spec = emu::parse_fault(f, error);
    INFO(f << ": " << error);
    REQUIRE(spec);
    o.faults.push_back(*spec);
  }
  return o;
}

/// A session of gemm_small with `faults`, built like `bud debug` builds it, with its check.
struct Checked {
  run::PreparedRun prepared;
  run::RunOptions options;
  std::unique_ptr<debugger::Session> session;
  std::unique_ptr<debugger::GoldenCheck> check;
  std::unique_ptr<debugger::Interpreter> in;

  explicit Checked(const std::vector<std::string>& faults, uint64_t interval = 200) {
    options = options_with(faults);
    auto p = run::prepare(options);
    REQUIRE(p);
    prepared = std::move(*p);
    auto emu = std::make_unique<emu::NpuEmulator>(options.emulator);
    REQUIRE(run::start(prepared, options, *emu).empty());
    debugger::ProgramInfo info;
    info.workload = prepared.workload.name;
    info.commands = prepared.program.commands;
    for (const auto& l : prepared.workload.layers) info.layer_names.push_back(l.name);
    debugger::SessionConfig config;
    config.timeline.interval = interval;  // several checkpoints inside the short run
    session = std::make_unique<debugger::Session>(std::move(emu), std::move(info), config);
    check = std::make_unique<debugger::GoldenCheck>(prepared, *session);
    REQUIRE(check->error().empty());
    session->set_stage_check(check.get());
    in = std::make_unique<debugger::Interpreter>(*session);
  }
  ~Checked() { session->set_stage_check(nullptr); }

  debugger::CommandResult ok(const std::string& line) {
    auto r = in->execute(line);
    INFO("command: " << line << "\nerror: " << r.error);
    REQUIRE(r.ok);
    return r;
  }
};

const debugger::StopReason* mismatch(const debugger::CommandResult& r) {
  if (!r.stop) return nullptr;
  for (const auto& x : r.stop->reasons)
    if (x.kind == debugger::StopKind::Mismatch) return &x;
  return nullptr;
}

struct StageFault {
  const char* spec;
  const char* stage;
};

// One fault per stage (tests/bisect/FaultMatrix.test.cpp) that corrupts data.
const StageFault kFaults[] = {
    {"memflip:dram:0x48[4]@1", "fetch"},
    {"memflip:dram:0x10000[3]@10", "load"},
    {"flip:compute.accum[3][5]@700", "gemm"},
    {"flip:compute.shift[1]@800", "post"},
    {"flip:store.row_addr[9]@850", "store"},
};

}  // namespace

TEST_CASE("continue stops at the divergence bisect reports, for a fault in each stage",
          "[debugger][check]") {
  for (const auto& f : kFaults) {
    DYNAMIC_SECTION(f.spec) {
      Checked d({f.spec});
      const auto b = debugger::bisect_run(d.prepared, d.options, {});
      INFO(b.text());
      REQUIRE(b.verdict == debugger::BisectVerdict::Fail);
      REQUIRE(b.first_failing_stage);
      REQUIRE(debugger::rung_name(*b.first_failing_stage) == std::string(f.stage));
      REQUIRE(b.first_divergence_cycle);
      const auto r = d.ok("continue");
      INFO(test::text(r));
      const auto* m = mismatch(r);
      REQUIRE(m);
      // The transaction took effect at the rising edge of cycle C: the session stops right after
      // it, at C + 1, the first cycle at which the wrong value is visible.
      CHECK(r.stop->cycle == *b.first_divergence_cycle + 1);
      CHECK(d.session->emu().state() == emu::RunState::Ready);
      const std::string expect = "stage " + std::string(f.stage) + " diverged at cycle " +
                                 std::to_string(*b.first_divergence_cycle) + ": command #" +
                                 std::to_string(*b.command_index);
      CHECK(m->detail.rfind(expect, 0) == 0);
      CHECK(contains(m->detail, "element " + b.element));
      if (!b.expected.empty())
        CHECK(contains(m->detail, "expected " + b.expected + ", actual " + b.actual));
      const auto info = d.ok("info check");
      CHECK(contains(test::text(info), std::string(f.stage)));
      CHECK(contains(test::text(info), "MISMATCH"));
    }
  }
}

TEST_CASE("a fault-free run finishes with every stage matching", "[debugger][check]") {
  Checked d({});
  const auto r = d.ok("continue");
  INFO(test::text(r));
  CHECK(mismatch(r) == nullptr);
  CHECK(r.stop->has(debugger::StopKind::Finished));
  const auto info = d.ok("info check");
  const std::string t = test::text(info);
  INFO(t);
  CHECK_FALSE(contains(t, "MISMATCH"));
  CHECK_FALSE(contains(t, "pending"));
  for (const char* s : {"fetch", "load", "gemm", "post", "store", "result"}) {
    INFO(s);
    CHECK(contains(t, std::string(s)));
  }
  // Every golden transaction was checked.
  for (const auto& s : d.check->status()) {
    CHECK_FALSE(s.diverged);
    if (s.stage) CHECK(s.checked > 0);
  }
}

TEST_CASE("break off mismatch checks but runs through, info check keeps the divergence",
          "[debugger][check]") {
  Checked d({"flip:compute.accum[3][5]@700"});
  d.ok("break off mismatch");
  const auto r = d.ok("continue");
  INFO(test::text(r));
  CHECK(mismatch(r) == nullptr);
  CHECK(r.stop->has(debugger::StopKind::Finished));
  const std::string t = test::text(d.ok("info check"));
  INFO(t);
  CHECK(contains(t, "gemm    MISMATCH"));
  CHECK(contains(t, "result  MISMATCH"));
  CHECK(contains(t, "break on mismatch off"));
  d.ok("break on mismatch");
  CHECK(d.check->breaks());
  CHECK_FALSE(d.in->execute("break on something").ok);
}

TEST_CASE("after goto back and forward again the check stops at the same divergence",
          "[debugger][check]") {
  Checked d({"flip:compute.accum[3][5]@700"});
  const auto first = d.ok("continue");
  REQUIRE(mismatch(first));
  const uint64_t c = first.stop->cycle;
  const std::string detail = mismatch(first)->detail;

  SECTION("goto before the divergence, continue") {
    d.ok("goto 300");
    CHECK_FALSE(contains(test::text(d.ok("info check")), "MISMATCH"));
    const auto again = d.ok("continue");
    REQUIRE(mismatch(again));
    CHECK(again.stop->cycle == c);
    CHECK(mismatch(again)->detail == detail);
  }
  SECTION("past the divergence, then back to just before it") {
    d.ok("break off mismatch");
    d.ok("continue");
    d.ok("break on mismatch");
    d.ok("goto " + std::to_string(c - 1));
    CHECK_FALSE(contains(test::text(d.ok("info check")), "gemm    MISMATCH"));
    const auto again = d.ok("continue");
    REQUIRE(mismatch(again));
    CHECK(again.stop->cycle == c);
    CHECK(mismatch(again)->detail == detail);
  }
  SECTION("goto a cycle after the divergence keeps it in info check") {
    d.ok("goto 300");
    d.ok("goto " + std::to_string(c + 50));
    const std::string t = test::text(d.ok("info check"));
    INFO(t);
    CHECK(contains(t, detail));
  }
}

namespace {

struct Out {
  int status;
  std::string out, err;
};

Out bud_sh(const std::string& args, const std::string& tag) {
  const std::string base = std::string(BUD_BINARY_DIR) + "/check_" + std::to_string(getpid()) + tag;
  const std::string cmd = std::string(BUD_BINARY_DIR) + "/bud " + args + " >" + base + ".out 2>" +
                          base + ".err";
  const int rc = std::system(cmd.c_str());
  auto slurp = [](const std::string& p) {
    std::ifstream f(p);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  };
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, slurp(base + ".out"), slurp(base + ".err")};
}

}  // namespace

TEST_CASE("bud debug stops at the divergence, live and from a failing packet",
          "[debugger][check][cli]") {
  const std::string dir = std::string(BUD_BINARY_DIR);
  const std::string tag = std::to_string(getpid());
  const std::string script = dir + "/check_" + tag + ".bud";
  std::ofstream(script) << "continue\ninfo check\n";
  const std::string packet = dir + "/check_" + tag + ".bpk";
  const auto rec = bud_sh("run gemm_small --fault 'flip:compute.shift[1]@800' --record " + packet,
                          "rec");
  INFO(rec.out << rec.err);
  REQUIRE(rec.status != 0);

  const auto live =
      bud_sh("debug gemm_small --fault 'flip:compute.shift[1]@800' -x " + script + " --batch", "live");
  INFO(live.out << live.err);
  CHECK(live.status == 0);
  CHECK(contains(live.out, "mismatch (stage post diverged at cycle"));
  CHECK_FALSE(contains(live.out, ": finished"));

  const auto pk = bud_sh("debug --packet " + packet + " -x " + script + " --batch", "pk");
  INFO(pk.out << pk.err);
  CHECK(pk.status == 0);
  CHECK(contains(pk.out, "mismatch (stage post diverged at cycle"));
  // The same stop line both ways.
  auto stop_line = [](const std::string& s) {
    const auto p = s.find("stopped at cycle");
    return p == std::string::npos ? std::string() : s.substr(p, s.find('\n', p) - p);
  };
  CHECK(stop_line(pk.out) == stop_line(live.out));

  const auto through = bud_sh("debug gemm_small --fault 'flip:compute.shift[1]@800' "
                              "--no-break-on-mismatch -x " + script + " --batch", "thr");
  INFO(through.out << through.err);
  CHECK(contains(through.out, ": finished"));
  CHECK(contains(through.out, "post    MISMATCH"));
}
