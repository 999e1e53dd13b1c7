// Record -> replay on the mock design (tests/core/MockEmulator): the packet names the design and
// its counters, the replay builds the same design through make_emulator and checks every digest
// bit-exactly, from the start or from a later checkpoint, with a fault injected too; a packet
// whose recorded digest is wrong diverges. Nothing here has an NPU behind it.
#include <catch2/catch.hpp>

#include "emu/core/Fault.h"
#include "replay/Replayer.h"
#include "tests/core/MockDesign.h"
#include "tests/replay/ReplayTestSupport.h"

namespace {

using namespace bud;

const auto kIntervals = test::mock_intervals<replay::RecordConfig>();

uint64_t digest_points(const replay::Packet& p) {
  uint64_t n = 0;
  for (const auto& w : p.windows) n += static_cast<uint64_t>(w.digests_size());
  return n;
}

}  // namespace

TEST_CASE("a mock run records and replays bit-exactly", "[replay][mock]") {
  const auto dir = test::temp_dir("mock_roundtrip");
  const auto path = (dir / "mock.bpk").string();
  const auto out = test::record(path, test::mock_options("mlp"), kIntervals);
  CHECK(out.report.state == emu::RunState::Finished);
  CHECK(out.report.passed);
  CHECK(out.report.counter_names == std::vector<std::string>{"cycles", "transactions"});
  std::string error;
  const auto packet = replay::read_packet(path, error);
  INFO(error);
  REQUIRE(packet);
  const auto& p = *packet;
  CHECK(p.header.design() == "mock");
  REQUIRE(p.header.counter_names_size() == 2);
  CHECK(p.header.counter_names(1) == "transactions");
  REQUIRE(p.windows.size() > 2);
  REQUIRE(p.windows[1].counters_size() == 2);

  const auto rep = replay::replay(p, {});
  INFO(rep.message);
  CHECK(rep.verdict == replay::Verdict::Passed);
  CHECK_FALSE(rep.divergence);
  CHECK(rep.digests_checked == digest_points(p));
  CHECK(rep.report.state_digest == out.report.state_digest);
  CHECK(rep.report.cycles == out.report.cycles);

  replay::ReplayOptions later;
  later.at = 600;
  const auto from = replay::replay(p, later);
  INFO(from.message);
  CHECK(from.verdict == replay::Verdict::Passed);
  CHECK(from.start_cycle == 512);
  CHECK(from.report.state_digest == out.report.state_digest);
}

TEST_CASE("a mock run with a fault records and replays it", "[replay][mock]") {
  const auto dir = test::temp_dir("mock_fault");
  auto o = test::mock_options("mlp");
  std::string error;
  auto f = emu::parse_fault("flip:acc[5]@300", error);
  REQUIRE(f);
  o.faults.push_back(*f);
  const auto path = (dir / "fault.bpk").string();
  const auto out = test::record(path, o, kIntervals);
  const auto clean =
      test::record((dir / "clean.bpk").string(), test::mock_options("mlp"), kIntervals);
  CHECK(out.report.state_digest != clean.report.state_digest);  // the fault acted
  std::string read_error;
  const auto p = replay::read_packet(path, read_error);
  INFO(read_error);
  REQUIRE(p);
  REQUIRE(p->header.faults_size() == 1);
  const auto rep = replay::replay(*p, {});
  INFO(rep.message);
  CHECK(rep.verdict == replay::Verdict::Passed);
  CHECK_FALSE(rep.divergence);
  CHECK(rep.report.state_digest == out.report.state_digest);
}

TEST_CASE("a mock packet with a wrong digest diverges on replay", "[replay][mock]") {
  const auto dir = test::temp_dir("mock_diverge");
  const auto good = (dir / "good.bpk").string();
  const auto bad = (dir / "bad.bpk").string();
  test::record(good, test::mock_options("mlp"), kIntervals);
  uint64_t changed = 0;
  test::PacketEdits edits;
  edits.window = [&](replay::pb::Window& w) {
    if (w.index() != 1 || w.digests_size() < 2) return;
    changed = w.digests(1).cycle();
    w.mutable_digests(1)->set_digest(w.digests(1).digest() ^ 1);
  };
  test::rewrite_packet(good, bad, edits);
  REQUIRE(changed > 0);
  const auto rep = replay::replay_file(bad, {});
  INFO(rep.message);
  CHECK(rep.verdict == replay::Verdict::Diverged);
  REQUIRE(rep.divergence);
  CHECK(rep.divergence->cycle == changed);
  CHECK(rep.divergence->window == 1u);
}
