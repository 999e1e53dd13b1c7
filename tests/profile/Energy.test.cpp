// Energy in `bud profile` (docs/power.md, docs/profiling.md "Energy"): every scope's energy is its
// counts times the table's prices, to the femtojoule; the layers and the rest add up to the run;
// the run's counts are the PMU's; per-layer counts match what the program says the layer does.
// And `bud profile --dvfs`: cycles follow the DRAM's ns timing at each clock.
#include "profile/Energy.h"

#include <catch2/catch.hpp>

#include "emu/isa/Isa.h"
#include "power/EnergyTable.h"
#include "tests/profile/CliSupport.h"
#include "tests/profile/ProfileTestSupport.h"

using namespace bud;
using namespace bud::profile;

namespace {

std::vector<std::string> action_counters() {
  std::vector<std::string> names;
  for (int i = 0; i < isa::kNumCounters; ++i) names.push_back(isa::counter_name(i));
  names.emplace_back(power::kHostCsrAccess);
  return names;
}

// Every sum of a scope recomputed from its counts and the table's prices.
void check_priced(const ScopeEnergy& s, const power::EnergyTable& t) {
  INFO(s.name);
  REQUIRE(s.counts.size() == t.actions.size());
  uint64_t total = 0, engines = s.no_engine_fj, components = 0, spad = 0, buffers = 0;
  for (size_t i = 0; i < t.actions.size(); ++i) {
    total += s.counts[i] * t.actions[i].fj;
    if (t.actions[i].component == power::Component::Scratchpad)
      spad += s.counts[i] * t.actions[i].fj;
  }
  for (auto v : s.by_engine) engines += v;
  for (auto v : s.by_component) components += v;
  for (auto v : s.by_buffer) buffers += v;
  CHECK(s.total_fj == total);
  CHECK(engines == total);
  CHECK(components == total);
  CHECK(buffers == spad);
  CHECK(s.by_component[static_cast<size_t>(power::Component::Scratchpad)] == spad);
}

}  // namespace

TEST_CASE(
    "energy per layer: counts x prices to the fJ, layers + rest = the run, counts = the PMU's",
    "[profile][energy]") {
  const auto workload = GENERATE(as<std::string>{}, "conv", "mlp");
  INFO(workload);
  auto r = profile_test::profiled(workload);
  const auto& report = r.run.report;
  const auto p = build_profile(*r.run.attribution, r.prepared.program, report);
  auto table = power::default_energy_table(action_counters());
  REQUIRE(table);
  auto names = report.counter_names;
  auto values = report.counters;
  names.emplace_back(power::kHostCsrAccess);
  REQUIRE(r.run.host);
  const uint64_t csr = r.run.host->accesses();
  CHECK(csr > 2);  // setup writes, the doorbell, the STATUS read and the IRQ acknowledge at least
  values.push_back(csr);
  auto e = energy_profile(p, *table, names, values);
  REQUIRE(e);
  REQUIRE(e->layers.size() == p.layers.size());

  // The run's counts are the PMU's values (and the host's accesses).
  for (size_t i = 0; i < table->actions.size(); ++i) {
    const auto& c = table->actions[i].counter;
    INFO(c);
    CHECK(e->run.counts[i] == (c == power::kHostCsrAccess ? csr : report.counter(c)));
  }
  check_priced(e->run, *table);
  check_priced(e->rest, *table);
  for (const auto& l : e->layers) check_priced(l, *table);

  // Layers and the rest partition the run, count by count and fJ by fJ.
  uint64_t fj = e->rest.total_fj;
  for (const auto& l : e->layers) fj += l.total_fj;
  CHECK(fj == e->run.total_fj);
  for (size_t i = 0; i < table->actions.size(); ++i) {
    uint64_t n = e->rest.counts[i];
    for (const auto& l : e->layers) n += l.counts[i];
    CHECK(n == e->run.counts[i]);
  }

  // The attribution itself, not the remainder: the layers' and the tail's attributed counts
  // add up to the PMU for every counter a holder moves, and each layer retired exactly the
  // commands the program gives it.
  for (const char* c : {"spad_inp_rd", "spad_inp_wr", "spad_wgt_rd", "spad_wgt_wr", "spad_acc_rd",
                        "spad_acc_wr", "spad_out_rd", "spad_out_wr", "macs_issued", "cycles",
                        "dram_wr_bytes", "gemm.active", "load.stall_mem", "retired_gemm"}) {
    INFO(c);
    uint64_t n = scope_count(p.tail, c);
    for (const auto& l : p.layers) n += scope_count(l, c);
    CHECK(n == report.counter(c));
  }
  for (size_t li = 0; li < p.layers.size(); ++li) {
    const auto& info = r.prepared.program.layers[li];
    std::array<uint64_t, 6> expected{};  // load, gemm, post, store, sync, end
    for (uint32_t c = info.first_cmd; c <= info.last_cmd; ++c) {
      const auto op = r.prepared.program.commands[c].opcode;
      const int k = op == isa::Opcode::Load    ? 0
                    : op == isa::Opcode::Gemm  ? 1
                    : op == isa::Opcode::Post  ? 2
                    : op == isa::Opcode::Store ? 3
                    : op == isa::Opcode::Sync  ? 4
                                               : 5;
      ++expected[k];
    }
    INFO(p.layers[li].name);
    CHECK(p.layers[li].retired == expected);
    CHECK(p.layers[li].retired[1] > 0);
  }
  // Figures: power is energy over time, TOPS/W two ops per useful MAC per joule.
  CHECK(e->run.figures.watts ==
        Approx(e->run.total_fj * 1e-15 / (static_cast<double>(p.cycles) / 1e9)));
  CHECK(e->run.figures.tops_per_watt ==
        Approx(2.0 * p.model.macs_useful / (e->run.total_fj * 1e-15) / 1e12));
  CHECK(e->unpriced.empty());
}

