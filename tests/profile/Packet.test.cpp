// `bud profile P.bpk`: the run a packet recorded, profiled by re-executing it from the packet
// alone (its workload, seeds, memory configuration, faults and interventions), equals the
// profile of the original run.
#include <catch2/catch.hpp>

#include "profile/RecordedRun.h"
#include "tests/profile/CliSupport.h"

using bud::profile_test::one_object;
using bud::profile_test::run_bud;

namespace {

// The profile of `bud run ARGS --record P` read back from P, against `bud profile ARGS`.
void check_packet_profile(const std::string& args, const std::string& name) {
  const std::string packet = bud::profile_test::scratch(name + ".bpk");
  const auto recorded = run_bud("run " + args + " --record " + packet + " --json");
  INFO(recorded.err);
  REQUIRE((recorded.status == 0 || recorded.status == 1));
  const auto direct = run_bud("profile " + args + " --json");
  const auto from_packet = run_bud("profile " + packet + " --json");
  INFO(from_packet.err);
  CHECK(from_packet.status == direct.status);
  CHECK(from_packet.status == recorded.status);
  const auto d = one_object(direct.out);
  const auto p = one_object(from_packet.out);
  const auto r = one_object(recorded.out);
  CHECK(p["run"]["cycles"] == r["cycles"]);
  CHECK(p["run"]["counters"] == r["counters"]);
  CHECK(p["run"]["state_digest"] == r["state_digest"]);
  CHECK(p["run"]["cycles"] == d["run"]["cycles"]);
  // Every figure: per layer and type, top-down, ranking, roofline.
  CHECK(p["profile"] == d["profile"]);
  std::remove(packet.c_str());
}

}  // namespace

TEST_CASE("bud profile P.bpk equals bud profile of the recorded run", "[profile][packet][cli]") {
  SECTION("default memory") { check_packet_profile("conv", "conv"); }
  SECTION("the packet's memory configuration and seeds, not the defaults") {
    check_packet_profile("mlp --mem-latency 90 --mem-jitter 7 --mem-seed 3 --seed 11", "mlp");
  }
  SECTION("a failing run with a fault") {
    check_packet_profile("gemm_small --fault flip:compute.m_left[0]@400", "fault");
  }
}

TEST_CASE("bud profile P.bpk refuses what it cannot profile exactly", "[profile][packet][cli]") {
  const std::string packet = bud::profile_test::scratch("refuse.bpk");
  REQUIRE(run_bud("run gemm_small --record " + packet).status == 0);
  CHECK(bud::profile::is_packet_file(packet));
  CHECK_FALSE(bud::profile::is_packet_file(std::string(BUD_SOURCE_DIR) + "/docs/profiling.md"));

  // The packet defines the run: run options do not apply.
  const auto with_option = run_bud("profile " + packet + " --mem-latency 5 --json");
  CHECK(with_option.status == 2);
  CHECK(one_object(with_option.out)["message"].get<std::string>().find("--mem-latency") !=
        std::string::npos);

  // A truncated packet (the footer cut off) is incomplete: refused, naming the file.
  const std::string cut = bud::profile_test::scratch("cut.bpk");
  const std::string bytes = bud::profile_test::read_all(packet);
  bud::profile_test::write_file(cut, bytes.substr(0, bytes.size() - 40));
  const auto truncated = run_bud("profile " + cut + " --json");
  CHECK(truncated.status == 2);
  CHECK(one_object(truncated.out)["message"].get<std::string>().find(cut) != std::string::npos);

  // --trace works on a packet as on a workload.
  const std::string trace = bud::profile_test::scratch("packet.trace.json");
  const auto traced = run_bud("profile " + packet + " --trace " + trace + " --json");
  CHECK(traced.status == 0);
  CHECK(one_object(bud::profile_test::read_all(trace))["traceEvents"].is_array());
  std::remove(packet.c_str());
  std::remove(cut.c_str());
  std::remove(trace.c_str());
}

namespace {

// A packet recorded at the `bud debug` prompt by `script` (the commands, one per line).
std::string record_at_prompt(const std::string& name, const std::string& script) {
  const std::string packet = bud::profile_test::scratch(name + ".bpk");
  const std::string file = bud::profile_test::scratch(name + ".script");
  std::string text = script;
  for (size_t at = text.find("PACKET"); at != std::string::npos; at = text.find("PACKET"))
    text.replace(at, 6, packet);
  bud::profile_test::write_file(file, text);
  const auto d = run_bud("debug gemm_small --batch --no-break-on-mismatch -x " + file);
  INFO(d.out << d.err);
  CHECK(d.out.find("recorded cycles") != std::string::npos);
  std::remove(file.c_str());
  return packet;
}

}  // namespace

TEST_CASE("bud profile P.bpk: prefixes, ranges and interventions as recorded",
          "[profile][packet][cli]") {
  SECTION("a recording stopped at cycle 300 profiles cycles 0..300, as --max-cycles 300") {
    const auto packet = record_at_prompt("prefix", "record start PACKET\nuntil 300\nrecord stop\n");
    const auto p = run_bud("profile " + packet + " --json");
    const auto d = run_bud("profile gemm_small --max-cycles 300 --json");
    CHECK(p.status == 3);
    CHECK(d.status == 3);
    const auto pj = one_object(p.out);
    CHECK(pj["run"]["cycles"] == 300);
    CHECK(pj["run"]["state"] == "cycle_limit");
    CHECK(pj["profile"] == one_object(d.out)["profile"]);
    std::remove(packet.c_str());
  }
  SECTION("a range that starts after cycle 0 is refused") {
    const auto packet =
        record_at_prompt("range", "until 200\nrecord start PACKET\nuntil 400\nrecord stop\n");
    const auto p = run_bud("profile " + packet + " --json");
    CHECK(p.status == 2);
    CHECK(one_object(p.out)["message"].get<std::string>().find("from cycle 0") !=
          std::string::npos);
    std::remove(packet.c_str());
  }
  SECTION("a deposit made at the prompt is applied again at its cycle") {
    // Without it gemm_small passes; with it the GEMM addresses a scratchpad out of range.
    const auto packet = record_at_prompt("deposit",
                                         "record start PACKET\nuntil 400\ndeposit "
                                         "compute.m_left[0] 0x1234\ncontinue\nrecord stop\n");
    const auto p = run_bud("profile " + packet + " --json");
    CHECK(p.status == 1);
    const auto pj = one_object(p.out);
    CHECK(pj["run"]["state"] == "assertion");
    const auto r = run_bud("replay " + packet + " --json");
    CHECK(r.status == 1);
    const auto rj = one_object(r.out);
    CHECK(rj["packets"][0]["verdict"] == "reproduced");
    CHECK(pj["run"]["cycles"] == rj["packets"][0]["end_cycle"]);
    CHECK(run_bud("profile gemm_small --json").status == 0);
    std::remove(packet.c_str());
  }
}
