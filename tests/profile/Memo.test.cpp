// Energy in the review memo (`bud memo BASE NEW`, docs/profiling.md "Review memo"): energy per
// inference, average power and perf/W of both profiles, exactly the figures the profiles carry,
// and the energy hypotheses (operating point, thermal clamp) with their evidence.
#include <catch2/catch.hpp>

#include "profile/Compare.h"
#include "profile/Memo.h"
#include "tests/profile/CliSupport.h"

using namespace bud;
using profile_test::one_object;
using profile_test::run_bud;

namespace {

/// `bud profile ARGS --json` written to a scratch file: its path and its object.
std::pair<std::string, nlohmann::json> profile_file(const std::string& name,
                                                    const std::string& args) {
  const auto p = run_bud("profile " + args + " --json");
  INFO(p.err);
  REQUIRE(p.status == 0);
  const std::string path = profile_test::scratch(name);
  profile_test::write_file(path, p.out);
  return {path, one_object(p.out)};
}

nlohmann::json memo_of(const std::string& base, const std::string& next) {
  const auto r = run_bud("memo " + base + " " + next + " --json");
  INFO(r.err);
  REQUIRE(r.status == 0);
  return one_object(r.out);
}

const nlohmann::json& evidence(const nlohmann::json& h, const std::string& name) {
  for (const auto& e : h.at("evidence"))
    if (e.at("name") == name) return e;
  FAIL("no evidence " << name);
  return h;
}

}  // namespace

TEST_CASE("memo energy: the deltas are the two profiles' figures, the operating point leads",
          "[profile][memo][energy][cli]") {
  const auto [base_path, base] = profile_file("memo_e_base.json", "mlp");
  const auto [next_path, next] = profile_file("memo_e_low.json", "mlp --point low");
  const auto j = memo_of(base_path, next_path);
  const auto& m = j.at("memo");
  const auto& e = m.at("energy");
  const auto& rb = base.at("profile").at("energy").at("run");
  const auto& rn = next.at("profile").at("energy").at("run");
  CHECK(e.at("energy_per_inference_uj").at("base").get<double>() ==
        Approx(rb.at("total_fj").get<double>() * 1e-9).epsilon(1e-12));
  CHECK(e.at("energy_per_inference_uj").at("new").get<double>() ==
        Approx(rn.at("total_fj").get<double>() * 1e-9).epsilon(1e-12));
  CHECK(e.at("base").at("total_fj") == rb.at("total_fj"));
  CHECK(e.at("new").at("total_fj") == rn.at("total_fj"));
  for (const auto& [key, field] : {std::pair{"watts", "watts"},
                                   std::pair{"inferences_per_joule", "inferences_per_joule"},
                                   std::pair{"tops_per_watt", "tops_per_watt"},
                                   std::pair{"seconds_per_inference", "seconds"}}) {
    INFO(key);
    const double b = rb.at(field).get<double>(), n = rn.at(field).get<double>();
    CHECK(e.at(key).at("base").get<double>() == b);
    CHECK(e.at(key).at("new").get<double>() == n);
    CHECK(e.at(key).at("change").get<double>() == Approx((n - b) / b));
  }
  // The low point is slower and more efficient per inference.
  CHECK(e.at("inferences_per_joule").at("change").get<double>() > 0);
  CHECK(e.at("new").at("frequency_mhz") == 500.0);
  // Leading: the operating point, with the clocks and supplies of both tables as evidence.
  const auto& hs = m.at("energy_hypotheses");
  REQUIRE(hs.size() == 2);
  CHECK(hs[0].at("mechanism") == "operating point");
  CHECK(hs[0].at("leading") == true);
  CHECK(evidence(hs[0], "frequency MHz").at("base") == 1000.0);
  CHECK(evidence(hs[0], "frequency MHz").at("new") == 500.0);
  CHECK(evidence(hs[0], "voltage V").at("new") ==
        next.at("profile").at("energy").at("table").at("voltage"));
  CHECK(hs[1].at("mechanism") == "work per inference");
  CHECK(hs[1].at("leading") == false);
  const std::string md = j.at("markdown");
  CHECK(md.find("## Energy and perf/W") != std::string::npos);
  CHECK(md.find("**Leading energy hypothesis: operating point**") != std::string::npos);
}

TEST_CASE("memo energy: a thermal clamp leads and is evidence for the throttled class",
          "[profile][memo][energy][cli]") {
  const auto [base_path, base] = profile_file("memo_t_base.json", "compute_bound");
  const auto [next_path, next] = profile_file("memo_t_hot.json", "compute_bound --thermal");
  const auto& thermal = next.at("profile").at("thermal");
  REQUIRE(thermal.at("clamp_events").get<uint64_t>() > 0);
  const auto m = memo_of(base_path, next_path).at("memo");
  const auto& hs = m.at("energy_hypotheses");
  REQUIRE_FALSE(hs.empty());
  CHECK(hs[0].at("mechanism") == "thermal clamp");
  CHECK(hs[0].at("leading") == true);
  CHECK(evidence(hs[0], "clamp events").at("base") == 0.0);
  CHECK(evidence(hs[0], "clamp events").at("new") == thermal.at("clamp_events"));
  CHECK(evidence(hs[0], "sustained cycles").at("new") == thermal.at("sustained_cycles"));
  CHECK(evidence(hs[0], "clamped % of cycles").at("new").get<double>() ==
        Approx(100 * thermal.at("clamped_fraction").get<double>()));
  // Clamped at the same point: energy per inference grows with the longer run's static energy.
  CHECK(m.at("energy").at("energy_per_inference_uj").at("change").get<double>() > 0);
  // The top-down names the throttle; the clamp's run figures are its evidence.
  bool throttled = false;
  for (const auto& h : m.at("hypotheses")) {
    if (h.at("class") != "throttled") continue;
    throttled = true;
    CHECK(h.at("leading") == true);
    bool clamped = false;
    for (const auto& ev : h.at("evidence"))
      if (ev.at("counter") == "thermal.clamped_cycles (run)") {
        clamped = true;
        CHECK(ev.at("new") == thermal.at("clamped_cycles"));
      }
    CHECK(clamped);
  }
  CHECK(throttled);
}

TEST_CASE("memo energy: absent without an energy account, malformed is a located error",
          "[profile][memo][energy]") {
  const auto [path, full] = profile_file("memo_n_full.json", "mlp");
  const auto [bare_path, bare] = profile_file("memo_n_bare.json", "mlp --no-energy");
  CHECK_FALSE(bare.at("profile").contains("energy"));
  const auto m = memo_of(path, bare_path).at("memo");
  CHECK(m.at("energy").is_null());
  CHECK(m.at("energy_note").get<std::string>().find(bare_path + " has") != std::string::npos);
  CHECK(m.at("energy_hypotheses").empty());
  // A profile whose energy account is broken is refused, naming the file and the JSON path.
  json::Json broken = json::Json::parse(full.dump());
  broken["profile"]["energy"]["run"]["total_fj"] = "lots";
  const auto in = profile::read_profile_json(broken, "broken.json");
  REQUIRE_FALSE(in);
  CHECK(in.error() == "broken.json: $.profile.energy.run.total_fj: is string, expected unsigned "
                      "integer");
  const auto ok = profile::read_profile_json(json::Json::parse(full.dump()), "full.json");
  REQUIRE(ok);
  REQUIRE(ok->energy);
  CHECK(ok->energy->total_fj == full.at("profile").at("energy").at("run").at("total_fj"));
}