TEST_CASE("bud profile --json has the energy, and a bad --energy-table is a located error",
          "[profile][energy][cli]") {
  using profile_test::one_object;
  using profile_test::run_bud;
  auto p = run_bud("profile gemm_small --json");
  INFO(p.err);
  REQUIRE(p.status == 0);
  auto j = one_object(p.out);
  const auto& e = j["profile"]["energy"];
  REQUIRE(e.is_object());
  uint64_t sum = e["rest"]["total_fj"].get<uint64_t>();
  for (const auto& l : e["layers"]) sum += l["total_fj"].get<uint64_t>();
  CHECK(sum == e["run"]["total_fj"].get<uint64_t>());
  CHECK(e["run"]["counts"]["macs_issued"] == j["run"]["counters"]["macs_issued"]);
  CHECK(e["table"]["name"] == "npu-45nm");

  // A table of the user's: its prices are used.
  const auto path = profile_test::scratch("table.textpb");
  profile_test::write_file(path,
                           "schema: 1\nname: \"mac-only\"\nvoltage: 0.9\nfrequency_mhz: 1000\n"
                           "action { counter: \"macs_issued\" pj: 1 component: MAC }\n");
  p = run_bud("profile gemm_small --json --energy-table " + path);
  REQUIRE(p.status == 0);
  j = one_object(p.out);
  CHECK(j["profile"]["energy"]["run"]["total_fj"].get<uint64_t>() ==
        1000 * j["run"]["counters"]["macs_issued"].get<uint64_t>());
  CHECK(j["profile"]["energy"]["unpriced"].size() > 0);  // the rest of the actions

  // Bad input: the place is named, exit 2, one JSON object.
  profile_test::write_file(path,
                           "schema: 1\nname: \"bad\"\nvoltage: 0.9\nfrequency_mhz: 1000\n"
                           "action { counter: \"macs_issued\" pj: -1 component: MAC }\n");
  p = run_bud("profile gemm_small --json --energy-table " + path);
  CHECK(p.status == 2);
  j = one_object(p.out);
  CHECK(j["error"] == "bad_input");
  CHECK(p.err.find(path + ":5:33: energy must be finite and >= 0 pJ") != std::string::npos);
  profile_test::write_file(path,
                           "schema: 1\nvoltage: 1\nfrequency_mhz: 1000\naction { counter: "
                           "\"no_such\" pj: 1 component: MAC }\n");
  p = run_bud("profile gemm_small --energy-table " + path);
  CHECK(p.status == 2);
  CHECK(p.err.find(path + ":4:10: 'no_such' is not a counter") != std::string::npos);
  p = run_bud("profile gemm_small --energy-table /no/such/table.textpb");
  CHECK(p.status == 2);
  CHECK(p.err.find("/no/such/table.textpb: cannot open") != std::string::npos);
  std::remove(path.c_str());
}

