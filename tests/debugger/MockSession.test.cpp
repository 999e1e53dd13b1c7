// The session and its commands on the mock design (tests/core/MockEmulator), built the way `bud
// debug` builds a session (make_emulator, run::start): stepping, breakpoints, goto,
// reverse-continue, deposits re-applied by time travel, and counters named from the design's own
// description. Nothing here has an NPU behind it.
#include <algorithm>
#include <map>

#include "tests/core/MockDesign.h"
#include "tests/debugger/DebuggerTestSupport.h"

using bud::test::contains;
using bud::test::Debugger;
using bud::test::text;

namespace {

constexpr uint64_t kInterval = 128;   // checkpoint interval: several per mock run
const std::string kWorkload = "mlp";  // 21 commands: 1,344 mock cycles

std::unique_ptr<Debugger> mock_debugger() {
  bud::test::use_mock_design();
  return std::make_unique<Debugger>(kWorkload, kInterval, 64ull << 20, 1u << 16, "mock");
}

/// A forward run of the mock (no breakpoints, no travel): digest and `lfsr` at each cycle asked.
struct Forward {
  std::map<uint64_t, uint64_t> digest, lfsr;
};
Forward forward(std::vector<uint64_t> cycles) {
  bud::test::use_mock_design();
  std::sort(cycles.begin(), cycles.end());
  auto s = bud::test::make_session(kWorkload, kInterval, 64ull << 20, 1u << 16, "mock");
  auto& emu = s->emu();
  const auto lfsr = emu.find_signal("lfsr");
  REQUIRE(lfsr);
  Forward f;
  for (uint64_t c : cycles) {
    while (emu.cycle() < c) REQUIRE(emu.step(c - emu.cycle()).cycles > 0);
    f.digest[c] = emu.digest();
    f.lfsr[c] = emu.read_signal(*lfsr).low();
  }
  return f;
}

}  // namespace

TEST_CASE("a session on the mock design steps, runs to the end and names its counters",
          "[debugger][mock]") {
  auto d = mock_debugger();
  auto& emu = d->session->emu();
  REQUIRE(emu.design() == "mock");
  d->ok("step 100");
  CHECK(d->cycle() == 100);
  auto r = d->ok("counters");
  INFO(text(r));
  CHECK(contains(text(r), "transactions"));
  CHECK_FALSE(contains(text(r), "stall_mem"));  // no NPU counter appears
  CHECK(r.data["counters"]["cycles"]["value"] == 100);
  CHECK(r.data["counters"]["transactions"]["value"] == emu.counter(1));
  r = d->ok("print transactions");
  CHECK(r.data["value"] == static_cast<int64_t>(emu.counter(1)));
  CHECK_FALSE(d->in->execute("print gemm.stall_mem").ok);
  r = d->ok("continue");
  REQUIRE(r.stop);
  CHECK(r.stop->has(bud::debugger::StopKind::Finished));
  CHECK(emu.state() == bud::emu::RunState::Finished);
  CHECK(d->cycle() > 1000);
}

TEST_CASE("breakpoint, goto and reverse-continue on the mock land on a forward run's states",
          "[debugger][mock]") {
  const auto want = forward({333, 700, 1000});
  auto d = mock_debugger();
  // The LFSR takes a value once per period (2^32 - 1): the condition holds at exactly one cycle.
  d->ok("break if lfsr == " + std::to_string(want.lfsr.at(700)));
  auto r = d->ok("continue");
  REQUIRE(r.stop);
  CHECK(r.stop->has(bud::debugger::StopKind::Breakpoint));
  CHECK(d->cycle() == 700);
  CHECK(d->digest() == want.digest.at(700));
  r = d->ok("continue");
  REQUIRE(r.stop);
  CHECK(r.stop->has(bud::debugger::StopKind::Finished));
  const uint64_t end = d->cycle();
  r = d->ok("reverse-continue");
  CHECK(d->cycle() == 700);
  CHECK(d->digest() == want.digest.at(700));
  d->ok("goto 333");
  CHECK(d->digest() == want.digest.at(333));
  d->ok("goto 1000");
  CHECK(d->digest() == want.digest.at(1000));
  d->ok("goto " + std::to_string(end));
  CHECK(d->session->emu().state() == bud::emu::RunState::Finished);
}

TEST_CASE("a deposit on the mock is re-applied when time travel re-executes past it",
          "[debugger][mock]") {
  auto d = mock_debugger();
  d->ok("until 400");
  d->ok("deposit acc 5");
  d->ok("until 520");
  const uint64_t with_deposit = d->digest();
  CHECK(with_deposit != forward({520}).digest.at(520));
  d->ok("goto 390");
  d->ok("goto 520");
  CHECK(d->digest() == with_deposit);
}
