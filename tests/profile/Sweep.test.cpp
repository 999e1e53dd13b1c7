// `bud profile W --sweep` (docs/serving.md "The intervention plan", docs/profiling.md): the
// measured intervention plan beside the profile - deterministic for a seed, every intervention in
// its JSON, ranked by requests per joule at the SLA, each run change measured on the RTL as the
// other commands measure it.
#include <catch2/catch.hpp>
#include <set>

#include "tests/profile/CliSupport.h"

using bud::profile_test::one_object;
using bud::profile_test::run_bud;

namespace {

const std::string kSweep = "profile mlp --sweep --sla-p99-us 100 --requests 400 --json";

nlohmann::json sweep_of(const std::string& args) {
  const auto p = run_bud(args);
  INFO(p.err);
  REQUIRE(p.status == 0);
  const auto j = one_object(p.out);
  REQUIRE(j.contains("profile"));  // the profile itself is still there
  return j.at("sweep");
}

}  // namespace

TEST_CASE("bud profile --sweep: every intervention, ranked, deterministic for a seed",
          "[profile][sweep][cli]") {
  const auto first = run_bud(kSweep);
  REQUIRE(first.status == 0);
  CHECK(run_bud(kSweep).out == first.out);  // the same seed: byte for byte
  const auto s = one_object(first.out).at("sweep");
  CHECK(s.at("workload") == "mlp");
  CHECK(s.at("sla_p99_us") == 100.0);
  const auto& plan = s.at("interventions");

  // Every knob: the baseline (max batch 4), max batch 1, 2, 8, the three default windows, every
  // other operating point of the table (from --dvfs), tile rows 16 and 8 (mlp's tiles are 32),
  // tile blocks 6 and 3 (its widest tile has 12), and the precisions other than the workload's
  // own int8.
  const auto dvfs = one_object(run_bud("profile mlp --dvfs --json").out).at("dvfs");
  std::set<std::string> want = {"baseline",     "max batch 1",     "max batch 2",
                                "max batch 8",  "window 5 us",     "window 20 us",
                                "window 50 us", "tile rows <= 16", "tile rows <= 8",
                                "tile blocks <= 6", "tile blocks <= 3",
                                "precision bf16", "precision auto"};
  for (const auto& p : dvfs.at("points"))
    if (p.at("frequency_mhz") != 1000.0) want.insert("point " + p.at("name").get<std::string>());
  std::set<std::string> got;
  for (const auto& i : plan) got.insert(i.at("name").get<std::string>());
  CHECK(got == want);
  CHECK(plan.size() == want.size());

  const nlohmann::json* base = nullptr;
  for (const auto& i : plan)
    if (i.at("knob") == "baseline") base = &i;
  REQUIRE(base);
  REQUIRE(base->at("meets_sla") == true);
  bool missed = false;
  double last = 1e300;
  for (const auto& i : plan) {
    INFO(i.at("name"));
    CHECK(i.at("measured") == true);
    if (!i.at("meets_sla").get<bool>()) {
      missed = true;
      continue;
    }
    CHECK_FALSE(missed);  // those that miss the SLA come last
    const double rpj = i.at("requests_per_joule").get<double>();
    CHECK(rpj <= last);  // best first
    last = rpj;
    CHECK(i.at("vs_baseline").get<double>() ==
          Approx(rpj / base->at("requests_per_joule").get<double>()));
    // One inference's cycles: the operating point's and the tile cap's are `bud run`'s at that
    // point or cap, the policy changes serve the baseline's runs.
    const std::string knob = i.at("knob");
    const auto run_cycles = [](const std::string& args) {
      return one_object(run_bud("run mlp --json " + args).out).at("cycles");
    };
    if (knob == "operating_point") {
      CHECK(i.at("batch1_cycles") == run_cycles("--point " + i.at("point").get<std::string>()));
    } else if (knob == "precision") {
      const std::string name = i.at("name");
      CHECK(i.at("batch1_cycles") == run_cycles("--precision " + name.substr(name.find(' ') + 1)));
    } else if (knob == "tile_rows") {
      CHECK(i.at("batch1_cycles") != base->at("batch1_cycles"));
      CHECK(i.at("batch1_cycles") ==
            run_cycles("--tile-rows " + std::to_string(i.at("tile_rows").get<int>())));
    } else if (knob == "tile_blocks") {
      CHECK(i.at("batch1_cycles") != base->at("batch1_cycles"));
      CHECK(i.at("batch1_cycles") ==
            run_cycles("--tile-blocks " + std::to_string(i.at("tile_blocks").get<int>())));
    } else {
      CHECK(i.at("batch1_cycles") == base->at("batch1_cycles"));
    }
  }
  // The baseline is bud serve-load's sustained point for the same stream.
  const auto serve =
      one_object(run_bud("serve-load mlp --sla-p99-us 100 --requests 400 --json").out).at("sweep");
  const auto& sustained = serve.at("points").at(serve.at("sustained_point").get<size_t>());
  CHECK(base->at("requests_per_joule") == sustained.at("requests_per_joule"));
  CHECK(base->at("served_rps") == sustained.at("served_rps"));

  // Another arrival seed is another stream: other figures.
  const auto other = sweep_of(kSweep + " --arrival-seed 9");
  CHECK(other.at("interventions") != plan);
}

TEST_CASE("bud profile --sweep refuses what it cannot rank", "[profile][sweep][cli]") {
  const auto no_sla = run_bud("profile mlp --sweep --json");
  CHECK(no_sla.status == 2);
  CHECK(one_object(no_sla.out).at("message").get<std::string>().find("--sla-p99-us") !=
        std::string::npos);
  const auto no_sweep = run_bud("profile mlp --max-batch 2 --json");
  CHECK(no_sweep.status == 2);
  CHECK(one_object(no_sweep.out).at("message").get<std::string>().find("--sweep only") !=
        std::string::npos);
  CHECK(run_bud("profile mlp --sweep --sla-p99-us 100 --dvfs").status == 2);
  CHECK(run_bud("profile mlp --sweep --sla-p99-us 100 --no-energy").status == 2);
  CHECK(run_bud("profile mlp --sweep --sla-p99-us 100 --fault dram-drop@100").status == 2);
}
