// `bud profile --calibrate`: the microbenchmarks measure the machine's peaks and every counter
// agrees with its independent oracle (DRAM model, lowering, golden model, throttle pattern)
// within its documented tolerance; the empirical ceilings reach the profile.
#include "profile/Calibrate.h"

#include <catch2/catch.hpp>
#include <set>

#include "tests/profile/CliSupport.h"

using namespace bud;
using namespace bud::profile;
using namespace bud::profile_test;

namespace {

const Peak& peak(const Calibration& c, const std::string& name) {
  for (const auto& p : c.peaks)
    if (p.name == name) return p;
  FAIL("no peak " << name);
  return c.peaks.front();
}

}  // namespace

TEST_CASE("calibration: every counter within its tolerance, peaks measured",
          "[profile][calibrate]") {
  const auto c = calibrate(emu::EmulatorConfig{});
  INFO(c.error);
  REQUIRE(c.error.empty());
  CHECK(c.benchmarks == std::vector<std::string>{"compute", "read_stream", "write_stream",
                                                 "ping_pong", "bank_conflicts", "throttle"});
  std::set<std::string> oracles, counters;
  for (const auto& r : c.rows) {
    INFO(r.benchmark << " " << r.counter << " (" << r.oracle << "): expected " << r.expected
                     << ", measured " << r.measured);
    CHECK(r.ok);
    if (r.benchmark == "throttle" && r.counter == "dram_rd_latency_sum") {
      // The one inexact counter: a clamped NPU takes some responses late (only ever more).
      CHECK(r.tolerance == 0.02);
      CHECK(r.measured > r.expected);
    } else {
      CHECK(r.tolerance == 0);  // every other counter is exact on this NPU
      CHECK(r.measured == r.expected);
    }
    oracles.insert(r.oracle);
    counters.insert(r.counter);
  }
  CHECK(c.ok);
  CHECK(oracles == std::set<std::string>{"DRAM model", "emulator clock", "golden model", "lowering",
                                         "throttle pattern"});
  CHECK(counters.count("gemm.throttled") == 1);
  CHECK(counters.count("dram_rd_latency_sum") == 1);
  // The peaks: the array from resident operands is close to its 64 slots per cycle (the
  // command's pipeline overhead is the rest), streams are below the channel's bandwidth, the
  // mean latency is the configured one, a quarter of the throttle pattern's cycles are lost.
  const auto& macs = peak(c, "MACs/cycle");
  CHECK(macs.datasheet == 64);
  CHECK(macs.measured > 63);
  CHECK(macs.measured <= 64);
  const auto& rd = peak(c, "DRAM read bytes/cycle");
  CHECK(rd.measured > 4);
  CHECK(rd.measured <= rd.datasheet);
  const auto& wr = peak(c, "DRAM write bytes/cycle");
  CHECK(wr.measured > 1);
  CHECK(wr.measured <= wr.datasheet);
  CHECK(peak(c, "DRAM read latency (cycles)").measured ==
        Approx(peak(c, "DRAM read latency (cycles)").datasheet).epsilon(0.1));
  CHECK(peak(c, "GEMM token wait per L->C token (cycles)").measured > 0);
  CHECK(peak(c, "clock fraction").measured == Approx(0.75).epsilon(0.01));
  const auto e = empirical_ceilings(c);
  CHECK(e.macs_per_cycle == macs.measured);
  CHECK(e.bytes_per_cycle == rd.measured);
}

TEST_CASE("bud profile --calibrate: the fidelity table, JSON, the empirical roofline",
          "[profile][calibrate][cli]") {
  const auto p = run_bud("profile --calibrate --json");
  INFO(p.err);
  REQUIRE(p.status == 0);
  const auto j = one_object(p.out);
  CHECK(j["calibration"]["ok"] == true);
  CHECK(j["calibration"]["fidelity"].size() > 100);
  for (const auto& r : j["calibration"]["fidelity"]) {
    CHECK(r.contains("expected"));
    CHECK(r.contains("measured"));
    CHECK(r.contains("error"));
    CHECK(r.contains("tolerance"));
  }
  const auto text = run_bud("profile --calibrate --mem-bw 8");
  CHECK(text.status == 0);
  CHECK(text.out.find("counter fidelity") != std::string::npos);
  CHECK(text.out.find("every counter within its tolerance") != std::string::npos);

  const auto w = run_bud("profile gemm_small --calibrate --json");
  REQUIRE(w.status == 0);
  const auto wj = one_object(w.out);
  const auto& ceilings = wj["profile"]["ceilings"];
  CHECK(ceilings["datasheet"]["macs_per_cycle"] == 64.0);
  REQUIRE(ceilings["empirical"].is_object());
  CHECK(ceilings["empirical"]["macs_per_cycle"].get<double>() > 63);
  REQUIRE(ceilings["layers"].size() == 1);
  CHECK(ceilings["layers"][0]["attainable_empirical"].get<double>() <=
        ceilings["layers"][0]["attainable_datasheet"].get<double>());
  CHECK(wj["calibration"]["ok"] == true);
  CHECK(ceilings["empirical_how"] == "--calibrate");
  // Without --calibrate the profile runs the two peak microbenchmarks alone: the same empirical
  // ceilings, and Little's law (effective) between them and the datasheet's bandwidth.
  const auto plain = one_object(run_bud("profile gemm_small --json").out);
  const auto& pc = plain["profile"]["ceilings"];
  REQUIRE(pc["empirical"].is_object());
  CHECK(pc["empirical"] == ceilings["empirical"]);
  CHECK(pc["empirical_how"] == "microbenchmarks compute, read_stream");
  CHECK(pc["effective"]["bytes_per_cycle"].get<double>() <=
        pc["datasheet"]["bytes_per_cycle"].get<double>());
  CHECK(plain.find("calibration") == plain.end());

  const auto bad = run_bud("profile --calibrate --trace t.json --json");
  CHECK(bad.status == 2);
  CHECK(one_object(bad.out)["error"] == "bad_input");
}
