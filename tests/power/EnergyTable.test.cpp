#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "emu/isa/Isa.h"
#include "tests/power/PowerTestSupport.h"
#include "power/EnergyAccount.h"
#include "power/EnergyTable.h"

using namespace bud::power;

namespace {

using test::npu_counters;

std::string error_of(const std::string& text) {
  auto t = parse_energy_table(text, "t.textpb", npu_counters());
  return t.ok() ? std::string() : t.error();
}

const std::string kHeader = "schema: 1\nname: \"t\"\nvoltage: 0.9\nfrequency_mhz: 500\n";

}  // namespace

TEST_CASE("the default energy table prices every action counter of the NPU", "[power]") {
  const auto names = npu_counters();
  auto t = default_energy_table(names);
  REQUIRE(t.ok());
  CHECK(t->technology == "45 nm");
  std::vector<uint64_t> ones(names.size(), 1);
  auto a = account(t.value(), names, ones);
  REQUIRE(a.ok());
  CHECK(a->unpriced.empty());  // a counter added to the PMU must be priced (or declared derived)
  for (const auto& p : t->actions) CHECK(!p.source.empty());
}

TEST_CASE("an energy account is the exact sum of count x energy per action", "[power]") {
  auto t = parse_energy_table(kHeader +
                                  "action { counter: \"macs_issued\" pj: 0.3 component: MAC }\n"
                                  "action { counter: \"spad_wgt_rd\" pj: 80 component: SCRATCHPAD }\n"
                                  "action { counter: \"dram_rd_bytes\" pj: 162.5 component: DRAM }\n"
                                  "action { counter: \"gemm.active\" pj: 8 component: STATIC }\n"
                                  "action { counter: \"host.csr_access\" pj: 50 component: HOST }\n",
                              "t.textpb", npu_counters());
  REQUIRE(t.ok());
  const std::vector<std::string> names = {"macs_issued", "spad_wgt_rd", "dram_rd_bytes",
                                          "gemm.active", "macs_useful", "spad_inp_rd",
                                          "host.csr_access"};
  const std::vector<uint64_t> values = {16777216, 262144, 1048576, 274534, 16777216, 7, 33};
  auto a = account(t.value(), names, values);
  REQUIRE(a.ok());
  const uint64_t want_mac = 16777216ull * 300, want_spad = 262144ull * 80000,
                 want_dram = 1048576ull * 162500, want_static = 274534ull * 8000,
                 want_host = 33ull * 50000;
  CHECK(a->by_component[static_cast<int>(Component::Mac)] == want_mac);
  CHECK(a->by_component[static_cast<int>(Component::Scratchpad)] == want_spad);
  CHECK(a->by_component[static_cast<int>(Component::Dram)] == want_dram);
  CHECK(a->by_component[static_cast<int>(Component::Static)] == want_static);
  CHECK(a->by_component[static_cast<int>(Component::Host)] == want_host);
  CHECK(a->total_fj == want_mac + want_spad + want_dram + want_static + want_host);
  REQUIRE(a->lines.size() == 5);
  CHECK(a->lines[2].count == 1048576);
  // spad_inp_rd counts an action the table leaves out; macs_useful is derived, not an action.
  CHECK(a->unpriced == std::vector<std::string>{"spad_inp_rd"});
  const PowerFigures f = figures(a.value(), t.value(), 274534, 16777216);
  CHECK(f.seconds == Approx(274534 / 500e6));
  CHECK(f.watts == Approx(a->joules() / f.seconds));
  CHECK(f.tops_per_watt == Approx(2.0 * 16777216 / a->joules() / 1e12));
}

TEST_CASE("bad energy tables are refused with the place named", "[power]") {
  CHECK(error_of("schema: 1\nvoltage: [") .rfind("t.textpb:2:", 0) == 0);
  CHECK(error_of("name: \"x\"\n") == "t.textpb:1:1: missing `schema` (this bud reads energy table schema 1)");
  CHECK(error_of("schema: 2\n").find("t.textpb:1:1: energy table schema 2 is newer") == 0);
  CHECK(error_of("schema: 1\nvoltage: 0\n").find("t.textpb:2:1: `voltage` must be > 0") == 0);
  CHECK(error_of(kHeader + "action { counter: \"spad_foo_rd\" pj: 1 component: DRAM }\n")
            .find("t.textpb:5:10: 'spad_foo_rd' is not a counter of this design") == 0);
  CHECK(error_of(kHeader + "action { counter: \"cycles\" pj: 1 component: BACKGROUND }\n" +
                 "action { counter: \"cycles\" pj: 2 component: BACKGROUND }\n")
            .find("t.textpb:6:10: 'cycles' is priced twice") == 0);
  CHECK(error_of(kHeader + "action { counter: \"cycles\" pj: -1 component: BACKGROUND }\n")
            .find("t.textpb:5:28: energy must be finite and >= 0 pJ") == 0);
  CHECK(error_of(kHeader + "action { counter: \"cycles\" pj: 0.0001 component: BACKGROUND }\n")
            .find("is finer than 1 fJ") != std::string::npos);
  CHECK(error_of(kHeader + "action { counter: \"cycles\" pj: 1 }\n")
            .find("t.textpb:5:1: action without a `component`") == 0);
  CHECK(error_of(kHeader).find("prices no action") != std::string::npos);
}

TEST_CASE("an energy sum that would overflow is an error, not a wrapped number", "[power]") {
  auto t = parse_energy_table(kHeader + "action { counter: \"cycles\" pj: 1000000 component: BACKGROUND }\n",
                              "t.textpb", npu_counters());
  REQUIRE(t.ok());
  auto a = account(t.value(), {"cycles"}, {uint64_t{1} << 60});
  REQUIRE(!a.ok());
  CHECK(a.error().find("overflows 64 bits") != std::string::npos);
}
