#include "power/Dvfs.h"

#include <catch2/catch.hpp>

#include "emu/isa/Isa.h"
#include "tests/power/PowerTestSupport.h"

using namespace bud::power;

namespace {

using test::npu_counters;

uint64_t fj_of(const EnergyTable& t, const std::string& counter) {
  for (const auto& a : t.actions)
    if (a.counter == counter) return a.fj;
  FAIL("no action " << counter);
  return 0;
}

}  // namespace

TEST_CASE("energies follow the operating point: dynamic V^2, static V/f, background 1/f",
          "[power][dvfs]") {
  auto t = default_energy_table(npu_counters());
  REQUIRE(t.ok());
  REQUIRE(t->point("nominal"));
  const OperatingPoint* low = t->point("low");  // 500 MHz, 0.7 V against 1000 MHz, 0.9 V
  REQUIRE(low);
  const EnergyTable l = at_point(t.value(), *low);
  const double v = 0.7 / 0.9;
  CHECK(fj_of(l, "macs_issued") == static_cast<uint64_t>(std::llround(300 * v * v)));
  CHECK(fj_of(l, "dram_rd_bytes") == static_cast<uint64_t>(std::llround(162500 * v * v)));
  CHECK(fj_of(l, "gemm.active") == static_cast<uint64_t>(std::llround(8000 * v * 2.0)));
  CHECK(fj_of(l, "cycles") == 200000u);  // DRAM standby: twice the energy per (twice as long) cycle
  CHECK(l.frequency_mhz == 500);
  // The nominal point is the table itself.
  const EnergyTable n = at_point(t.value(), *t->point("nominal"));
  for (size_t i = 0; i < n.actions.size(); ++i) CHECK(n.actions[i].fj == t->actions[i].fj);
}

TEST_CASE("DRAM timing in ns becomes more cycles at a faster clock", "[power][dvfs]") {
  const DramTiming timing{40, 8, 16};
  const bud::emu::DramConfig base;
  const auto at1000 = dram_at(base, timing, 1000);
  CHECK(at1000.base_latency == 40);
  CHECK(at1000.jitter == 8);
  CHECK(at1000.bytes_per_cycle == 16);
  const auto at500 = dram_at(base, timing, 500);
  CHECK(at500.base_latency == 20);
  CHECK(at500.jitter == 4);
  CHECK(at500.bytes_per_cycle == 32);
  const auto at1200 = dram_at(base, timing, 1200);
  CHECK(at1200.base_latency == 48);
  CHECK(at1200.bytes_per_cycle == 13);  // 13.33 bytes per cycle, rounded down
  CHECK(at1200.validate().empty());
  CHECK(at1200.size_bytes == base.size_bytes);
}

TEST_CASE("operating points are checked", "[power][dvfs]") {
  const std::string head = "schema: 1\nvoltage: 0.9\nfrequency_mhz: 1000\n"
                           "action { counter: \"cycles\" pj: 1 component: BACKGROUND }\n";
  auto parse = [&](const std::string& more) {
    auto t = parse_energy_table(head + more, "p.textpb", npu_counters());
    return t.ok() ? std::string() : t.error();
  };
  CHECK(parse("operating_point { name: \"a\" frequency_mhz: 0 voltage: 1 }\n")
            .find("p.textpb:5:29: `frequency_mhz` must be > 0") == 0);
  CHECK(parse("operating_point { name: \"a\" frequency_mhz: 1 voltage: 1 }\n"
              "operating_point { name: \"a\" frequency_mhz: 2 voltage: 1 }\n")
            .find("p.textpb:6:19: operating point 'a' is listed twice") == 0);
  CHECK(parse("operating_point { name: \"nominal\" frequency_mhz: 2 voltage: 1 }\n")
            .find("differs from the table's own") != std::string::npos);
  CHECK(parse("dram_timing { latency_ns: 0 }\n").find("p.textpb:5:1: `dram_timing` needs") == 0);
  auto t = parse_energy_table(head, "p.textpb", npu_counters());
  REQUIRE(t.ok());
  REQUIRE(t->points.size() == 1);  // the table's own point, added as "nominal"
  CHECK(t->points[0].name == "nominal");
  CHECK(!t->dram_timing);
}
