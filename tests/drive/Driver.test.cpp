// The run driver against the mock design: pauses where participants ask, per-cycle hooks see
// each cycle once, settle/rewind goes back with the hooks off, halts and failures stop at the
// pause that asked.
#include <catch2/catch.hpp>

#include "tests/drive/DriveTestSupport.h"

using namespace bud;
using namespace bud::drive;
using namespace bud::drive::test;

TEST_CASE("the driver pauses exactly where participants ask and stops at the target",
          "[drive][driver]") {
  emu::MockEmulator m({.seed = 3, .length = 5000});
  Driver d(m);
  Pacer a(100), b(64);
  d.add(a);
  d.add(b);
  const auto s = d.run_until(1000);
  CHECK(s.reached_target);
  CHECK(s.cycle == 1000);
  CHECK(s.state == emu::RunState::Ready);
  CHECK(d.cycles_driven() == 1000);
  // Both see every pause (theirs and the other's), in order, ending at the target.
  std::vector<uint64_t> want;
  for (uint64_t c = 1; c <= 1000; ++c)
    if (c % 100 == 0 || c % 64 == 0) want.push_back(c);
  CHECK(a.pauses == want);
  CHECK(b.pauses == want);
}

TEST_CASE("a per-cycle hook sees every cycle once and its pause request lets it halt there",
          "[drive][driver]") {
  emu::MockEmulator m({.seed = 5, .length = 5000});
  Driver d(m);
  Counter c;
  Pacer p(50);
  d.add(c);
  d.add(p);
  c.stop_at = 257;
  const auto s = d.run_until(4000);
  CHECK(s.halted);
  CHECK_FALSE(s.reached_target);
  CHECK(s.cycle == 257);
  CHECK(c.seen == 257);
  // The pause after the hook's stop is delivered before the driver returns.
  REQUIRE_FALSE(p.pauses.empty());
  CHECK(p.pauses.back() == 257);
  // Running on: the hook keeps counting from where it stopped; the run ends with the design.
  c.stop_at.reset();
  c.hit = false;
  const auto e = d.run_until(10000);
  CHECK(e.state == emu::RunState::Finished);
  CHECK(e.cycle == 5000);
  CHECK(c.seen == 4999);  // the mock calls no hook on its finishing edge
  CHECK(d.cycles_driven() == 5000);
}

TEST_CASE("a participant that settles to an earlier cycle brings the run back there",
          "[drive][driver][rewind]") {
  emu::MockEmulator m({.seed = 7, .length = 5000});
  emu::MockEmulator ref({.seed = 7, .length = 5000});
  ref.step(150);

  struct Late final : Participant {
    bool done = false;
    std::vector<uint64_t> rewinds, pauses;
    std::optional<uint64_t> settle() override {
      if (done) return std::nullopt;
      done = true;
      return 150;  // found at the pause at 200: the hit was at 150
    }
    void on_rewind(uint64_t cycle) override { rewinds.push_back(cycle); }
    PauseAction on_pause(uint64_t cycle) override {
      pauses.push_back(cycle);
      return cycle == 150 ? PauseAction::Halt : PauseAction::Continue;
    }
    std::string stop_detail() const override { return "late halt"; }
  } late;
  Counter hook;
  StateRewinder back(m, nullptr);
  Driver d(m);
  d.add(hook);
  d.add(late);
  d.set_rewinder(&back);
  const auto s = d.run_until(200);
  CHECK(back.calls == 1);
  CHECK(s.halted);
  CHECK(s.rewound_to == std::optional<uint64_t>(150));
  CHECK(s.detail == "late halt");
  CHECK(s.cycle == 150);
  CHECK(late.rewinds == std::vector<uint64_t>{150});
  CHECK(late.pauses == std::vector<uint64_t>{150});
  // The re-execution ran with the hooks off: the hook saw the 200 forward cycles only.
  CHECK(hook.seen == 200);
  CHECK(d.cycles_driven() == 200);
  CHECK(m.digest() == ref.digest());
}

TEST_CASE("going back without a rewinder fails the run with a message", "[drive][driver][rewind]") {
  emu::MockEmulator m({.seed = 1, .length = 5000});
  struct Late final : Participant {
    std::optional<uint64_t> settle() override { return 10; }
  } late;
  Driver d(m);
  d.add(late);
  const auto s = d.run_until(100);
  CHECK(s.failed);
  CHECK(s.detail.find("cannot return to cycle 10") != std::string::npos);
}

TEST_CASE("halt and fail stop the run at the pause that asked, with every detail",
          "[drive][driver]") {
  emu::MockEmulator m({.seed = 2, .length = 5000});
  struct Stopper final : Participant {
    uint64_t at;
    PauseAction what;
    std::string why;
    Stopper(uint64_t c, PauseAction a, std::string d) : at(c), what(a), why(std::move(d)) {}
    uint64_t next_pause(uint64_t now) const override { return now < at ? at : UINT64_MAX; }
    PauseAction on_pause(uint64_t c) override { return c == at ? what : PauseAction::Continue; }
    std::string stop_detail() const override { return why; }
  };
  Stopper h(300, PauseAction::Halt, "halt here"), f(300, PauseAction::Fail, "disk full");
  Driver d(m);
  d.add(h);
  d.add(f);
  const auto s = d.run_until(1000);
  CHECK(s.cycle == 300);
  CHECK(s.halted);
  CHECK(s.failed);
  CHECK(s.detail == "halt here; disk full");
}

TEST_CASE("a hook's pause request that nobody halts for does not stop the run",
          "[drive][driver]") {
  emu::MockEmulator m({.seed = 6, .length = 5000});
  struct Asker final : Participant, emu::CycleHook {
    uint64_t pauses = 0;
    emu::CycleHook* cycle_hook() override { return this; }
    bool after_cycle(uint64_t cycle) override { return cycle % 100 == 0; }
    PauseAction on_pause(uint64_t cycle) override {
      pauses += cycle % 100 == 0;
      return PauseAction::Continue;
    }
  } asker;
  Driver d(m);
  d.add(asker);
  const auto s = d.run_until(1000);
  CHECK(s.reached_target);
  CHECK_FALSE(s.halted);
  CHECK(asker.pauses == 10);
}

TEST_CASE("the emulator's hook slots are the driver's only while it drives", "[drive][driver]") {
  emu::MockEmulator m({.seed = 4, .length = 5000});
  Counter c;
  {
    Driver d(m);
    d.add(c);
    d.run_until(100);
  }
  // After the run nobody is hooked: stepping directly is not seen.
  m.step(100);
  CHECK(c.seen == 100);
  CHECK(m.cycle() == 200);
}

TEST_CASE("a finished design stops the driver with its state and message", "[drive][driver]") {
  emu::MockEmulator m({.seed = 9, .length = 700});
  Driver d(m);
  Pacer p(256);
  d.add(p);
  const auto s = d.run_until(UINT64_MAX);
  CHECK(s.state == emu::RunState::Finished);
  CHECK(s.cycle == 700);
  CHECK_FALSE(s.reached_target);
  CHECK(p.pauses == std::vector<uint64_t>{256, 512, 700});
  // Driving a finished run does nothing.
  const auto again = d.run_until(UINT64_MAX);
  CHECK(again.cycle == 700);
  CHECK(d.cycles_driven() == 700);
}
