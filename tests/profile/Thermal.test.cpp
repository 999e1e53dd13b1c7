// The thermal model end to end (docs/power.md "Thermal"): `bud run --thermal` clamps a hot
// workload and the clamp costs cycles; a packet of a clamped run replays bit-exactly (serially and
// window-parallel from its checkpoints, which carry the model's state); triggers read the
// temperature and the clamp; `bud profile --thermal` reports nominal vs sustained throughput and
// draws the temperature in the trace.
#include <algorithm>
#include <catch2/catch.hpp>
#include <vector>

#include "tests/profile/CliSupport.h"

using bud::profile_test::one_object;
using bud::profile_test::run_bud;
using bud::profile_test::scratch;
using bud::profile_test::write_file;

namespace {
constexpr uint64_t kWindow = 4096;  // the default table's thermal window_cycles
constexpr int64_t kTrip = 85000, kHysteresis = 5000;
}  // namespace

TEST_CASE("bud run --thermal clamps a hot workload, and the clamp costs cycles",
          "[profile][thermal][cli]") {
  auto off = run_bud("run compute_bound --json");
  REQUIRE(off.status == 0);
  auto on = run_bud("run compute_bound --thermal --json");
  INFO(on.err);
  REQUIRE(on.status == 0);  // still bit-exact: a clamp only delays
  const auto j = one_object(on.out);
  const auto j0 = one_object(off.out);
  CHECK_FALSE(j0.contains("thermal"));
  const auto& t = j["thermal"];
  CHECK(t["clamp_events"].get<uint64_t>() >= 1);
  CHECK(t["peak_mc"].get<int64_t>() >= kTrip);
  const uint64_t clamped = t["clamped_cycles"].get<uint64_t>();
  CHECK(clamped > 0);
  CHECK(clamped % kWindow == 0);  // the clamp holds for whole windows
  // The PMU counts the clamped cycles as throttled (the thermal clamp is the only throttle).
  CHECK(j["counters"]["gemm.throttled"].get<uint64_t>() >= clamped - kWindow);
  CHECK(j["counters"]["gemm.throttled"].get<uint64_t>() <= clamped + kWindow);
  CHECK(j["cycles"].get<uint64_t>() > j0["cycles"].get<uint64_t>());
  CHECK(j["output_digest"] == j0["output_digest"]);
  // A cool workload under the same model never trips.
  auto cool = run_bud("run gemm_small --thermal --json");
  REQUIRE(cool.status == 0);
  CHECK(one_object(cool.out)["thermal"]["clamp_events"] == 0);
  // Deterministic.
  CHECK(run_bud("run compute_bound --thermal --json").out == on.out);
}

TEST_CASE("a packet of a clamped run replays bit-exactly", "[profile][thermal][replay][cli]") {
  const auto packet = scratch("hot.bpk");
  auto rec = run_bud("run compute_bound --thermal --record " + packet +
                     " --checkpoint-interval 32768 --json");
  INFO(rec.err);
  REQUIRE(rec.status == 0);
  const auto live = one_object(rec.out);
  REQUIRE(live["thermal"]["clamp_events"].get<uint64_t>() >= 1);
  auto inspect = run_bud("packet inspect " + packet);
  CHECK(inspect.out.find("thermal      window 4096 cycles at 1000000 kHz, ambient 45000 mC, trip "
                         "85000 mC") != std::string::npos);
  // Serial replay: every digest of the clamped run again (a replay without the model would
  // run fewer cycles and diverge).
  auto serial = run_bud("replay " + packet);
  INFO(serial.out << serial.err);
  CHECK(serial.status == 0);
  // Window-parallel: each window starts from a recorded checkpoint, so the model's state
  // (temperature, clamp) must come back from the checkpoint.
  auto parallel = run_bud("replay " + packet + " -j 2");
  INFO(parallel.out << parallel.err);
  CHECK(parallel.status == 0);
  // Profiling the packet runs the recorded model: the same clamp.
  auto prof = run_bud("profile " + packet + " --json");
  REQUIRE(prof.status == 0);
  const auto pj = one_object(prof.out);
  CHECK(pj["run"]["cycles"] == live["cycles"]);
  CHECK(pj["run"]["thermal"] == live["thermal"]);
  CHECK(pj["profile"]["thermal"]["clamp_events"] == live["thermal"]["clamp_events"]);
  std::remove(packet.c_str());
}

TEST_CASE("triggers see the temperature and the clamp", "[profile][thermal][trigger][cli]") {
  const auto file = scratch("hot.trig");
  write_file(file,
             "trigger clamp shots 1 when thermal.clamped == 1 do log \"clamped\"\n"
             "trigger hot shots 1 when thermal.temp_mc >= 85000 do log \"hot\"\n"
             "trigger mostly shots 1 when rate(thermal.clamped_cycles, 8192) > 0.4 do log \"m\"\n"
             "trigger never when thermal.temp_mc > 200000 do halt\n");
  auto r = run_bud("run compute_bound --thermal --triggers " + file + " --json");
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto j = one_object(r.out);
  const auto& hits = j["triggers"]["hits"];
  auto first = [&](const std::string& name) -> int64_t {
    for (const auto& h : hits)
      if (h["trigger"] == name) return h["cycle"].get<int64_t>();
    return -1;
  };
  const int64_t clamp = first("clamp"), hot = first("hot"), mostly = first("mostly");
  CHECK(clamp > 0);
  // The model steps at window ends: the clamp and the temperature change on the same edge.
  CHECK(clamp % static_cast<int64_t>(kWindow) == 0);
  CHECK(hot == clamp);
  CHECK(mostly > clamp);
  CHECK(first("never") == -1);
  // Without the model the signals stay 0: nothing fires.
  r = run_bud("run compute_bound --triggers " + file + " --json");
  REQUIRE(r.status == 0);
  CHECK(one_object(r.out)["triggers"]["hits"].empty());
  std::remove(file.c_str());
}