TEST_CASE("bud profile --dvfs: cycles follow the DRAM's ns timing, output deterministic",
          "[profile][energy][dvfs][cli]") {
  using profile_test::one_object;
  using profile_test::run_bud;
  auto sweep = [&](const std::string& w) {
    auto p = run_bud("profile " + w + " --dvfs --json");
    INFO(p.err);
    REQUIRE(p.status == 0);
    auto again = run_bud("profile " + w + " --dvfs --json");
    CHECK(again.out == p.out);  // deterministic
    return one_object(p.out)["dvfs"];
  };
  const auto mem = sweep("mem_bound");
  const auto cmp = sweep("compute_bound");
  REQUIRE(mem["points"].size() == 4);
  auto point = [](const nlohmann::json& s, const std::string& name) {
    for (const auto& p : s["points"])
      if (p["name"] == name) return p;
    FAIL("no point " << name);
    return nlohmann::json();
  };
  // 40 ns at 500 MHz is 20 cycles, at 1.2 GHz 48; 16 GB/s is 32 then 13 B/cycle.
  CHECK(point(mem, "low")["dram"]["latency_cycles"] == 20);
  CHECK(point(mem, "turbo")["dram"]["latency_cycles"] == 48);
  CHECK(point(mem, "turbo")["dram"]["bytes_per_cycle"] == 13);
  const double mem_cycles =
      point(mem, "turbo")["cycles"].get<double>() / point(mem, "low")["cycles"].get<double>();
  const double cmp_cycles =
      point(cmp, "turbo")["cycles"].get<double>() / point(cmp, "low")["cycles"].get<double>();
  // Memory-bound: most of the 2.4x clock is spent waiting more cycles for the same DRAM.
  CHECK(mem_cycles > 1.6);
  CHECK(point(mem, "low")["seconds"].get<double>() / point(mem, "turbo")["seconds"].get<double>() <
        1.5);
  // Compute-bound: the cycles hardly move, so time scales with the clock.
  CHECK(cmp_cycles < 1.02);
  CHECK(point(cmp, "low")["seconds"].get<double>() / point(cmp, "turbo")["seconds"].get<double>() ==
        Approx(2.4).epsilon(0.03));
  for (const auto& p : mem["points"]) CHECK(p["passed"] == true);
}

TEST_CASE("bud profile --dvfs flags a point another beats in time and energy",
          "[profile][energy][dvfs][cli]") {
  const auto path = profile_test::scratch("points.textpb");
  // "hot" runs at the nominal clock with a higher supply: as fast, more energy per inference.
  profile_test::write_file(
      path,
      "schema: 1\nname: \"t\"\nvoltage: 0.9\nfrequency_mhz: 1000\n"
      "action { counter: \"macs_issued\" pj: 0.3 component: MAC }\n"
      "action { counter: \"gemm.active\" pj: 8 component: STATIC }\n"
      "operating_point { name: \"slow\" frequency_mhz: 500 voltage: 0.9 }\n"
      "operating_point { name: \"nominal\" frequency_mhz: 1000 voltage: 0.9 }\n"
      "operating_point { name: \"hot\" frequency_mhz: 1000 voltage: 1.0 }\n");
  auto p = profile_test::run_bud("profile gemm_small --dvfs --json --energy-table " + path);
  INFO(p.err);
  REQUIRE(p.status == 0);
  const auto j = profile_test::one_object(p.out)["dvfs"];
  CHECK(j["scaled_dram"] == false);
  REQUIRE(j["points"].size() == 3);
  // No DRAM timing in the table: cycles are the same at every point.
  CHECK(j["points"][0]["cycles"] == j["points"][1]["cycles"]);
  CHECK(j["points"][2]["inefficient"] ==
        "'nominal' is as fast and costs less energy per inference");
  CHECK(j["points"][1]["inefficient"].is_null());
  // slow: dynamic energy equal, static energy per cycle at V, f/2 doubles the static share: it
  // costs more and is slower than nominal.
  CHECK(j["points"][0]["inefficient"] == "'nominal' is faster and costs less energy per inference");
  auto bad = profile_test::run_bud("profile gemm_small --dvfs --mem-latency 10");
  CHECK(bad.status == 2);
  CHECK(bad.err.find("--mem-latency does not apply") != std::string::npos);
  std::remove(path.c_str());
}