TEST_CASE("bud profile --thermal: nominal vs sustained throughput, temperature in the trace",
          "[profile][thermal][cli]") {
  const auto trace = scratch("hot.trace.json");
  auto p = run_bud("profile compute_bound --thermal --trace " + trace + " --json");
  INFO(p.err);
  REQUIRE(p.status == 0);
  const auto j = one_object(p.out);
  const auto& t = j["profile"]["thermal"];
  const auto base = one_object(run_bud("run compute_bound --json").out);
  CHECK(t["nominal_cycles"] == base["cycles"]);
  CHECK(t["sustained_cycles"] == j["run"]["cycles"]);
  CHECK(t["sustained_inferences_per_second"].get<double>() <
        t["nominal_inferences_per_second"].get<double>());
  CHECK(t["clamped_fraction"].get<double>() > 0);
  const auto tr = nlohmann::json::parse(bud::profile_test::read_all(trace));
  double peak = 0;
  int clamped = 0;
  std::vector<double> temps;
  std::vector<int> clamps;
  for (const auto& e : tr["traceEvents"]) {
    if (e["name"] == "die temperature (C)") {
      temps.push_back(e["args"]["temp"].get<double>());
      peak = std::max(peak, temps.back());
    }
    if (e["name"] == "thermal clamp") {
      clamps.push_back(e["args"]["clamped"].get<int>());
      clamped += clamps.back();
    }
  }
  CHECK(peak >= kTrip / 1000.0);
  CHECK(peak <= t["peak_mc"].get<double>() / 1000.0);
  CHECK(clamped > 0);
  // Each engage at or above the trip point, each release below trip - hysteresis (samples every
  // 1024 cycles see every 4096-cycle window end).
  REQUIRE(temps.size() == clamps.size());
  int engages = 0, releases = 0;
  for (size_t i = 1; i < clamps.size(); ++i) {
    INFO("sample " << i << ": " << temps[i] << " C");
    if (clamps[i] && !clamps[i - 1]) {
      ++engages;
      CHECK(temps[i] >= kTrip / 1000.0);
    }
    if (!clamps[i] && clamps[i - 1]) {
      ++releases;
      CHECK(temps[i] < (kTrip - kHysteresis) / 1000.0);
    }
  }
  CHECK(engages == t["clamp_events"].get<int>());
  CHECK(releases >= engages - 1);
  std::remove(trace.c_str());
  // The table's thermal section is checked where it is written.
  const auto table = scratch("thermal.textpb");
  write_file(table,
             "schema: 1\nvoltage: 0.9\nfrequency_mhz: 1000\n"
             "action { counter: \"macs_issued\" pj: 0.3 component: MAC }\n"
             "thermal { r_c_per_w: 1 c_j_per_c: 0.000001 ambient_c: 50 trip_c: 40 "
             "hysteresis_c: 1 window_cycles: 100 }\n");
  auto bad = run_bud("run gemm_small --thermal --energy-table " + table);
  CHECK(bad.status == 2);
  CHECK(bad.err.find(table + ":5:") != std::string::npos);
  CHECK(bad.err.find("`trip_c` must be above `ambient_c`") != std::string::npos);
  write_file(table,
             "schema: 1\nvoltage: 0.9\nfrequency_mhz: 1000\n"
             "action { counter: \"macs_issued\" pj: 0.3 component: MAC }\n");
  bad = run_bud("run gemm_small --thermal --energy-table " + table);
  CHECK(bad.status == 2);
  CHECK(bad.err.find("has no `thermal` section") != std::string::npos);
  std::remove(table.c_str());
}

TEST_CASE("bud profile --dvfs --thermal: the clamp makes the fast points inefficient",
          "[profile][thermal][dvfs][cli]") {
  auto p = run_bud("profile compute_bound --dvfs --thermal --json");
  INFO(p.err);
  REQUIRE(p.status == 0);
  const auto points = one_object(p.out)["dvfs"]["points"];
  REQUIRE(points.size() == 4);
  auto clamped = [&](size_t i) { return points[i]["thermal"]["clamped_cycles"].get<uint64_t>(); };
  CHECK(points[0]["name"] == "low");
  CHECK(clamped(0) == 0);
  CHECK(clamped(1) == 0);
  CHECK(clamped(2) > 0);
  CHECK(clamped(3) > clamped(2));
  CHECK(points[0]["inefficient"].is_null());
  CHECK(points[1]["inefficient"].is_null());
  // Without the model nominal and turbo are faster than mid; with it, mid beats both.
  CHECK(points[2]["inefficient"] == "'mid' is faster and costs less energy per inference");
  CHECK(points[3]["inefficient"] == "'mid' is faster and costs less energy per inference");
}
